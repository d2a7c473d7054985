#include "util/shipped_files.hpp"

#include <algorithm>
#include <system_error>

namespace mmprof {

namespace fs = std::filesystem;

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

std::vector<fs::path> shipped_file_candidates(const char* env_value, const fs::path& exe_dir,
                                              const fs::path& name, const char* install_reldir,
                                              const char* build_path) {
  if (env_value != nullptr && *env_value != '\0') return {fs::path(env_value)};
  std::vector<fs::path> out;
  const auto add = [&out](const fs::path& path) {
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  };
  if (!exe_dir.empty()) {
    add(exe_dir / name);
    if (install_reldir != nullptr && *install_reldir != '\0')
      add((exe_dir / install_reldir / name).lexically_normal());
  }
  if (build_path != nullptr && *build_path != '\0') add(fs::path(build_path));
  return out;
}

std::optional<fs::path> find_shipped_file(const char* env_value, const fs::path& name,
                                          const char* install_reldir, const char* build_path) {
  for (const fs::path& p :
       shipped_file_candidates(env_value, executable_dir(), name, install_reldir, build_path)) {
    std::error_code ec;
    if (fs::exists(p, ec)) return p;
  }
  return std::nullopt;
}

}  // namespace mmprof
