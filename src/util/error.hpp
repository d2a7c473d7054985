#pragma once
// Private error helpers; the hierarchy itself is public (mmprof/error.hpp).
#include <string>

#include "mmprof/error.hpp"

namespace mmprof {

// Why a system call failed with `err` when the reason is a limit of the machine rather than the
// file ("the process's open-files limit, ulimit -n, is 64: raise it"), or "".
std::string machine_limit(int err);

// Throws InputError("<what> <path>: <strerror(errno)>") — for failed system calls on files; when
// errno is a limit of the machine (EMFILE, ENFILE, ENOMEM), Error(failure, exit 1) naming it.
[[noreturn]] void throw_errno(const std::string& what, const std::string& path);
// Throws OutputError("<what> <path>: <strerror(errno)>") — for failed writes of mmprof's outputs;
// a machine limit as throw_errno does.
[[noreturn]] void throw_output_errno(const std::string& what, const std::string& path);

}  // namespace mmprof
