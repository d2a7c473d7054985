#pragma once
// Files mmprof ships beside its binary and finds at run time: the torch step plugin, the CUPTI
// injection library, the Python hook. The same rule finds each in the build tree, in an install
// and where a user points.
#include <filesystem>
#include <optional>
#include <vector>

namespace mmprof {

// The folder of the running executable (/proc/self/exe); empty when it cannot be read.
std::filesystem::path executable_dir();

// Where to look for `name`, in order. A set `env_value` is the only candidate: the user named a
// file, and silently taking another one would measure the wrong thing. Otherwise next to the
// executable (the build tree puts plugins beside mmprof), then `install_reldir` from the
// executable's folder (an install: PREFIX/bin/mmprof finds PREFIX/lib/mmprof/<name>), then the
// path the build recorded (for test binaries in other folders). Empty inputs are skipped.
std::vector<std::filesystem::path> shipped_file_candidates(const char* env_value,
                                                           const std::filesystem::path& exe_dir,
                                                           const std::filesystem::path& name,
                                                           const char* install_reldir,
                                                           const char* build_path);

// The first candidate that exists (the explicit `env_value` only when it exists), or nullopt.
std::optional<std::filesystem::path> find_shipped_file(const char* env_value,
                                                       const std::filesystem::path& name,
                                                       const char* install_reldir,
                                                       const char* build_path);

}  // namespace mmprof
