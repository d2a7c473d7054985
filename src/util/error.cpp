#include "util/error.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace mmprof {

std::string machine_limit(int err) {
  if (err == EMFILE) {
    rlimit lim{};
    getrlimit(RLIMIT_NOFILE, &lim);
    return fmt::format("the process's open-files limit, ulimit -n, is {}: raise it",
                       static_cast<uint64_t>(lim.rlim_cur));
  }
  if (err == ENFILE) return "the system's file table is full (sysctl fs.file-max)";
  if (err == ENOMEM) return "the kernel is out of memory";
  return "";
}

void throw_errno(const std::string& what, const std::string& path) {
  const int err = errno;
  const std::string text = what + " " + path + ": " + std::strerror(err);
  if (const std::string limit = machine_limit(err); !limit.empty())
    throw Error(ExitCode::failure, text + " (" + limit + ")");
  throw InputError(text);
}

void throw_output_errno(const std::string& what, const std::string& path) {
  const int err = errno;
  const std::string text = what + " " + path + ": " + std::strerror(err);
  if (const std::string limit = machine_limit(err); !limit.empty())
    throw Error(ExitCode::failure, text + " (" + limit + ")");
  throw OutputError(text);
}

}  // namespace mmprof
