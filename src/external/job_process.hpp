#pragma once
// A user's command run as mmprof's child, the way a profiler must run it: in a process group of
// its own (so a signal reaches the whole job, and Ctrl-C at mmprof's terminal is forwarded, not
// doubled), with mmprof as the subreaper of everything it starts (so a daemon that double-forks
// stays in the tree, is sampled while alive and is killed at the end), and nothing left behind.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mmprof::external {

struct JobExit {
  int exit_code = 0;  // when it exited
  int signal = 0;     // when a signal ended it (exit_code is then 128 + signal)
  // "exit code 3", "killed by signal 9 (Killed)"
  std::string describe() const;
};

// Where `name` (a command's first word) is: itself when it holds a '/', else the first
// executable match on PATH. Throws InputError (exit 3) naming it when there is none or it is not
// executable.
std::string resolve_command(const std::string& name);

// What the job prints (stdout and stderr as one stream, through a pipe): kept whole in a log
// file of the run directory and shown on mmprof's stderr, a line at a time, each line as
// "  | LINE" (of a line rewritten with \r, its last form), apart from mmprof's own output (its
// stdout stays mmprof's: --json is JSON alone). The log stops at kMaxLogBytes, saying so.
class JobOutput {
 public:
  static constexpr uint64_t kMaxLogBytes = 64ull << 20;
  // `log`: the file to keep it in; `show`: where each line goes (mmprof's terminal).
  JobOutput(const std::filesystem::path& log, std::function<void(const std::string&)> show);
  ~JobOutput();
  JobOutput(const JobOutput&) = delete;
  JobOutput& operator=(const JobOutput&) = delete;
  // The pipe's write end, for the job's fds 1 and 2; closed here once the job has it.
  int writer() const noexcept { return write_fd_; }
  void close_writer() noexcept;
  // Reads what is there without blocking; `to_end`: until every writer closed the pipe (the
  // job and whatever inherited it ended), then shows a last line that had no newline.
  void drain(bool to_end = false);

 private:
  void take(const char* data, size_t n);
  void show_line();

  int read_fd_ = -1;
  int write_fd_ = -1;
  int log_fd_ = -1;
  uint64_t logged_ = 0;
  bool log_full_ = false;
  std::string line_;
  std::function<void(const std::string&)> show_;
};

class JobProcess {
 public:
  // Starts `argv` with the current environment plus `env` (set or replaced), its stdout and
  // stderr to `output` (null: mmprof's own). Throws InputError (exit 3) for a command that is
  // missing or not executable, RunError when it cannot start.
  JobProcess(const std::vector<std::string>& argv,
             const std::vector<std::pair<std::string, std::string>>& env,
             JobOutput* output = nullptr);
  ~JobProcess() noexcept;
  JobProcess(const JobProcess&) = delete;
  JobProcess& operator=(const JobProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  // The guard that kills the job's process group if mmprof dies without ending it (even by
  // SIGKILL): a shell blocked on a pipe only mmprof writes to, whose end the kernel closes when
  // mmprof dies. -1 when it could not be started (the job then runs unguarded, as before).
  pid_t guard_pid() const noexcept { return guard_pid_; }
  // The job's exit once it ended (the first call that sees it reaps it); nullopt while it runs.
  // Reaps, on the way, any orphan that was reparented to mmprof and exited.
  std::optional<JobExit> poll();
  // SIGINT (as Ctrl-C would) or another signal to the job's process group.
  void signal_group(int sig) const;
  // Waits up to `grace` for the job to end, polling every 20 ms; nullopt if it did not.
  std::optional<JobExit> wait_for(std::chrono::milliseconds grace);
  // Kills what is left (the job's group, and any process reparented to mmprof), waits for it,
  // and returns one line per process killed ("pid 123 (python3)"). Idempotent.
  std::vector<std::string> kill_leftovers();

 private:
  // Reaps every child that ended (recording the job's exit); false once no child is left.
  bool reap();
  void start_guard();
  // Tells the guard the job ends by mmprof's hand (it exits without killing) and reaps it.
  void dismiss_guard() noexcept;

  pid_t pid_ = -1;
  pid_t guard_pid_ = -1;
  int guard_fd_ = -1;  // the pipe's write end, held by mmprof alone (close-on-exec)
  std::optional<JobExit> exit_;
};

}  // namespace mmprof::external
