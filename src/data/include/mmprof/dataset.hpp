#pragma once
// A dataset as the loader sees it: an index of samples (key, modality, where its bytes are).
// The layouts are rows of mmprof/dataset_layout.hpp: a folder of files (images and videos whose
// extension is in the media-format table, src/decode/media_format.cpp; optional <key>.txt
// captions) and WebDataset-style tar shards (members <key>.<ext> grouped by key). Opening a dataset
// reads directory entries or tar headers only, never the media; tar members are never extracted.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "mmprof/config.hpp"
#include "mmprof/dataset_layout.hpp"
#include "mmprof/modality.hpp"

namespace mmprof {

struct FoundFile;
class DatasetStore;

// Where some bytes live: a whole file (offset 0, size = file size) or a member of a tar shard.
struct ByteRange {
  uint32_t file = 0;  // index into Dataset::files()
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct SampleEntry {
  std::string key;
  std::string ext;  // lower-case media extension without the dot ("jpg", "mp4", ...)
  Modality modality = Modality::image;
  ByteRange media;
  bool has_caption = false;
  ByteRange caption;
};

// A tar member or shard region the index refused: never read, reported as a skipped sample
// (errors.jsonl stage "index") or, under loader.on_error=fail, the reason the run stops.
struct RejectedEntry {
  std::string key;     // the member's name ("" for damage not tied to one member)
  std::string file;    // the shard, relative to the dataset root
  std::string reason;  // e.g. "absolute member path, not used", "shard cut mid-member: ..."
};

// A file under the dataset (or a tar member) that is neither a sample nor a caption: never read,
// listed in errors.jsonl (kind "ignored") and counted, so nothing is dropped without a word.
struct IgnoredFile {
  std::string file;    // relative to the dataset root; "shard.tar:member" for a tar member
  std::string reason;  // e.g. "extension .ogv is not a format mmprof reads (it reads: ...)"
};

class Dataset {
 public:
  // Opens `path` with `layout` (auto: tar when the folder's top-level *.tar files are at least as
  // many as its media files, else files; a .tar file of a files-layout dataset is listed as
  // ignored). The folder is walked by data/folder_walk.hpp: links inside the root are followed,
  // others listed, unreadable subdirectories listed. A shard that is not a tar archive is a
  // rejection of that shard. Throws InputError naming the path when it is missing, unreadable or
  // holds no sample.
  //
  // `path` may be an http(s):// URL (docs/storage.md): the files layout is listed through the
  // server's JSON directory listing (nginx: autoindex_format json), recursively; tar shards are
  // indexed by the index.csv that `mmprof shard` wrote beside them (no listing needed, no shard
  // scanned). `remote` bounds those requests.
  static Dataset open(const std::filesystem::path& path, Layout layout,
                      const RemoteConfig& remote = {});
  // Only the tar shards `shards` (paths relative to `folder`) of a local folder, indexed as
  // open(folder, Layout::tar) indexes its shards: a WebDataset job's shard list, which may be a
  // part of its folder. A listed shard that is missing is not a sample; none found throws as
  // open().
  static Dataset open_shards(const std::filesystem::path& folder,
                             const std::vector<std::string>& shards);

  // The folder, or the URL of a remote dataset.
  const std::filesystem::path& root() const noexcept { return root_; }
  bool remote() const noexcept { return remote_; }
  // How a remote dataset's requests are bounded (data.remote.*, as given to open()).
  const RemoteConfig& remote_config() const noexcept { return remote_config_; }
  // A remote dataset's file `file` as a URL (its path percent-encoded).
  std::string url_of(uint32_t file) const;
  Layout layout() const noexcept { return layout_; }
  // The layout's row (mmprof/dataset_layout.hpp): ask it, not which layout this is.
  const DatasetLayout& layout_info() const { return dataset_layout(layout_); }
  // Where `sample`'s media is, as messages name it: its file, or "shard:key.ext".
  std::string media_location(const SampleEntry& sample) const;
  const std::vector<std::string>& files() const noexcept { return files_; }
  // File `file`'s size when the dataset was opened (its listing's, for a remote dataset).
  uint64_t file_size(uint32_t file) const { return file_sizes_[file]; }
  const std::vector<SampleEntry>& samples() const noexcept { return samples_; }
  size_t size() const noexcept { return samples_.size(); }
  // Members the index refused: unsafe tar paths, links, a shard cut mid-member, a member whose
  // size field lies, a corrupt header (key ""), a whole shard that is not a tar archive (key ""),
  // a second media file of a key.
  const std::vector<RejectedEntry>& rejected() const noexcept { return rejected_; }
  const std::vector<IgnoredFile>& ignored() const noexcept { return ignored_; }
  uint64_t total_bytes() const noexcept;
  // A digest of the sample index (keys, extensions, modalities, media and caption sizes, in
  // order), the same for both layouts of the same samples: a checkpoint's guard against resuming
  // on a dataset that changed since (files replaced, added or removed).
  uint64_t fingerprint() const noexcept;
  // The same dataset restricted to one modality (e.g. images only, for a decode benchmark).
  Dataset only(Modality modality) const;
  // Counts per modality and extension, total bytes, layout: for the manifest.
  nlohmann::json summary() const;

 private:
  // open() of the files under `path` that `only` lists (null: all of them).
  static Dataset open_listed(const std::filesystem::path& path, Layout layout,
                             const RemoteConfig& remote, const std::set<std::string>* only);
  // `found`: the folder walk's files (sorted here); `why`: how the layout was chosen. Files are
  // samples of their own (index_folder) or containers of members (index_shards).
  void index_folder(std::vector<FoundFile>& found, const std::string& why, DatasetStore& store);
  void index_shards(std::vector<FoundFile>& found, DatasetStore& store);
  // `name`: the file's path (files layout) or the member's name (tar), `shown` how messages name
  // it.
  void add_member(const std::string& name, const std::string& shown, uint32_t file, uint64_t offset,
                  uint64_t size);
  void ignore_captions_without_media();

  std::filesystem::path root_;
  bool remote_ = false;
  RemoteConfig remote_config_;
  Layout layout_ = Layout::files;
  std::vector<std::string> files_;
  std::vector<uint64_t> file_sizes_;
  std::vector<SampleEntry> samples_;
  std::vector<RejectedEntry> rejected_;
  std::vector<IgnoredFile> ignored_;
};

}  // namespace mmprof
