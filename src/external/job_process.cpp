#include "external/job_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "mmprof/error.hpp"
#include "probe/procfs.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/spawn.hpp"

namespace mmprof::external {
namespace {

namespace fs = std::filesystem;

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

JobExit exit_of(int status) {
  JobExit e;
  if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
    e.exit_code = 128 + e.signal;
  } else {
    e.exit_code = WEXITSTATUS(status);
  }
  return e;
}

// mmprof becomes the parent of whatever its job orphans (a daemon that double-forks), so those
// processes stay in the tree the sampler walks and kill_leftovers() finds them.
void become_subreaper() {
  static const bool done = [] { return ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0; }();
  (void)done;
}

}  // namespace

std::string JobExit::describe() const {
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  return fmt::format("exit code {}", exit_code);
}

std::string resolve_command(const std::string& name) {
  if (name.empty()) throw UsageError("the command after -- is empty");
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), F_OK) != 0) {
      throw InputError(fmt::format("command {} does not exist", name));
    }
    if (!is_executable_file(name)) {
      throw InputError(fmt::format("command {} is not an executable file", name));
    }
    return name;
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    const size_t colon = dirs.find(':', start);
    const std::string dir = dirs.substr(start, colon == std::string::npos ? colon : colon - start);
    std::string candidate = dir.empty() ? std::string(".") : dir;
    candidate.append("/").append(name);
    if (is_executable_file(candidate)) return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  throw InputError(fmt::format("command '{}' was not found on PATH ({})", name, dirs));
}

JobOutput::JobOutput(const fs::path& log, std::function<void(const std::string&)> show)
    : show_(std::move(show)) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw RunError(
        fmt::format("cannot make a pipe for the job's output: {}", std::strerror(errno)));
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  ::fcntl(read_fd_, F_SETFL, ::fcntl(read_fd_, F_GETFL) | O_NONBLOCK);
  log_fd_ = open_new_output(log);
  if (log_fd_ < 0) throw_output_errno("cannot create", log.string());
}

JobOutput::~JobOutput() {
  close_writer();
  for (int fd : {read_fd_, log_fd_})
    if (fd >= 0) ::close(fd);
}

void JobOutput::close_writer() noexcept {
  if (write_fd_ >= 0) ::close(write_fd_);
  write_fd_ = -1;
}

void JobOutput::drain(bool to_end) {
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(read_fd_, buf, sizeof buf);
    if (n > 0) {
      take(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && to_end) {
      // Another process still holds the pipe (one the job left): wait for it a little.
      pollfd p{read_fd_, POLLIN, 0};
      if (::poll(&p, 1, 200) > 0) continue;
    }
    break;  // nothing more now (EAGAIN), or the end (0: every writer closed)
  }
  if (to_end && !line_.empty()) show_line();
}

void JobOutput::take(const char* data, size_t n) {
  if (!log_full_) {
    const size_t room = static_cast<size_t>(std::min<uint64_t>(n, kMaxLogBytes - logged_));
    if (room > 0 && !write_all(log_fd_, std::string_view(data, room))) {
      // A full disk: the job goes on (its lines still reach the terminal); the log says where
      // it stops, as far as it can, and so does the terminal.
      const std::string why = std::strerror(errno);
      (void)write_all(log_fd_, "\n[mmprof: this log stops here: " + why + "]\n");
      show_("mmprof: warning: job.log stops here (" + why +
            "): the job's output is no longer kept\n");
      log_full_ = true;
    } else {
      logged_ += room;
    }
    if (!log_full_ && logged_ >= kMaxLogBytes) {
      (void)write_all(log_fd_,
                      "\n[mmprof: the job's output goes on, but this log stops at 64 MiB]\n");
      log_full_ = true;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (data[i] == '\n') {
      show_line();
    } else if (data[i] == '\r') {
      line_.clear();  // a progress bar rewrote its line: its last form is shown
    } else if (line_.size() < 4096) {
      line_ += data[i];
    }
  }
}

void JobOutput::show_line() {
  show_("  | " + line_ + "\n");
  line_.clear();
}

JobProcess::JobProcess(const std::vector<std::string>& argv,
                       const std::vector<std::pair<std::string, std::string>>& env,
                       JobOutput* output) {
  if (argv.empty()) throw UsageError("no command after --: mmprof baseline -- python train.py");
  const std::string exe = resolve_command(argv[0]);
  become_subreaper();
  // Its own process group: the group is what mmprof signals and kills. Signals mmprof handles
  // or ignores (SIGINT, SIGTERM, SIGPIPE) are back to their defaults in the job.
  SpawnSpec spec{.argv = argv, .program = exe, .own_group = true, .default_signals = true};
  for (const auto& [name, value] : env)
    spec.env.push_back(std::string(name).append("=").append(value));  // set, or replacing mmprof's
  if (output != nullptr) spec.stdout_fd = spec.stderr_fd = output->writer();
  const Spawned job = spawn(spec);
  if (output != nullptr) output->close_writer();  // the job holds it now
  if (!job.ok()) throw RunError(fmt::format("cannot start {}: {}", exe, std::strerror(job.error)));
  pid_ = job.pid;
  start_guard();
}

void JobProcess::start_guard() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  // sh reads one line: "done" when mmprof ends the job itself; end of file when mmprof died
  // (the kernel closed its end), and then the job's whole group goes.
  // Its own group: Ctrl-C at mmprof's terminal spares it.
  const Spawned guard =
      spawn({.argv = {"sh", "-c", "IFS= read -r line; [ \"$line\" = done ] || kill -KILL -$1",
                      "mmprof-guard", std::to_string(pid_)},
             .program = "/bin/sh",
             .stdin_fd = fds[0],
             .own_group = true});
  ::close(fds[0]);
  if (!guard.ok()) {
    ::close(fds[1]);
    return;
  }
  guard_pid_ = guard.pid;
  guard_fd_ = fds[1];
}

void JobProcess::dismiss_guard() noexcept {
  if (guard_fd_ < 0) return;
  (void)!::write(guard_fd_, "done\n", 5);
  ::close(guard_fd_);
  guard_fd_ = -1;
  if (guard_pid_ > 0) ::waitpid(guard_pid_, nullptr, 0);
  guard_pid_ = -1;
}

JobProcess::~JobProcess() noexcept {
  try {
    kill_leftovers();
  } catch (...) {  // a destructor never throws; the processes are killed or already gone
  }
}

bool JobProcess::reap() {
  int status = 0;
  pid_t p = 0;
  // Every child that ended: the job, or an orphan of it that the subreaper inherited.
  while ((p = ::waitpid(-1, &status, WNOHANG)) > 0) {
    if (p == pid_) exit_ = exit_of(status);
    if (p == guard_pid_) guard_pid_ = -1;  // it ended early (killed): nothing guards the job now
  }
  return !(p < 0 && errno == ECHILD);
}

std::optional<JobExit> JobProcess::poll() {
  if (!exit_) reap();
  return exit_;
}

void JobProcess::signal_group(int sig) const {
  if (pid_ > 0 && !exit_) ::killpg(pid_, sig);
}

std::optional<JobExit> JobProcess::wait_for(std::chrono::milliseconds grace) {
  const auto until = std::chrono::steady_clock::now() + grace;
  while (!poll()) {
    if (std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return exit_;
}

std::vector<std::string> JobProcess::kill_leftovers() {
  std::vector<std::string> killed;
  if (pid_ <= 0) return killed;
  dismiss_guard();  // mmprof ends the job itself now; the guard is no leftover of the job's
  const procfs::ProcFs fs;
  const auto all = fs.all_processes();
  for (const procfs::ProcStat* st : procfs::descendants(all, ::getpid())) {
    if (st->state == 'Z') continue;
    if (::kill(st->pid, SIGKILL) == 0)
      killed.push_back(fmt::format("pid {} ({})", st->pid, st->comm));
  }
  ::killpg(pid_, SIGKILL);  // members of the group that are no longer our descendants
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (reap() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return killed;
}

}  // namespace mmprof::external
