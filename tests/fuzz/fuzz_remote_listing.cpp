// libFuzzer target: what a remote dataset's server says (any server's bytes), read as a folder's
// JSON listing and as a shards.json. A listing accounts for every entry of its array (a file, a
// subfolder or a skipped entry with its reason), each a name inside the folder; anything else is
// not a listing and adds nothing. A shards.json is not mmprof's, or is refused with an InputError
// naming a shard outside the root, or names only shards under it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "data/remote_listing.hpp"
#include "data/tar_index.hpp"
#include "mmprof/error.hpp"

namespace {

// `rel` is the folder "d/" and one name in it that is neither "." nor ".." nor holds a '/'.
bool inside(const std::string& rel) {
  if (rel.rfind("d/", 0) != 0) return false;
  const std::string name = rel.substr(2);
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mmprof::FolderWalk w;
  const auto subfolders = mmprof::read_listing("d/", text, w);
  if (subfolders) {
    const auto entries = nlohmann::json::parse(text, nullptr, false);
    if (entries.size() != subfolders->size() + w.files.size() + w.skipped.size())
      std::abort();  // an entry dropped without a reason
    for (const auto& f : w.files) {
      if (!inside(f.rel)) std::abort();
    }
    for (const auto& sub : *subfolders) {
      if (sub.empty() || sub.back() != '/' || !inside(sub.substr(0, sub.size() - 1))) std::abort();
    }
    for (const auto& s : w.skipped) {
      if (s.reason.empty()) std::abort();
    }
  } else if (!w.files.empty() || !w.skipped.empty()) {
    std::abort();  // not a listing, yet something was taken from it
  }
  try {
    if (const auto manifest = mmprof::read_shards_manifest(text, "http://h/d/shards.json")) {
      for (const auto& shard : manifest->shards) {
        if (mmprof::unsafe_member_name(shard.rel)) std::abort();  // fetched from elsewhere
      }
    }
  } catch (const mmprof::InputError&) {
  }
  return 0;
}
