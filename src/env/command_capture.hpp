#pragma once
// Runs an external program with an argument vector (posix_spawnp, never a shell: paths with
// quotes or spaces cannot inject anything) and captures its standard output.
#include <chrono>
#include <string>
#include <vector>

namespace mmprof::env {

struct CaptureResult {
  bool started = false;  // false: the program could not be run at all (not installed)
  int exit_code = -1;    // 128+signal when killed
  bool timed_out = false;
  std::string out;
  std::string error;  // why it did not start, or stderr's first line when it failed
};

// `env` entries ("NAME=value") are added to the inherited environment. A child still running
// after `timeout` is killed (SIGKILL) and reported as timed out.
CaptureResult capture_command(const std::vector<std::string>& argv,
                              const std::vector<std::string>& env = {},
                              std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace mmprof::env
