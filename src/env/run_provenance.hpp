#pragma once
// What was run and under which settings: the environment variables that change how a loader
// behaves (thread pools, allocators, visible GPUs, distributed ranks, mmprof's own switches),
// and mmprof's own version and commit.
#include <nlohmann/json.hpp>
#include <string_view>

namespace mmprof::env {

// True for the variables the inventory records: exact names (OMP_NUM_THREADS, LD_PRELOAD, ...)
// and prefixes (MALLOC_, PYTORCH_, MMPROF_, OPENBLAS_, ...).
bool affects_loader(std::string_view name) noexcept;

// {"NAME": "value"} for each recorded variable in `envp` (a NULL-terminated "NAME=value" list),
// sorted by name. Values are recorded verbatim.
nlohmann::json loader_environment(char** envp);

// {"version", "commit", "dirty"} of this mmprof build (embedded at build time).
nlohmann::json mmprof_build();

}  // namespace mmprof::env
