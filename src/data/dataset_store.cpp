#include "data/dataset_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "data/http_client.hpp"
#include "data/remote_listing.hpp"
#include "data/shard_index.hpp"
#include "util/error.hpp"

namespace mmprof {
namespace {

constexpr int kMaxListingDepth = 32;
// Folders one remote listing walks at most: a generated tree without end (or a server that
// answers every path with a folder) is refused rather than walked for hours.
constexpr size_t kMaxListedFolders = 100'000;

class LocalStore final : public DatasetStore {
 public:
  explicit LocalStore(std::filesystem::path root) : root_(std::move(root)) {}
  FolderWalk walk() override { return walk_folder(root_); }
  std::optional<std::string> text(const std::string& rel) override {
    std::ifstream in(root_ / rel);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  TarScan scan_shard(const std::string& rel) override { return scan_tar_file(root_ / rel); }
  std::vector<FoundFile> indexed_shards() override { return {}; }

 private:
  std::filesystem::path root_;
};

class RemoteStore final : public DatasetStore {
 public:
  RemoteStore(std::string url, const RemoteConfig& remote) : url_(std::move(url)), http_(remote) {}

  FolderWalk walk() override {
    FolderWalk w;
    std::vector<Listed> ancestors;
    list("", w, ancestors);
    return w;
  }

  std::optional<std::string> text(const std::string& rel) override {
    try {
      return http_.get(join_url(url_, rel));
    } catch (const HttpFailure&) {
      return std::nullopt;
    }
  }

  TarScan scan_shard(const std::string& rel) override {
    load_index();
    TarScan scan;
    if (const auto it = members_.find(rel); it != members_.end()) {
      scan = it->second;
    } else {
      scan.rejected.push_back(
          {"", fmt::format("{} is not in the remote index.csv: its members cannot be located "
                           "without downloading it (re-run mmprof shard over the shards)",
                           rel)});
    }
    return scan;
  }

  std::vector<FoundFile> indexed_shards() override {
    load_index();
    return shards_;
  }

 private:
  // Lists `dir` into `w`; `ancestors` holds the listings of the folders above it. A folder whose
  // listing is one of theirs, entry for entry, is a symlink loop the server follows (nginx does
  // by default): skipped with the reason, as the local walker skips a folder it has been in.
  struct Listed {
    std::string dir, body;
  };
  void list(const std::string& dir, FolderWalk& w, std::vector<Listed>& ancestors) {
    const std::string url = join_url(url_, dir);
    if (++listed_folders_ > kMaxListedFolders) {
      throw InputError(fmt::format(
          "the remote dataset {} has more than {} folders to list (a tree without end?): serve "
          "the shards of mmprof shard with their shards.json and index.csv instead "
          "(docs/storage.md)",
          url_, kMaxListedFolders));
    }
    std::string body;
    try {
      body = http_.get(url);
    } catch (const HttpFailure& f) {
      if (dir.empty()) {
        throw InputError(fmt::format("cannot list the remote dataset {}: {}", url_, f.message));
      }
      w.skipped.push_back({dir, fmt::format("cannot list it: {}", f.message)});
      return;
    }
    FolderWalk here;
    const auto subfolders = read_listing(dir, body, here);
    if (!subfolders) {
      const std::string why = fmt::format(
          "{} is not a JSON directory listing (serve the folder with nginx's `autoindex on; "
          "autoindex_format json;`, or put the shards.json and index.csv of mmprof shard there; "
          "docs/storage.md)",
          url);
      if (dir.empty()) throw InputError(fmt::format("cannot list the remote dataset: {}", why));
      w.skipped.push_back({dir, why});
      return;
    }
    const bool empty = here.files.empty() && here.skipped.empty() && subfolders->empty();
    for (const Listed& above : ancestors) {
      if (above.body == body && !empty) {
        w.skipped.push_back(
            {dir, fmt::format("its listing is that of {} above it, entry for entry: a symlink "
                              "loop, not listed again",
                              above.dir.empty() ? "the dataset's root" : above.dir)});
        return;
      }
    }
    ancestors.push_back({dir, body});
    std::move(here.files.begin(), here.files.end(), std::back_inserter(w.files));
    std::move(here.skipped.begin(), here.skipped.end(), std::back_inserter(w.skipped));
    for (const std::string& sub : *subfolders) {
      if (static_cast<int>(ancestors.size()) <= kMaxListingDepth) {
        list(sub, w, ancestors);
      } else {
        w.skipped.push_back(
            {sub.substr(0, sub.size() - 1),
             fmt::format("more than {} directories deep, not listed", kMaxListingDepth)});
      }
    }
    ancestors.pop_back();
  }

  // shards.json (schema mmprof.shards/1) and index.csv, once: the shards and their members.
  void load_index() {
    if (index_loaded_) return;
    index_loaded_ = true;
    const auto manifest_text = text("shards.json");
    if (!manifest_text) return;
    auto manifest = read_shards_manifest(*manifest_text, join_url(url_, "shards.json"));
    if (!manifest) return;
    const std::string index_url = join_url(url_, manifest->index);
    std::string csv;
    try {
      csv = http_.get(index_url);
    } catch (const HttpFailure& f) {
      throw InputError(fmt::format("the remote shards' index cannot be read: {}", f.message));
    }
    members_ = shard_members(parse_shard_index(csv, index_url));
    shards_ = std::move(manifest->shards);
  }

  std::string url_;
  HttpClient http_;
  bool index_loaded_ = false;
  size_t listed_folders_ = 0;
  std::vector<FoundFile> shards_;
  std::map<std::string, TarScan> members_;
};

}  // namespace

std::unique_ptr<DatasetStore> local_store(const std::filesystem::path& root) {
  return std::make_unique<LocalStore>(root);
}

std::unique_ptr<DatasetStore> remote_store(const std::string& url, const RemoteConfig& remote) {
  return std::make_unique<RemoteStore>(url, remote);
}

}  // namespace mmprof
