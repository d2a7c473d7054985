#pragma once
// The system edge of `mmprof ab`: starting a trial as a child process, and the page-cache
// regime before each trial. The protocol (experiment/ab.hpp) reaches these only through the
// TrialHooks it is given, so its tests can replace them.
#include <filesystem>
#include <string>
#include <vector>

#include "ab/design.hpp"
#include "mmprof/dataset.hpp"

namespace mmprof {

// The running binary's own path (/proc/self/exe), so trials run exactly this mmprof.
std::filesystem::path self_executable();

// Runs argv[0] with argv as a child process (posix_spawn), its stdout and stderr into `log`,
// and waits for it. An interrupt of this process (SIGINT/SIGTERM) is forwarded to the child as
// SIGINT once, so it stops between batches and keeps its run directory. Returns the child's exit
// status, or 128 + the signal that ended it. Throws RunError when it cannot be started.
int run_child(const std::vector<std::string>& argv, const std::filesystem::path& log);

// Refuses a regime this process cannot honour: cold needs root to drop the page cache.
void check_cache_regime(CacheRegime regime);

// Before a trial: warm reads every file of the dataset once (a priming pass, so every arm starts
// from a page cache holding the data); cold syncs and drops the page cache
// (/proc/sys/vm/drop_caches = 1). Throws InputError naming the file that cannot be read.
void prepare_cache(CacheRegime regime, const Dataset& dataset);

// MemTotal of this host in MiB (sysconf).
double host_memory_mib();

}  // namespace mmprof
