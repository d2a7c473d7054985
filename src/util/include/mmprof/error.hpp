#pragma once
// The error hierarchy of mmprof. Core code throws these; main maps them to an exit code and
// prints what() as one sentence that names the file, option or sample.
#include <stdexcept>
#include <string>

namespace mmprof {

enum class ExitCode : int {
  ok = 0,
  failure = 1,       // the run could not continue (a bad sample under on_error=fail, a dead
                     // worker), or `report --gate` found a regression
  usage = 2,         // a bad option, config key or value
  input = 3,         // a dataset or file that cannot be read
  unavailable = 4,   // something asked for that this machine does not have (GPU, libtorch)
  inconclusive = 5,  // `report --gate`: nothing regressed but something is undecided
  output = 6,        // an output could not be written (disk full, quota, a file size limit)
  interrupted = 130,
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

class UsageError : public Error {
 public:
  explicit UsageError(const std::string& m) : Error(ExitCode::usage, m) {}
};

class InputError : public Error {
 public:
  explicit InputError(const std::string& m) : Error(ExitCode::input, m) {}
};

class UnavailableError : public Error {
 public:
  explicit UnavailableError(const std::string& m) : Error(ExitCode::unavailable, m) {}
};

// Writing an output failed (ENOSPC, EDQUOT, EFBIG, EIO): what was written before stays whole.
class OutputError : public Error {
 public:
  explicit OutputError(const std::string& m) : Error(ExitCode::output, m) {}
};

class RunError : public Error {
 public:
  explicit RunError(const std::string& m) : Error(ExitCode::failure, m) {}
};

}  // namespace mmprof
