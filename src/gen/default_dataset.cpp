// The embedded default dataset: generated once per cache folder, shared by every later run.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <system_error>

#include "gen/generator.hpp"
#include "util/error.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;

// Bump the folder name whenever the generator's output changes, so old caches are not reused.
constexpr const char* kDefaultName = "default-v1";

GenOptions default_options(const fs::path& out) {
  GenOptions o;
  o.out = out;
  o.seed = 0;
  o.images = 400;
  o.videos = 40;
  o.video_min_s = 1.0;
  o.video_max_s = 4.0;
  o.video_max_height = 720;
  o.write_files = true;
  o.write_shards = true;
  o.shard_bytes = 16ull << 20;
  return o;
}

bool complete(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "dataset.json", ec);
}

void remove_quietly(const fs::path& dir) noexcept {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// Moves a folder without dataset.json (left by something else) out of the way; another process
// may do the same at once, so failures here are tolerated and the final rename decides.
void clear_incomplete(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec) || complete(dir)) return;
  fs::path aside = dir;
  aside += ".stale-" + std::to_string(::getpid());
  if (std::rename(dir.c_str(), aside.c_str()) == 0) remove_quietly(aside);
}

}  // namespace

fs::path default_dataset_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return fs::path(xdg) / "mmprof" / kDefaultName;
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0')
    return fs::path(home) / ".cache" / "mmprof" / kDefaultName;
  return fs::temp_directory_path() / ("mmprof-cache-" + std::to_string(::getuid())) / kDefaultName;
}

fs::path ensure_default_dataset() {
  fs::path dir = default_dataset_dir();
  if (complete(dir)) return dir;
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);
  if (ec) {
    throw InputError("cannot create cache directory " + dir.parent_path().string() + ": " +
                     ec.message());
  }
  fs::path tmp = dir;
  tmp += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}());
  try {
    generate_dataset(default_options(tmp));
  } catch (...) {
    remove_quietly(tmp);
    throw;
  }
  clear_incomplete(dir);
  if (std::rename(tmp.c_str(), dir.c_str()) != 0) {
    const int saved = errno;
    remove_quietly(tmp);
    if (complete(dir)) return dir;  // another process won the race: use its copy
    errno = saved;
    throw_errno("cannot move the generated default dataset to", dir.string());
  }
  return dir;
}

}  // namespace mmprof
