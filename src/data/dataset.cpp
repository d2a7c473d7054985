#include "mmprof/dataset.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "data/tar_index.hpp"
#include "decode/media_format.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"

namespace mmprof {
namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Splits "dir/000001.jpg" into key "dir/000001" and extension "jpg". In a tar shard the
// extension starts at the first dot of the member's name (WebDataset's rule: "a.seg.jpg" is part
// "seg.jpg" of sample "a"); in a folder at the last one, so "my.photo.jpg" is the image of key
// "my.photo". A leading dot (".DS_Store") starts no extension.
std::pair<std::string, std::string> split_key(const std::string& name, Layout layout) {
  const auto slash = name.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  const auto dot = layout == Layout::tar ? name.find('.', base + 1) : name.rfind('.');
  if (dot == std::string::npos || dot <= base) return {name, ""};
  return {name.substr(0, dot), lower(name.substr(dot + 1))};
}

std::string not_a_format(const std::string& ext) {
  if (ext.empty()) {
    return fmt::format("no extension, so no format mmprof reads (it reads: {})",
                       listed_extensions());
  }
  return fmt::format("extension .{} is not a format mmprof reads (it reads: {})", ext,
                     listed_extensions());
}

}  // namespace

Dataset Dataset::open(const fs::path& path, Layout layout) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    throw InputError(fmt::format("dataset {} is not a readable directory", path.string()));
  }
  Dataset ds;
  ds.root_ = path;
  std::vector<fs::path> shards;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    if (e.is_regular_file() && lower(e.path().extension().string()) == ".tar") {
      shards.push_back(e.path());
    }
  }
  if (ec) throw InputError(fmt::format("cannot list dataset {}: {}", path.string(), ec.message()));
  std::sort(shards.begin(), shards.end());
  if (layout == Layout::auto_detect) layout = shards.empty() ? Layout::files : Layout::tar;
  ds.layout_ = layout;
  if (layout == Layout::tar) {
    if (shards.empty()) {
      throw InputError(
          fmt::format("dataset {} has no .tar shards (data.layout=tar)", path.string()));
    }
    ds.index_shards(shards);
    ds.ignore_outside_shards(shards);
  } else {
    ds.index_folder();
  }
  if (ds.samples_.empty()) {
    throw InputError(fmt::format("dataset {} holds no image or video samples (extensions: {})",
                                 path.string(), listed_extensions()));
  }
  std::sort(ds.samples_.begin(), ds.samples_.end(),
            [](const SampleEntry& a, const SampleEntry& b) { return a.key < b.key; });
  return ds;
}

void Dataset::add_member(const std::string& name, const std::string& shown, uint32_t file,
                         uint64_t offset, uint64_t size) {
  // Members of one key arrive together in both layouts (sorted folder walk, grouped shards), so
  // only the last sample needs looking at.
  auto [key, ext] = split_key(name, layout_);
  const MediaFormat* format = format_for_extension(ext);
  if (format == nullptr && ext != "txt") {
    ignored_.push_back({shown, not_a_format(ext)});
    return;
  }
  if (samples_.empty() || samples_.back().key != key) {
    samples_.push_back(SampleEntry{key, "", Modality::image, {}, false, {}});
  }
  SampleEntry& s = samples_.back();
  if (ext == "txt") {
    s.has_caption = true;
    s.caption = ByteRange{file, offset, size};
  } else if (!s.ext.empty()) {
    // Two media files of one key would be one sample, the other lost: the first stays the sample.
    rejected_.push_back(
        {shown, files_[file],
         fmt::format("{} has the key '{}' of {}.{}, which is that key's sample; not used (rename "
                     "one of them)",
                     shown, key, key, s.ext)});
  } else {
    s.ext = ext;
    s.modality = format->modality;
    s.media = ByteRange{file, offset, size};
  }
}

void Dataset::index_folder() {
  std::vector<std::pair<std::string, uint64_t>> entries;  // relative path, size
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root_, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), root_).string();
    if (it->is_directory()) continue;
    if (!it->is_regular_file()) {
      ignored_.push_back({rel, "not a regular file (a broken link, a fifo, a socket or a device)"});
      continue;
    }
    entries.emplace_back(rel, it->file_size());
  }
  if (ec) throw InputError(fmt::format("cannot list dataset {}: {}", root_.string(), ec.message()));
  // Group members of a key: sort by key, then caption last.
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return split_key(a.first, Layout::files) < split_key(b.first, Layout::files);
  });
  for (const auto& [rel, size] : entries) {
    files_.push_back(rel);
    add_member(rel, rel, static_cast<uint32_t>(files_.size() - 1), 0, size);
  }
  ignore_captions_without_media();
}

void Dataset::index_shards(const std::vector<fs::path>& shards) {
  for (const auto& shard : shards) {
    files_.push_back(fs::relative(shard, root_).string());
    const auto file = static_cast<uint32_t>(files_.size() - 1);
    TarScan scan = scan_tar_file(shard);
    for (auto& m : scan.members)
      add_member(m.name, files_.back() + ":" + m.name, file, m.offset, m.size);
    for (auto& r : scan.rejected) {
      rejected_.push_back(
          {split_key(r.name, Layout::tar).first, files_.back(), std::move(r.reason)});
    }
  }
  ignore_captions_without_media();
}

void Dataset::ignore_captions_without_media() {
  for (const SampleEntry& s : samples_) {
    if (s.ext.empty()) {
      ignored_.push_back(
          {files_[s.caption.file] + (layout_ == Layout::tar ? ":" + s.key + ".txt" : ""),
           fmt::format("a caption with no image or video of key '{}'", s.key)});
    }
  }
  std::erase_if(samples_, [](const SampleEntry& s) { return s.ext.empty(); });
}

// With tar shards, only the top-level *.tar files are read: anything else under the root is
// listed, not silently passed over.
void Dataset::ignore_outside_shards(const std::vector<fs::path>& shards) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root_, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_directory() || std::find(shards.begin(), shards.end(), it->path()) != shards.end())
      continue;
    ignored_.push_back({fs::relative(it->path(), root_).string(),
                        "not a top-level .tar shard of a tar-layout dataset"});
  }
}

Dataset Dataset::only(Modality modality) const {
  Dataset out = *this;
  std::erase_if(out.samples_, [&](const SampleEntry& s) { return s.modality != modality; });
  return out;
}

uint64_t Dataset::total_bytes() const noexcept {
  uint64_t total = 0;
  for (const auto& s : samples_)
    total += s.media.size + (s.has_caption ? s.caption.size : 0);
  return total;
}

uint64_t Dataset::fingerprint() const noexcept {
  const uint64_t n = samples_.size();
  uint64_t d = digest64(&n, sizeof n);
  for (const auto& s : samples_) {
    const uint64_t sizes[] = {static_cast<uint64_t>(s.modality), s.media.size,
                              s.has_caption ? s.caption.size + 1 : 0};
    d = digest_combine(d, digest64(s.key.data(), s.key.size()));
    d = digest_combine(d, digest64(s.ext.data(), s.ext.size()));
    d = digest_combine(d, digest64(sizes, sizeof sizes));
  }
  return d;
}

nlohmann::json Dataset::summary() const {
  std::map<std::string, int64_t> per_ext;
  int64_t images = 0, videos = 0, captions = 0;
  uint64_t image_bytes = 0, video_bytes = 0;
  for (const auto& s : samples_) {
    ++per_ext[s.ext];
    (s.modality == Modality::video ? videos : images)++;
    (s.modality == Modality::video ? video_bytes : image_bytes) += s.media.size;
    captions += s.has_caption;
  }
  return {{"path", root_.string()},     {"layout", layout_ == Layout::tar ? "tar" : "files"},
          {"files", files_.size()},     {"samples", samples_.size()},
          {"images", images},           {"videos", videos},
          {"captions", captions},       {"image_bytes", image_bytes},
          {"video_bytes", video_bytes}, {"total_bytes", total_bytes()},
          {"per_extension", per_ext},   {"ignored_files", ignored_.size()}};
}

}  // namespace mmprof
