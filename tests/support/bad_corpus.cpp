#include "support/bad_corpus.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "gen/video_encode.hpp"
#include "support/test_support.hpp"

namespace mmprof::test {
namespace fs = std::filesystem;

namespace {

fs::path first_with(const fs::path& dir, const char* ext) {
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ext) found.push_back(e.path());
  }
  if (found.empty()) throw std::runtime_error("no " + std::string(ext) + " in " + dir.string());
  return *std::min_element(found.begin(), found.end());
}

size_t find(const std::vector<uint8_t>& bytes, std::string_view what, size_t from = 0) {
  const auto it =
      std::search(bytes.begin() + static_cast<long>(from), bytes.end(), what.begin(), what.end());
  if (it == bytes.end()) throw std::runtime_error("corpus source lacks " + std::string(what));
  return static_cast<size_t>(it - bytes.begin());
}

std::vector<uint8_t> text(std::string_view s) {
  return {s.begin(), s.end()};
}

std::vector<uint8_t> zero_frame_mp4() {
  gen::VideoParams p;
  p.width = 64;
  p.height = 64;
  p.frames = 0;
  std::vector<uint8_t> out;
  gen::encode_mp4(
      p, VideoCodec::h264, [](int, const gen::YuvView&) {}, out);
  return out;
}

void write_sample(const fs::path& dir, const std::string& key, const std::string& ext,
                  const std::vector<uint8_t>& media, const std::string& caption = "a caption") {
  write_bytes(dir / (key + "." + ext), media);
  write_bytes(dir / (key + ".txt"), text(caption));
}

}  // namespace

std::vector<uint8_t> jpeg_claiming_size(std::vector<uint8_t> jpeg, uint16_t width,
                                        uint16_t height) {
  // Walks the marker segments after SOI to the frame header (any SOFn: C0-CF but DHT C4, JPG C8,
  // DAC CC): marker (2), length (2), precision (1), height (2), width (2), big-endian.
  for (size_t at = 2; at + 9 < jpeg.size() && jpeg[at] == 0xFF;) {
    const uint8_t m = jpeg[at + 1];
    if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
      jpeg[at + 5] = static_cast<uint8_t>(height >> 8);
      jpeg[at + 6] = static_cast<uint8_t>(height & 0xFF);
      jpeg[at + 7] = static_cast<uint8_t>(width >> 8);
      jpeg[at + 8] = static_cast<uint8_t>(width & 0xFF);
      return jpeg;
    }
    at += 2 + (size_t{jpeg[at + 2]} << 8 | jpeg[at + 3]);
  }
  throw std::runtime_error("no JPEG frame header (SOFn) found");
}

std::vector<uint8_t> png_with_bad_crc(std::vector<uint8_t> png) {
  png.at(29) ^= 0xFF;  // IHDR's CRC: signature 8 + length 4 + "IHDR" 4 + 13 data bytes
  return png;
}

std::vector<uint8_t> ustar_header(const std::string& name, uint64_t size, char typeflag,
                                  const std::string& link) {
  std::vector<uint8_t> h(512, 0);
  auto put = [&](size_t at, size_t width, const std::string& s) {
    std::memcpy(h.data() + at, s.data(), std::min(width, s.size()));
  };
  auto octal = [&](size_t at, size_t width, uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%0*llo", static_cast<int>(width - 1),
                  static_cast<unsigned long long>(v));
    put(at, width - 1, buf);
  };
  put(0, 100, name);
  octal(100, 8, 0644);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, size);
  octal(136, 12, 1700000000);
  h[156] = static_cast<uint8_t>(typeflag);
  put(157, 100, link);
  put(257, 6, std::string("ustar", 6));
  put(263, 2, "00");
  std::memset(h.data() + 148, ' ', 8);  // the checksum counts its own field as spaces
  unsigned sum = 0;
  for (uint8_t b : h)
    sum += b;
  octal(148, 7, sum);
  return h;
}

void append_tar_member(std::vector<uint8_t>& tar, const std::string& name,
                       const std::vector<uint8_t>& data, char typeflag, const std::string& link) {
  const auto h = ustar_header(name, data.size(), typeflag, link);
  tar.insert(tar.end(), h.begin(), h.end());
  tar.insert(tar.end(), data.begin(), data.end());
  tar.resize((tar.size() + 511) / 512 * 512, 0);
}

void end_tar(std::vector<uint8_t>& tar) {
  tar.resize(tar.size() + 1024, 0);
}

BadCorpus make_bad_corpus(const fs::path& good, const fs::path& out) {
  BadCorpus c;
  c.files = out / "files";
  c.shards = out / "shards";
  fs::create_directories(c.files);
  fs::create_directories(c.shards);
  const auto jpeg = read_bytes(first_with(good, ".jpg"));
  const auto png = read_bytes(first_with(good, ".png"));
  const auto mp4 = read_bytes(first_with(good, ".mp4"));

  // Good samples, a JPEG under a .png name among them: the format comes from the bytes.
  write_sample(c.files, "good-a", "jpg", jpeg);
  write_sample(c.files, "good-b", "png", png);
  write_sample(c.files, "good-c", "mp4", mp4);
  write_sample(c.files, "good-jpeg-named-png", "png", jpeg);
  c.files_good = 4;

  auto bad = [&](const std::string& key, const std::string& ext, const std::vector<uint8_t>& media,
                 const std::string& stage, const std::string& caption = "a caption") {
    write_sample(c.files, key, ext, media, caption);
    c.files_bad[key] = stage;
  };
  bad("bad-truncated-jpeg", "jpg",
      {jpeg.begin(), jpeg.begin() + static_cast<long>(jpeg.size() / 2)}, "decode");
  // 65500 x 65500: 4.29 gigapixels, 12.9 GB as RGB.
  bad("bad-huge-header-jpeg", "jpg", jpeg_claiming_size(jpeg, 65500, 65500), "decode");
  bad("bad-zero-bytes", "jpg", {}, "read");
  bad("bad-mp4-named-jpg", "jpg", mp4, "decode");
  bad("bad-png-crc", "png", png_with_bad_crc(png), "decode");
  auto no_moov = mp4;
  // An unknown box type is skipped; "free" would not do (FFmpeg looks for a moov inside it).
  std::memcpy(no_moov.data() + find(no_moov, "moov"), "junk", 4);
  bad("bad-mp4-no-moov", "mp4", no_moov, "decode");
  bad("bad-zero-frames", "mp4", zero_frame_mp4(), "decode");
  auto codec = mp4;
  // The sample entry in stsd ("avc1" also appears among ftyp's brands) renamed to a fourcc no
  // decoder knows.
  std::memcpy(codec.data() + find(codec, "avc1", find(codec, "stsd")), "zzz1", 4);
  bad("bad-unknown-codec", "mp4", codec, "decode");
  bad("bad-caption-not-utf8", "jpg", jpeg, "decode", std::string("caf\xE9 \xFF\xFE", 7));
  bad("bad-caption-huge", "jpg", jpeg, "read", std::string(3 << 20, 'x'));

  // Shard 0: good members plus names that point outside it and links, none of which is used.
  std::vector<uint8_t> tar;
  append_tar_member(tar, "s-good-a.jpg", jpeg);
  append_tar_member(tar, "s-good-a.txt", text("first"));
  append_tar_member(tar, "../escape.jpg", jpeg);
  append_tar_member(tar, "/abs/evil.jpg", jpeg);
  append_tar_member(tar, "./dir/../../up.jpg", jpeg);
  append_tar_member(tar, "s-link.jpg", {}, '2', "/etc/passwd");
  append_tar_member(tar, "s-hard.jpg", {}, '1', "s-good-a.jpg");
  append_tar_member(tar, "s-good-b.mp4", mp4);
  end_tar(tar);
  write_bytes(c.shards / "shard-000000.tar", tar);
  c.shards_bad = {{"../escape", "index"},
                  {"/abs/evil", "index"},
                  {"dir/../../up", "index"},
                  {"s-link", "index"},
                  {"s-hard", "index"}};
  // Shard 1: cut in the middle of its second member's data.
  tar.clear();
  append_tar_member(tar, "s-good-c.png", png);
  append_tar_member(tar, "s-cut.jpg", jpeg);
  tar.resize(tar.size() - jpeg.size() / 2 - 512);
  write_bytes(c.shards / "shard-000001.tar", tar);
  c.shards_bad["s-cut"] = "index";
  c.shards_good = 3;
  return c;
}

}  // namespace mmprof::test
