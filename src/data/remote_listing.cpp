#include "data/remote_listing.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "data/shard_index.hpp"
#include "data/tar_index.hpp"
#include "mmprof/error.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

// The string at `key` of `o`, or `fallback` when `o` is no object or the value no string: a
// server's listing or manifest is input, and {"name": 5} is an entry without a name.
std::string text_field(const json& o, const char* key, const std::string& fallback) {
  if (!o.is_object()) return fallback;
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace

std::optional<std::vector<std::string>> read_listing(const std::string& dir,
                                                     const std::string& body, FolderWalk& w) {
  const json entries = json::parse(body, nullptr, false);
  if (!entries.is_array()) return std::nullopt;
  std::vector<std::string> subfolders;
  for (const json& e : entries) {
    const std::string name = text_field(e, "name", ""), type = text_field(e, "type", "");
    // A hostile or broken server's entry ({"name": 5}, null, "..", "../etc.jpg") is listed as
    // skipped with what it was, never read and never an internal error.
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
      w.skipped.push_back(
          {dir + (name.empty() ? "?" : name),
           fmt::format("a listing entry {} that names no file in this folder, not read",
                       e.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 200))});
      continue;
    }
    const std::string rel = dir + name;
    if (type == "directory") {
      subfolders.push_back(rel + "/");
    } else if (type == "file" && e.contains("size") && e["size"].is_number_unsigned()) {
      w.files.push_back({rel, e["size"].get<uint64_t>()});
    } else {
      w.skipped.push_back({rel, fmt::format("a listing entry of type '{}' without a size, not "
                                            "a file mmprof can read",
                                            type)});
    }
  }
  return subfolders;
}

std::optional<ShardsManifest> read_shards_manifest(const std::string& text,
                                                   const std::string& url) {
  const json manifest = json::parse(text, nullptr, false);
  if (text_field(manifest, "schema", "") != "mmprof.shards/1") return std::nullopt;
  ShardsManifest m;
  m.index = text_field(manifest, "index", kShardIndexFile);
  const json shards = manifest.value("shards", json::array());
  if (!shards.is_array()) return m;
  for (const json& s : shards) {
    const std::string name = text_field(s, "name", "");
    if (name.empty()) continue;
    // A shard named outside the dataset would be fetched from elsewhere on the server.
    if (const auto why = unsafe_member_name(name)) {
      throw InputError(fmt::format(
          "{} names the shard '{}': {} (a shard is under the dataset's root)", url, name, *why));
    }
    const json bytes = s.value("bytes", json());
    m.shards.push_back({name, bytes.is_number_unsigned() ? bytes.get<uint64_t>() : uint64_t{0}});
  }
  return m;
}

}  // namespace mmprof
