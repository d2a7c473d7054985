#include "util/spawn.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <set>
#include <string_view>

#include "util/files.hpp"

extern char** environ;

namespace mmprof {
namespace {

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings)
    out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// The file actions and attributes of one spawn, released however it ends.
struct Plan {
  posix_spawn_file_actions_t files{};
  posix_spawnattr_t attr{};
  Plan() {
    posix_spawn_file_actions_init(&files);
    posix_spawnattr_init(&attr);
  }
  ~Plan() {
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attr);
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
};

std::string_view name_of(std::string_view assignment) {
  return assignment.substr(0, assignment.find('='));
}

// The child's environment: spec.env, the last of a name winning as with assignments, after the
// variables of this process's that it does not set.
std::vector<std::string> environment(const SpawnSpec& spec) {
  std::vector<std::string> set;
  std::set<std::string_view> names;
  for (auto it = spec.env.rbegin(); it != spec.env.rend(); ++it)
    if (names.insert(name_of(*it)).second) set.push_back(*it);
  std::reverse(set.begin(), set.end());
  std::vector<std::string> out;
  if (spec.inherit_env) {
    for (char** e = environ; *e != nullptr; ++e)
      if (!names.contains(name_of(*e))) out.emplace_back(*e);
  }
  out.insert(out.end(), set.begin(), set.end());
  return out;
}

void redirect(const SpawnSpec& spec, posix_spawn_file_actions_t& files) {
  if (!spec.stdin_file.empty())
    posix_spawn_file_actions_addopen(&files, STDIN_FILENO, spec.stdin_file.c_str(), O_RDONLY, 0);
  if (!spec.stdout_file.empty()) {
    // A new file, as open_new_output makes one: the old entry (or a planted link) unlinked here,
    // the child's open refusing to follow a link that appeared since.
    unlink_for_output(spec.stdout_file);
    posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, spec.stdout_file.c_str(),
                                     kNewOutputFlags & ~O_CLOEXEC, 0644);
  }
  if (spec.stdin_fd >= 0) posix_spawn_file_actions_adddup2(&files, spec.stdin_fd, STDIN_FILENO);
  if (spec.stdout_fd >= 0) posix_spawn_file_actions_adddup2(&files, spec.stdout_fd, STDOUT_FILENO);
  if (spec.stderr_fd >= 0) posix_spawn_file_actions_adddup2(&files, spec.stderr_fd, STDERR_FILENO);
  if (spec.stderr_to_stdout) posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
}

void set_attributes(const SpawnSpec& spec, posix_spawnattr_t& attr) {
  short flags = 0;
  if (spec.own_group) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  if (spec.default_signals) {
    sigset_t defaults, none;
    sigemptyset(&defaults);
    for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGQUIT, SIGHUP})
      sigaddset(&defaults, s);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &none);
    flags |= POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  }
  posix_spawnattr_setflags(&attr, flags);
}

}  // namespace

Spawned spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) return {-1, EINVAL};
  const std::vector<std::string> env = environment(spec);
  std::vector<char*> args = pointers(spec.argv), envp = pointers(env);
  Plan plan;
  redirect(spec, plan.files);
  set_attributes(spec, plan.attr);
  const std::string& program = spec.program.empty() ? spec.argv.front() : spec.program;
  pid_t pid = -1;
  const int rc =
      spec.search_path
          ? posix_spawnp(&pid, program.c_str(), &plan.files, &plan.attr, args.data(), envp.data())
          : posix_spawn(&pid, program.c_str(), &plan.files, &plan.attr, args.data(), envp.data());
  if (rc != 0) return {-1, rc};
  return {pid, 0};
}

}  // namespace mmprof
