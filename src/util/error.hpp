#pragma once
// Private error helpers; the hierarchy itself is public (mmprof/error.hpp).
#include <string>

#include "mmprof/error.hpp"

namespace mmprof {

// Throws InputError("<what> <path>: <strerror(errno)>") — for failed system calls on files.
[[noreturn]] void throw_errno(const std::string& what, const std::string& path);
// Throws OutputError("<what> <path>: <strerror(errno)>") — for failed writes of mmprof's outputs.
[[noreturn]] void throw_output_errno(const std::string& what, const std::string& path);

}  // namespace mmprof
