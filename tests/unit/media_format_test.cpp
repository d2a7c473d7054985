// The media-format table (decode/media_format.hpp): every extension, signature and codec by exact
// value, unknown inputs, the lists error messages print, and what the dataset index and the image
// decoder take from the table.
#include "decode/media_format.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "decode/av_image_decoder.hpp"
#include "decode/decode_error.hpp"
#include "decode/image_decoder.hpp"
#include "mmprof/dataset.hpp"
#include "mmprof/error.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

using namespace std::string_view_literals;

std::vector<uint8_t> bytes_of(std::string_view s, size_t pad_to = 0) {
  std::vector<uint8_t> out(s.begin(), s.end());
  if (out.size() < pad_to) out.resize(pad_to, 0);
  return out;
}

std::string sniffed(std::span<const uint8_t> data) {
  const MediaFormat* f = sniff_format(data);
  return f != nullptr ? std::string(f->name) : "(none)";
}

// The 24x16 seeds of the image fuzzer (tests/fuzz/corpus/image_probe) and their formats.
constexpr std::pair<const char*, const char*> kSeeds[] = {
    {"seed.jpg", "jpeg"}, {"seed.png", "png"},  {"seed.webp", "webp"},
    {"seed.gif", "gif"},  {"seed.tif", "tiff"}, {"seed.bmp", "bmp"},
};

struct ExpectedExtension {
  std::string_view ext, format;
  Modality modality;
};

constexpr ExpectedExtension kExtensions[] = {
    {"jpg", "jpeg", Modality::image},  {"jpeg", "jpeg", Modality::image},
    {"png", "png", Modality::image},   {"apng", "png", Modality::image},
    {"webp", "webp", Modality::image}, {"gif", "gif", Modality::image},
    {"tiff", "tiff", Modality::image}, {"tif", "tiff", Modality::image},
    {"bmp", "bmp", Modality::image},   {"mp4", "mp4", Modality::video},
    {"m4v", "mp4", Modality::video},   {"mkv", "mkv", Modality::video},
    {"webm", "webm", Modality::video}, {"mov", "mov", Modality::video},
    {"avi", "avi", Modality::video},
};

TEST(MediaFormatTest, EveryExtensionMapsToItsRowAndModality) {
  for (const auto& e : kExtensions) {
    SCOPED_TRACE(std::string(e.ext));
    const MediaFormat* f = format_for_extension(e.ext);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->name, e.format);
    EXPECT_EQ(f->modality, e.modality);
    EXPECT_EQ(format_named(e.format), f);
  }
  // ...and the table holds no other extension.
  std::vector<std::string_view> table, expected;
  for (const MediaFormat& f : media_formats())
    table.insert(table.end(), f.extensions.begin(), f.extensions.end());
  for (const auto& e : kExtensions)
    expected.push_back(e.ext);
  std::ranges::sort(table);
  std::ranges::sort(expected);
  EXPECT_EQ(table, expected);
}

TEST(MediaFormatTest, RowsInOrderWithTheirBackendsAndCodecs) {
  struct Row {
    std::string_view name, display;
    Modality modality;
    DecodeBackend backend;
    std::string_view codec, demuxer = "";
  };
  const Row expected[] = {
      {"jpeg", "JPEG", Modality::image, DecodeBackend::libjpeg_turbo, "mjpeg"},
      {"png", "PNG", Modality::image, DecodeBackend::ffmpeg_image, "png"},
      {"webp", "WebP", Modality::image, DecodeBackend::ffmpeg_image, "webp"},
      {"gif", "GIF", Modality::image, DecodeBackend::ffmpeg_image, "gif"},
      {"tiff", "TIFF", Modality::image, DecodeBackend::ffmpeg_image, "tiff"},
      {"bmp", "BMP", Modality::image, DecodeBackend::ffmpeg_image, "bmp"},
      {"mp4", "MP4", Modality::video, DecodeBackend::ffmpeg_video, "", "mov"},
      {"mkv", "Matroska", Modality::video, DecodeBackend::ffmpeg_video, "", "matroska"},
      {"webm", "WebM", Modality::video, DecodeBackend::ffmpeg_video, "", "matroska"},
      {"mov", "QuickTime", Modality::video, DecodeBackend::ffmpeg_video, "", "mov"},
      {"avi", "AVI", Modality::video, DecodeBackend::ffmpeg_video, "", "avi"},
  };
  const auto rows = media_formats();
  ASSERT_EQ(rows.size(), std::size(expected));
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(std::string(expected[i].name));
    EXPECT_EQ(rows[i].name, expected[i].name);
    EXPECT_EQ(rows[i].display_name, expected[i].display);
    EXPECT_EQ(rows[i].modality, expected[i].modality);
    EXPECT_EQ(rows[i].backend, expected[i].backend);
    EXPECT_EQ(rows[i].ffmpeg_codec, expected[i].codec);
    EXPECT_EQ(rows[i].ffmpeg_demuxer, expected[i].demuxer);
  }
  EXPECT_EQ(video_demuxers(), "mov,matroska,avi");
}

TEST(MediaFormatTest, UnknownExtensionsAndNames) {
  for (const std::string_view ext : {""sv, "txt"sv, "tar"sv, "json"sv, "JPG"sv, ".jpg"sv, "jp"sv,
                                     "jpgx"sv, "mpeg"sv, "h264"sv, "heic"sv}) {
    EXPECT_EQ(format_for_extension(ext), nullptr) << ext;
  }
  EXPECT_EQ(format_named("jpg"), nullptr);  // a name, not an extension
  EXPECT_EQ(format_named("mjpeg"), nullptr);
  EXPECT_EQ(format_named(""), nullptr);
}

TEST(MediaFormatTest, SniffsEverySignature) {
  EXPECT_EQ(sniffed(bytes_of("\xFF\xD8\xFF\xE0"sv)), "jpeg");
  EXPECT_EQ(sniffed(bytes_of("\xFF\xD8\xFF"sv)), "jpeg");
  EXPECT_EQ(sniffed(bytes_of("\x89PNG\r\n\x1A\n"sv)), "png");
  EXPECT_EQ(sniffed(bytes_of("RIFF\x10\0\0\0WEBPVP8 "sv)), "webp");
  EXPECT_EQ(sniffed(bytes_of("GIF87a"sv)), "gif");
  EXPECT_EQ(sniffed(bytes_of("GIF89a\x01\0"sv)), "gif");
  EXPECT_EQ(sniffed(bytes_of("II*\0"sv)), "tiff");
  EXPECT_EQ(sniffed(bytes_of("MM\0*"sv)), "tiff");
  EXPECT_EQ(sniffed(bytes_of("BM"sv, 26)), "bmp");
  // The fuzzer's real files, by their content.
  const auto corpus = test::source_dir() / "tests/fuzz/corpus/image_probe";
  for (const auto& [file, format] : kSeeds) {
    EXPECT_EQ(sniffed(test::read_bytes(corpus / file)), format) << file;
  }
  EXPECT_EQ(sniffed(test::read_bytes(corpus / "no-sos.jpg")), "jpeg");
}

TEST(MediaFormatTest, UnknownOrShortBytesSniffAsNothing) {
  EXPECT_EQ(sniffed({}), "(none)");
  EXPECT_EQ(sniffed(bytes_of("\xFF\xD8"sv)), "(none)");                // JPEG cut short
  EXPECT_EQ(sniffed(bytes_of("\x89PNG\r\n\x1A"sv)), "(none)");         // PNG cut short
  EXPECT_EQ(sniffed(bytes_of("RIFF\x10\0\0\0AVI LIST"sv)), "(none)");  // RIFF, but AVI
  EXPECT_EQ(sniffed(bytes_of("RIFF\x10\0\0\0WEB"sv)), "(none)");
  EXPECT_EQ(sniffed(bytes_of("GIF88a"sv)), "(none)");
  EXPECT_EQ(sniffed(bytes_of("II\0*"sv)), "(none)");
  EXPECT_EQ(sniffed(bytes_of("BM"sv, 25)), "(none)");  // shorter than any BMP header
  EXPECT_EQ(sniffed(bytes_of("hello world"sv)), "(none)");
  // Video containers carry no signature: libavformat probes them.
  EXPECT_EQ(sniffed(bytes_of("\0\0\0\x20"
                             "ftypisom"sv)),
            "(none)");
  EXPECT_EQ(sniffed(bytes_of("\x1A\x45\xDF\xA3"sv, 64)), "(none)");
}

TEST(MediaFormatTest, ListsForErrorMessages) {
  EXPECT_EQ(listed_formats(Modality::image, "/"), "JPEG/PNG/WebP/GIF/TIFF/BMP");
  EXPECT_EQ(listed_formats(Modality::video, ", "), "MP4, Matroska, WebM, QuickTime, AVI");
  EXPECT_EQ(listed_extensions(), "jpg, png, webp, gif, tiff, bmp, mp4, mkv, webm, mov, avi");
}

TEST(MediaFormatTest, RowsAreConsistent) {
  std::set<std::string_view> names, extensions;
  for (const MediaFormat& f : media_formats()) {
    SCOPED_TRACE(std::string(f.name));
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate name";
    EXPECT_FALSE(f.display_name.empty());
    ASSERT_FALSE(f.extensions.empty());
    for (const std::string_view ext : f.extensions) {
      EXPECT_TRUE(extensions.insert(ext).second) << "extension in two rows: " << ext;
      EXPECT_FALSE(ext.empty());
      EXPECT_TRUE(std::ranges::none_of(ext, [](char c) {
        return (c >= 'A' && c <= 'Z') || c == '.';
      })) << ext;
    }
    for (const Signature& s : f.signatures) {
      EXPECT_FALSE(s.magic.bytes.empty());
    }
    if (f.modality == Modality::image) {
      // Every image row is sniffable, and its codec is one the FFmpeg image decoder knows.
      EXPECT_FALSE(f.signatures.empty());
      EXPECT_NE(f.backend, DecodeBackend::ffmpeg_video);
      EXPECT_TRUE(detail::AvImageDecoder::has_decoder(f.name)) << f.ffmpeg_codec;
    } else {
      EXPECT_TRUE(f.signatures.empty());
      EXPECT_EQ(f.backend, DecodeBackend::ffmpeg_video);
      EXPECT_TRUE(f.ffmpeg_codec.empty());
      EXPECT_FALSE(detail::AvImageDecoder::has_decoder(f.name));
    }
  }
  EXPECT_FALSE(detail::AvImageDecoder::has_decoder("qoi"));  // not in the table
  EXPECT_FALSE(detail::AvImageDecoder::has_decoder(""));
}

TEST(MediaFormatTest, ImageDecoderNamesTheTableFormats) {
  ImageDecoder decoder;
  const auto garbage = bytes_of("hello world!"sv);
  try {
    decoder.probe(garbage);
    FAIL() << "probe accepted text";
  } catch (const DecodeError& e) {
    EXPECT_STREQ(e.what(),
                 "not a JPEG/PNG/WebP/GIF/TIFF/BMP image (first bytes 68 65 6C 6C 6F 20 77 6F)");
  }
  const auto corpus = test::source_dir() / "tests/fuzz/corpus/image_probe";
  for (const auto& [file, format] : kSeeds) {
    const ImageInfo info = decoder.probe(test::read_bytes(corpus / file));
    EXPECT_EQ(info.format, format) << file;
    EXPECT_EQ(info.width, 24) << file;
    EXPECT_EQ(info.height, 16) << file;
  }
}

// Exactly the table's formats are read: data FFmpeg has some image demuxer for (PGM text and
// binary PPM here, EXR or JPEG XL elsewhere) is refused like any non-image (before: decoded
// through libavformat's image probe).
TEST(MediaFormatTest, FormatsOutsideTheTableAreRefused) {
  ImageDecoder decoder;
  RgbImage img;
  std::string ppm = "P6\n2 2\n255\n";
  ppm.append(12, '\x80');
  for (const std::string& data : {std::string("P2\n2 2\n255\n0 64 128 255\n"), ppm}) {
    const auto bytes = bytes_of(data);
    try {
      decoder.decode(bytes, {}, 0, DctScaling::off, img);
      FAIL() << "decoded " << data.substr(0, 2);
    } catch (const DecodeError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("not a JPEG/PNG/WebP/GIF/TIFF/BMP image", 0), 0u)
          << e.what();
    }
    EXPECT_THROW(decoder.probe(bytes), DecodeError);
  }
}

TEST(MediaFormatTest, DatasetTakesSamplesByTheTableExtensions) {
  test::TempDir dir;
  for (const char* name : {"a.tif", "b.M4V", "c.jpeg", "c.txt", "d.xyz", "e.txt", "f.heic"})
    std::ofstream(dir.path() / name) << "x";
  const Dataset ds = Dataset::open(dir.path(), Layout::files);
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds.samples()[0].key, "a");
  EXPECT_EQ(ds.samples()[0].ext, "tif");
  EXPECT_EQ(ds.samples()[0].modality, Modality::image);
  EXPECT_EQ(ds.samples()[1].key, "b");
  EXPECT_EQ(ds.samples()[1].ext, "m4v");
  EXPECT_EQ(ds.samples()[1].modality, Modality::video);
  EXPECT_EQ(ds.samples()[2].key, "c");
  EXPECT_EQ(ds.samples()[2].ext, "jpeg");
  EXPECT_TRUE(ds.samples()[2].has_caption);

  test::TempDir empty;
  std::ofstream(empty.path() / "notes.txt") << "x";
  try {
    Dataset::open(empty.path(), Layout::files);
    FAIL() << "a dataset of no samples opened";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "dataset " + empty.path().string() +
                  " holds no image or video samples (extensions: jpg, png, webp, gif, tiff, bmp, "
                  "mp4, mkv, webm, mov, avi)");
  }
}

}  // namespace
}  // namespace mmprof
