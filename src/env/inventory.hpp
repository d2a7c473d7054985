#pragma once
// The inventory of DESIGN.md ("mmprof.inventory/2"): on what machine, with what software, code
// and data a measurement was made. `mmprof inspect` prints it; `mmprof baseline` embeds the same
// blocks in manifest.json.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/data_mix.hpp"
#include "env/storage_probe.hpp"
#include "mmprof/dataset.hpp"

namespace mmprof::env {

inline constexpr const char* kInventorySchema = "mmprof.inventory/2";

struct InventoryOptions {
  std::vector<std::string> argv;     // the command line
  std::filesystem::path repo;        // the user's repository (empty: the working directory)
  const Dataset* dataset = nullptr;  // null: no data_mix, storage of the working directory
  bool data_mix = true;              // probe the data mix (reads sample headers)
  size_t mix_limit = kMixSampleLimit;
  uint64_t mix_seed = 0;
  bool probe_storage = false;  // measure read throughput (drops caches: seconds of I/O)
  StorageProbeLimits storage_limits;
};

// Every block: schema, created_utc, run {command, cwd, hostname, environment, mmprof}, repo,
// software, hardware, storage, network {interfaces, counters_at}, data_mix. Absent facts are null
// with a reason beside them, never guessed.
nlohmann::json build_inventory(const InventoryOptions& options);

// The blocks that do not change during a run (repo, software, hardware, storage, interfaces),
// computed once per process and key (path of data, repository): the manifest is written at the
// start and at the end of a run and must not pay for git and hwloc twice.
nlohmann::json static_inventory(const std::filesystem::path& repo, const Dataset* dataset);

// {"NAME": "value"} of the variables that change loader behaviour, from this process.
nlohmann::json current_loader_environment();

}  // namespace mmprof::env
