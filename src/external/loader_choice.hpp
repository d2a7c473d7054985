#pragma once
// Which DataLoader of each main process of a user's job mmprof follows (pure functions of the
// hook's records, docs/external-hook.md): the main processes in rank order, each one's loaders
// with their batch and epoch counts, and the one chosen (by --loader, else the most batches).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "external/hook_records.hpp"
#include "mmprof/summary_job.hpp"

namespace mmprof::external {

// A main process of the job: a `main` section of a hook file that did not become a worker later
// (a spawn child re-running the script records as main first).
struct MainProcess {
  int pid = 0;
  int section = -1;
  std::optional<int> rank;
};
// In rank order (processes without a rank last, by pid).
std::vector<MainProcess> main_processes(const HookRecords& records);

// The choice (LoaderChoice, its LoaderSummary per loader) is summary.json's job.loaders[]
// (mmprof/summary_job.hpp).
LoaderChoice choose_loader(const HookRecords& records, const MainProcess& process,
                           const std::string& select);

}  // namespace mmprof::external
