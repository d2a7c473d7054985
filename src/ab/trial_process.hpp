#pragma once
// The system edge of `mmprof ab`: starting a trial as a child process. The protocol
// (experiment/ab.hpp) reaches these only through the TrialHooks it is given, so its tests can
// replace them.
#include <filesystem>
#include <string>
#include <vector>

namespace mmprof {

// The running binary's own path (/proc/self/exe), so trials run exactly this mmprof.
std::filesystem::path self_executable();

// Runs argv[0] with argv as a child process (posix_spawn), its stdout and stderr into `log`,
// and waits for it. An interrupt of this process (SIGINT/SIGTERM) is forwarded to the child as
// SIGINT, so it stops between batches and keeps its run directory; a second one too, so it ends
// at once (killed a second later if it has not). The child dies with this process, even when it
// is killed (kDieWithEnv). Returns the child's exit status, or 128 + the signal that ended it.
// Throws RunError when it cannot be started.
int run_child(const std::vector<std::string>& argv, const std::filesystem::path& log);

// MemTotal of this host in MiB (sysconf).
double host_memory_mib();

}  // namespace mmprof
