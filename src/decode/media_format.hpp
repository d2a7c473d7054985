#pragma once
// The media formats mmprof reads, in one table (media_format.cpp): per format its name, modality,
// file extensions, magic-byte signatures, decoding backend and FFmpeg codec. The dataset index
// takes a file as a sample by its extension (data/dataset.cpp); ImageDecoder picks a decoder by
// sniffing the bytes, never by the file name (a PNG saved as .jpg decodes as PNG); the FFmpeg
// image path finds its libavcodec decoder from the codec column; error messages list the formats
// and extensions from here. These rows are exactly the formats mmprof reads: image data no
// signature matches is refused (FFmpeg's other image demuxers, EXR, JPEG XL, PGM, ..., are never
// tried), and video containers are probed by libavformat among the demuxers of the video rows
// only.
//
// Adding a format: add one row to kFormats in src/decode/media_format.cpp (its extensions, lower
// case without the dot, the first being the one error messages list, and its signatures go in
// arrays just above the table); in tests/unit/media_format_test.cpp, whose exact checks fail until
// they match, add the row to the expected rows, its extensions to kExtensions, a sniff check per
// signature and its name and first extension to the listed texts. Rows are sniffed in table order,
// so a format with a short signature goes after those it could shadow. An image format that
// libavcodec decodes (backend ffmpeg_image; ffmpeg_codec = libavcodec's codec name, as
// `ffmpeg -codecs` lists it) and a video container (backend ffmpeg_video, no signatures, no codec,
// ffmpeg_demuxer = libavformat's demuxer, as `ffmpeg -demuxers` lists it) need nothing else. Only
// an image format that needs a new backend also adds a DecodeBackend value here, its decoder file
// in src/decode/ (listed in src/decode/CMakeLists.txt and tests/fuzz/CMakeLists.txt) and its branch
// in ImageDecoder::probe and ImageDecoder::decode (src/decode/image_decoder.cpp).
//
// Nothing here names an FFmpeg type: only decode's .cpp files include libav headers.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "mmprof/modality.hpp"

namespace mmprof {

// Which decoder reads a format's bytes.
enum class DecodeBackend : uint8_t {
  libjpeg_turbo,  // decode/jpeg_decoder.cpp, with DCT-domain downscaling
  ffmpeg_image,   // decode/av_image_decoder.cpp: the libavcodec decoder named by ffmpeg_codec
  ffmpeg_video,   // decode/video_decoder.cpp: libavformat demuxes, the stream's codec decodes
};

// `bytes` at byte `offset` of the data.
struct MagicBytes {
  size_t offset = 0;
  std::string_view bytes;
};

// One way data of a format begins: `magic` matches, `also` matches when it is set, and the data
// holds at least min_size bytes.
struct Signature {
  MagicBytes magic;
  MagicBytes also{};    // a second part, e.g. WebP's "WEBP" at 8 after "RIFF" at 0
  size_t min_size = 0;  // e.g. 26 for BMP: its file header plus the smallest info header

  bool matches(std::span<const uint8_t> data) const noexcept;
};

struct MediaFormat {
  std::string_view name;          // "jpeg": ImageInfo::format, decoders' error messages
  std::string_view display_name;  // "JPEG": the formats listed in error messages
  Modality modality;
  std::span<const std::string_view> extensions;  // lower case, no dot; [0] is the one listed
  std::span<const Signature> signatures;         // any one identifies the format; none: probed
  DecodeBackend backend;
  // libavcodec's codec name (AVCodecDescriptor::name, "png") for the FFmpeg image decoder; also
  // set for JPEG, which AvImageDecoder can decode too. "" for video (the stream says).
  std::string_view ffmpeg_codec;
  // For video: the libavformat demuxer that reads the container ("mov" reads MP4 and QuickTime).
  // Only these demuxers are allowed to probe a clip, so a file in any other container (MPEG-TS,
  // an HLS or concat playlist naming other files, an image sequence) is refused, never opened.
  std::string_view ffmpeg_demuxer = "";
};

// Every row, images first, in sniffing order.
std::span<const MediaFormat> media_formats() noexcept;

// The row whose extensions hold `ext` (lower case, no dot: "jpg"), or nullptr.
const MediaFormat* format_for_extension(std::string_view ext) noexcept;
// The row named `name` ("jpeg", "png", "mp4", ...), or nullptr.
const MediaFormat* format_named(std::string_view name) noexcept;
// The first row with a signature that `data` matches, or nullptr (no row claims the data).
const MediaFormat* sniff_format(std::span<const uint8_t> data) noexcept;

// The display names of one modality's rows joined with `separator`: "JPEG/PNG/WebP/GIF/TIFF/BMP".
std::string listed_formats(Modality modality, std::string_view separator);
// Each row's first extension, joined with ", ": "jpg, png, webp, gif, tiff, bmp, mp4, ...".
std::string listed_extensions();
// The video rows' demuxers, each once, for libavformat's format_whitelist: "mov,matroska,avi".
std::string video_demuxers();

}  // namespace mmprof
