#pragma once
// Where Dataset::open finds a dataset's files: a local folder (walked, shards scanned) or an HTTP
// server (docs/storage.md): its JSON directory listing (nginx's autoindex_format json), walked
// recursively, and for tar shards the index.csv `mmprof shard` writes beside them, so that no
// shard is downloaded to be indexed.
#include <filesystem>
#include <memory>
#include <string>

#include "data/folder_walk.hpp"
#include "data/tar_index.hpp"
#include "mmprof/config.hpp"

namespace mmprof {

class DatasetStore {
 public:
  virtual ~DatasetStore() = default;
  // Every file under the root (relative path and size) and the entries not walked, with why.
  // Throws InputError when the root itself cannot be listed.
  virtual FolderWalk walk() = 0;
  // A small file's content, or nullopt when it cannot be read.
  virtual std::optional<std::string> text(const std::string& rel) = 0;
  // The members of shard `rel`. Never throws for the shard's content.
  virtual TarScan scan_shard(const std::string& rel) = 0;
  // The shards the store knows without a walk (a remote index), or empty.
  virtual std::vector<FoundFile> indexed_shards() = 0;
};

std::unique_ptr<DatasetStore> local_store(const std::filesystem::path& root);
// `url`: the dataset's root; throws InputError when the server cannot be reached.
std::unique_ptr<DatasetStore> remote_store(const std::string& url, const RemoteConfig& remote);

}  // namespace mmprof
