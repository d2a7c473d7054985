#include "decode/media_format.hpp"

#include <algorithm>
#include <cstring>

namespace mmprof {
namespace {

using namespace std::string_view_literals;  // "II*\0"sv keeps its NUL

constexpr std::string_view kJpegExt[] = {"jpg", "jpeg"};
constexpr Signature kJpegMagic[] = {{{0, "\xFF\xD8\xFF"sv}}};
constexpr std::string_view kPngExt[] = {"png", "apng"};
constexpr Signature kPngMagic[] = {{{0, "\x89PNG\r\n\x1A\n"sv}}};
constexpr std::string_view kWebpExt[] = {"webp"};
constexpr Signature kWebpMagic[] = {{{0, "RIFF"sv}, {8, "WEBP"sv}}};
constexpr std::string_view kGifExt[] = {"gif"};
constexpr Signature kGifMagic[] = {{{0, "GIF87a"sv}}, {{0, "GIF89a"sv}}};
constexpr std::string_view kTiffExt[] = {"tiff", "tif"};
constexpr Signature kTiffMagic[] = {{{0, "II*\0"sv}}, {{0, "MM\0*"sv}}};  // little, big endian
constexpr std::string_view kBmpExt[] = {"bmp"};
constexpr Signature kBmpMagic[] = {{{0, "BM"sv}, {}, 26}};
constexpr std::string_view kMp4Ext[] = {"mp4", "m4v"};
constexpr std::string_view kMkvExt[] = {"mkv"};
constexpr std::string_view kWebmExt[] = {"webm"};
constexpr std::string_view kMovExt[] = {"mov"};
constexpr std::string_view kAviExt[] = {"avi"};

using B = DecodeBackend;
constexpr Modality kImage = Modality::image, kVideo = Modality::video;

// Images first; sniffing tries the rows in this order, so BMP's two-byte signature comes last.
constexpr MediaFormat kFormats[] = {
    // name, display name, modality, extensions, signatures, backend, libavcodec codec, demuxer
    {"jpeg", "JPEG", kImage, kJpegExt, kJpegMagic, B::libjpeg_turbo, "mjpeg"},
    {"png", "PNG", kImage, kPngExt, kPngMagic, B::ffmpeg_image, "png"},
    {"webp", "WebP", kImage, kWebpExt, kWebpMagic, B::ffmpeg_image, "webp"},
    {"gif", "GIF", kImage, kGifExt, kGifMagic, B::ffmpeg_image, "gif"},
    {"tiff", "TIFF", kImage, kTiffExt, kTiffMagic, B::ffmpeg_image, "tiff"},
    {"bmp", "BMP", kImage, kBmpExt, kBmpMagic, B::ffmpeg_image, "bmp"},
    {"mp4", "MP4", kVideo, kMp4Ext, {}, B::ffmpeg_video, "", "mov"},
    {"mkv", "Matroska", kVideo, kMkvExt, {}, B::ffmpeg_video, "", "matroska"},
    {"webm", "WebM", kVideo, kWebmExt, {}, B::ffmpeg_video, "", "matroska"},
    {"mov", "QuickTime", kVideo, kMovExt, {}, B::ffmpeg_video, "", "mov"},
    {"avi", "AVI", kVideo, kAviExt, {}, B::ffmpeg_video, "", "avi"},
};

bool part_matches(const MagicBytes& part, std::span<const uint8_t> data) noexcept {
  return data.size() >= part.offset + part.bytes.size() &&
         std::memcmp(data.data() + part.offset, part.bytes.data(), part.bytes.size()) == 0;
}

}  // namespace

bool Signature::matches(std::span<const uint8_t> data) const noexcept {
  return data.size() >= min_size && part_matches(magic, data) &&
         (also.bytes.empty() || part_matches(also, data));
}

std::span<const MediaFormat> media_formats() noexcept {
  return kFormats;
}

const MediaFormat* format_for_extension(std::string_view ext) noexcept {
  for (const MediaFormat& f : kFormats) {
    if (std::ranges::find(f.extensions, ext) != f.extensions.end()) return &f;
  }
  return nullptr;
}

const MediaFormat* format_named(std::string_view name) noexcept {
  for (const MediaFormat& f : kFormats) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const MediaFormat* sniff_format(std::span<const uint8_t> data) noexcept {
  for (const MediaFormat& f : kFormats) {
    for (const Signature& s : f.signatures) {
      if (s.matches(data)) return &f;
    }
  }
  return nullptr;
}

std::string listed_formats(Modality modality, std::string_view separator) {
  std::string out;
  for (const MediaFormat& f : kFormats) {
    if (f.modality != modality) continue;
    if (!out.empty()) out += separator;
    out += f.display_name;
  }
  return out;
}

std::string video_demuxers() {
  std::string out;
  for (const MediaFormat& f : kFormats) {
    if (f.ffmpeg_demuxer.empty()) continue;
    const std::string name(f.ffmpeg_demuxer);
    if (("," + out + ",").find("," + name + ",") != std::string::npos) continue;
    out += (out.empty() ? "" : ",") + name;
  }
  return out;
}

std::string listed_extensions() {
  std::string out;
  for (const MediaFormat& f : kFormats) {
    if (!out.empty()) out += ", ";
    out += f.extensions.front();
  }
  return out;
}

}  // namespace mmprof
