#include "rundir/run_files.hpp"

#include <fmt/format.h>

#include "mmprof/error.hpp"

namespace mmprof {
namespace fs = std::filesystem;

void prepare_run_dir(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec) && !fs::exists(dir / "manifest.json", ec)) {
    throw UsageError(
        fmt::format("--out {} exists and is not an mmprof run directory; choose "
                    "another path",
                    dir.string()));
  }
  fs::create_directories(dir, ec);
  if (ec)
    throw InputError(fmt::format("cannot create run directory {}: {}", dir.string(), ec.message()));
}

}  // namespace mmprof
