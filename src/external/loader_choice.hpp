#pragma once
// Which DataLoader of each main process of a user's job mmprof follows (pure functions of the
// hook's records, docs/external-hook.md): the main processes in rank order, each one's loaders
// with their batch and epoch counts, and the one chosen (by --loader, else the most batches).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "external/hook_records.hpp"

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

struct LoaderSummary {
  int loader = 0;
  std::string origin, dataset;
  std::optional<int> num_workers;
  std::optional<int64_t> batch_size;
  int64_t batches = 0, epochs = 0;
  bool follow = false;  // MMPROF_HOOK_MAX_BATCHES applied to it
  nlohmann::json to_json() const;
};

// Which loader of one main process is followed, and why.
struct LoaderChoice {
  int pid = 0;
  std::optional<int> rank;
  std::vector<LoaderSummary> loaders;  // by id
  std::optional<int> chosen;           // empty: none matched --loader, or none returned a batch
  std::string reason;
  nlohmann::json to_json() const;
};
LoaderChoice choose_loader(const HookRecords& records, const MainProcess& process,
                           const std::string& select);

}  // namespace mmprof::external
