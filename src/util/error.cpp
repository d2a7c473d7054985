#include "util/error.hpp"

#include <cerrno>
#include <cstring>

namespace mmprof {

void throw_errno(const std::string& what, const std::string& path) {
  throw InputError(what + " " + path + ": " + std::strerror(errno));
}

void throw_output_errno(const std::string& what, const std::string& path) {
  throw OutputError(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace mmprof
