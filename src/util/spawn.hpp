#pragma once
// Every child process mmprof starts goes through spawn(): posix_spawn with an argument vector
// (never a shell's parsing of a command line), its standard streams redirected as asked, in a
// process group of its own when asked, with the signals mmprof handles back to their defaults
// when asked. The callers are a user's job and its guard (external/job_process), a rank of
// `--nproc-per-node` (session/ranks), an A/B trial (ab/trial_process) and a probing tool whose
// output is captured (env/command_capture); each says in its own words what could not start.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace mmprof {

struct SpawnSpec {
  std::vector<std::string> argv{};  // the child's argv (argv[0] is also the program, unless set)
  std::string program{};            // the file to run; empty: argv[0]
  bool search_path = false;         // a program without '/' is looked up on PATH (posix_spawnp)
  // The child's environment: this process's when `inherit_env`, with these NAME=VALUE set or
  // replacing a variable of the same name (of two of one name, the later); only these otherwise.
  std::vector<std::string> env{};
  bool inherit_env = true;
  // Standard streams, applied in this order: a file opened on fd 0 (read) or fd 1 (created or
  // truncated, mode 0644), then a descriptor duplicated onto fd 0, 1 or 2 (-1: inherited).
  std::filesystem::path stdin_file{}, stdout_file{};
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  bool stderr_to_stdout = false;  // fd 2 is a copy of fd 1 (after the above)
  bool own_group = false;         // a process group of its own (the child's pid)
  // SIGINT, SIGTERM, SIGPIPE, SIGQUIT and SIGHUP back to their defaults, and no signal blocked:
  // what mmprof handles or ignores is not the child's business.
  bool default_signals = false;
};

struct Spawned {
  pid_t pid = -1;
  int error = 0;  // the errno of a failed start (pid is then -1)
  bool ok() const noexcept { return pid > 0; }
};

Spawned spawn(const SpawnSpec& spec);

}  // namespace mmprof
