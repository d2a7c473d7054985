#pragma once
// What a remote dataset's server says, read without the network: one folder's JSON listing
// (nginx's autoindex_format json) and the shards.json of `mmprof shard`. Any server's bytes are
// input: an entry that names no file of the folder is listed as skipped with what it was, never
// read and never an internal error (fuzzed by fuzz_remote_listing).
#include <optional>
#include <string>
#include <vector>

#include "data/folder_walk.hpp"

namespace mmprof {

// The listing `body` of folder `dir` ("" for the root, else "a/b/"): its files and skipped
// entries appended to `w`, its subfolders returned ("a/b/c/"), every entry of the array in one of
// the three. Nullopt when `body` is not a JSON array (not a listing).
std::optional<std::vector<std::string>> read_listing(const std::string& dir,
                                                     const std::string& body, FolderWalk& w);

// shards.json: the index file it names and its shards (a size that is not a whole number is 0).
struct ShardsManifest {
  std::string index;
  std::vector<FoundFile> shards;
};
// Nullopt when `text` is not a shards.json of mmprof's (schema mmprof.shards/1); throws
// InputError naming `url` and the shard when a shard's name is outside the dataset's root.
std::optional<ShardsManifest> read_shards_manifest(const std::string& text, const std::string& url);

}  // namespace mmprof
