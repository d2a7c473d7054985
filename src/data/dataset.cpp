#include "mmprof/dataset.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "data/dataset_store.hpp"
#include "data/http_client.hpp"
#include "decode/media_format.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"

namespace mmprof {
namespace fs = std::filesystem;

namespace {

// The files mmprof writes beside a dataset's samples, read by people and never samples: the
// stage.json of `mmprof stage` and the shards.json and index.csv of `mmprof shard`, at the root,
// when their JSON says it is mmprof's.
class Sidecars {
 public:
  Sidecars(DatasetStore& store, const std::vector<FoundFile>& found) {
    for (const FoundFile& f : found) {
      if (f.rel == "stage.json" && schema_of(store, f.rel) == "mmprof.stage/1") {
        names_.push_back("stage.json");
      }
      if (f.rel == "shards.json" && schema_of(store, f.rel) == "mmprof.shards/1") {
        names_.insert(names_.end(), {"shards.json", "index.csv"});
      }
    }
  }
  bool contains(const std::string& rel) const {
    return std::find(names_.begin(), names_.end(), rel) != names_.end();
  }

 private:
  static std::string schema_of(DatasetStore& store, const std::string& rel) {
    const auto text = store.text(rel);
    const auto j = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json(nullptr);
    return j.is_object() && j.contains("schema") && j["schema"].is_string()
               ? j["schema"].get<std::string>()
               : "";
  }
  std::vector<std::string> names_;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Splits "dir/000001.jpg" into key "dir/000001" and extension "jpg". In a tar shard the
// extension starts at the first dot of the member's name (WebDataset's rule: "a.seg.jpg" is part
// "seg.jpg" of sample "a"); in a folder at the last one, so "my.photo.jpg" is the image of key
// "my.photo". A leading dot (".DS_Store") starts no extension.
std::pair<std::string, std::string> split_key(const std::string& name,
                                              const DatasetLayout& layout) {
  const auto slash = name.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  const auto dot = layout.containers ? name.find('.', base + 1) : name.rfind('.');
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

// A file's key and extension in a folder of files.
std::pair<std::string, std::string> file_key(const std::string& rel) {
  return split_key(rel, dataset_layout(Layout::files));
}

// The container layout whose containers have extension `ext` ("tar"), if one has.
const DatasetLayout* container_layout_of(const std::string& ext) {
  for (const DatasetLayout& l : dataset_layouts())
    if (l.containers && ext == l.container_ext) return &l;
  return nullptr;
}

// What data.layout=auto chooses: the container layout whose containers are at least as many as
// the media files (so one stray .tar in a folder of images does not hide the images), else files;
// `why` says so.
const DatasetLayout& choose_layout(const std::vector<FoundFile>& files, std::string& why) {
  size_t media = 0;
  for (const FoundFile& f : files)
    media += format_for_extension(file_key(f.rel).second) != nullptr ? 1 : 0;
  const DatasetLayout& plain = dataset_layout(Layout::files);
  why = fmt::format("data.layout=auto chose {}: {} media files", plain.name, media);
  for (const DatasetLayout& l : dataset_layouts()) {
    if (!l.containers) continue;
    const auto held = static_cast<size_t>(std::count_if(
        files.begin(), files.end(), [&](const FoundFile& f) { return is_container(l, f.rel); }));
    if (held > 0 && held >= media) return l;
    why += fmt::format(" against {} .{} files", held, l.container_ext);
  }
  return plain;
}

}  // namespace

Dataset Dataset::open(const fs::path& path, Layout layout, const RemoteConfig& remote) {
  return open_listed(path, layout, remote, nullptr);
}

Dataset Dataset::open_shards(const fs::path& folder, const std::vector<std::string>& shards) {
  const std::set<std::string> only(shards.begin(), shards.end());
  return open_listed(folder, Layout::tar, {}, &only);
}

Dataset Dataset::open_listed(const fs::path& path, Layout layout, const RemoteConfig& remote,
                             const std::set<std::string>* only) {
  // A folder of `mmprof gen --layout both` holds the samples twice, as files/ and as shards/:
  // the layout picks one (auto: the files), so --factor data.layout=files,tar compares the two.
  std::error_code gen_ec;
  if (!is_remote(path.string()) && fs::exists(path / "dataset.json", gen_ec)) {
    const fs::path copy = path / dataset_layout(layout).gen_folder;
    if (fs::is_directory(copy, gen_ec)) return open_listed(copy, layout, remote, only);
  }
  Dataset ds;
  ds.root_ = path;
  ds.remote_ = is_remote(path.string());
  ds.remote_config_ = remote;
  std::error_code ec;
  if (!ds.remote_ && !fs::is_directory(path, ec)) {
    throw InputError(fmt::format("dataset {} is not a readable directory", path.string()));
  }
  const auto store = ds.remote_ ? remote_store(path.string(), remote) : local_store(path);
  // A remote set of shards with mmprof's index needs no listing (plain object storage has none).
  FolderWalk walk;
  if (layout == Layout::auto_detect || dataset_layout(layout).containers)
    walk.files = store->indexed_shards();
  if (walk.files.empty()) {
    walk = store->walk();
  } else {
    walk.files.push_back({"shards.json", 0});
  }
  ds.ignored_ = std::move(walk.skipped);
  if (only != nullptr) {  // the folder's other files are not the dataset's: neither read nor listed
    std::erase_if(walk.files, [&](const FoundFile& f) { return only->count(f.rel) == 0; });
    std::erase_if(ds.ignored_, [&](const IgnoredFile& f) { return only->count(f.file) == 0; });
  }
  std::string why = fmt::format("data.layout={}", dataset_layout(layout).name);
  const DatasetLayout& chosen =
      layout == Layout::auto_detect ? choose_layout(walk.files, why) : dataset_layout(layout);
  ds.layout_ = chosen.id;
  if (chosen.containers) {
    if (std::none_of(walk.files.begin(), walk.files.end(),
                     [&](const FoundFile& f) { return is_container(chosen, f.rel); })) {
      throw InputError(fmt::format("dataset {} has no {}s (data.layout={})", path.string(),
                                   chosen.holder, chosen.name));
    }
    ds.index_shards(walk.files, *store);
  } else {
    ds.index_folder(walk.files, why, *store);
  }
  std::sort(ds.ignored_.begin(), ds.ignored_.end(),
            [](const IgnoredFile& a, const IgnoredFile& b) { return a.file < b.file; });
  if (ds.samples_.empty()) {
    std::string refused;
    if (!ds.rejected_.empty()) {
      const RejectedEntry& r = ds.rejected_.front();
      refused = fmt::format("; {} refused, the first: {}{}: {}", ds.rejected_.size(), r.file,
                            r.key.empty() ? "" : ":" + r.key, r.reason);
    }
    throw InputError(fmt::format("dataset {} holds no image or video samples (extensions: {}){}",
                                 path.string(), listed_extensions(), refused));
  }
  std::sort(ds.samples_.begin(), ds.samples_.end(),
            [](const SampleEntry& a, const SampleEntry& b) { return a.key < b.key; });
  return ds;
}

void Dataset::add_member(const std::string& name, const std::string& shown, uint32_t file,
                         uint64_t offset, uint64_t size) {
  // Members of one key arrive together in both layouts (sorted folder walk, grouped shards), so
  // only the last sample needs looking at.
  auto [key, ext] = split_key(name, layout_info());
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

void Dataset::index_folder(std::vector<FoundFile>& found, const std::string& why,
                           DatasetStore& store) {
  // Group members of a key: sort by key, then caption last.
  std::sort(found.begin(), found.end(), [](const FoundFile& a, const FoundFile& b) {
    return file_key(a.rel) < file_key(b.rel);
  });
  const Sidecars own(store, found);
  for (const FoundFile& f : found) {
    if (own.contains(f.rel)) continue;
    if (const DatasetLayout* holder = container_layout_of(file_key(f.rel).second)) {
      ignored_.push_back({f.rel, fmt::format("a {} shard in a dataset read as files ({}); set "
                                             "data.layout={} to read shards",
                                             holder->container_ext, why, holder->name)});
      continue;
    }
    files_.push_back(f.rel);
    file_sizes_.push_back(f.size);
    add_member(f.rel, f.rel, static_cast<uint32_t>(files_.size() - 1), 0, f.size);
  }
  ignore_captions_without_media();
}

// With tar shards, only the top-level *.tar files are read: anything else under the root is
// listed, not silently passed over, except mmprof's own files (Sidecars). A shard that is not a
// tar archive at all (empty, compressed, garbage) is a rejection of that shard; the others are
// read.
void Dataset::index_shards(std::vector<FoundFile>& found, DatasetStore& store) {
  std::sort(found.begin(), found.end(),
            [](const FoundFile& a, const FoundFile& b) { return a.rel < b.rel; });
  const Sidecars own(store, found);
  for (const FoundFile& f : found) {
    if (own.contains(f.rel)) continue;
    if (!is_container(layout_info(), f.rel)) {
      ignored_.push_back({f.rel, fmt::format("not a {} of a {}-layout dataset",
                                             layout_info().holder, layout_info().name)});
      continue;
    }
    files_.push_back(f.rel);
    file_sizes_.push_back(f.size);
    const auto file = static_cast<uint32_t>(files_.size() - 1);
    TarScan scan = store.scan_shard(f.rel);
    for (auto& m : scan.members)
      add_member(m.name, files_.back() + ":" + m.name, file, m.offset, m.size);
    for (auto& r : scan.rejected) {
      rejected_.push_back(
          {split_key(r.name, layout_info()).first, files_.back(), std::move(r.reason)});
    }
  }
  ignore_captions_without_media();
}

void Dataset::ignore_captions_without_media() {
  for (const SampleEntry& s : samples_) {
    if (s.ext.empty()) {
      ignored_.push_back({member_location(layout_info(), files_[s.caption.file], s.key, "txt"),
                          fmt::format("a caption with no image or video of key '{}'", s.key)});
    }
  }
  std::erase_if(samples_, [](const SampleEntry& s) { return s.ext.empty(); });
}

std::string Dataset::media_location(const SampleEntry& sample) const {
  return member_location(layout_info(), files_[sample.media.file], sample.key, sample.ext);
}

std::string Dataset::url_of(uint32_t file) const {
  return join_url(root_.string(), files_[file]);
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
  return {{"path", root_.string()},     {"layout", layout_info().name},
          {"files", files_.size()},     {"samples", samples_.size()},
          {"images", images},           {"videos", videos},
          {"captions", captions},       {"image_bytes", image_bytes},
          {"video_bytes", video_bytes}, {"total_bytes", total_bytes()},
          {"per_extension", per_ext},   {"ignored_files", ignored_.size()}};
}

}  // namespace mmprof
