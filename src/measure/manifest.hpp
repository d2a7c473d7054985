#pragma once
// manifest.json ("mmprof.manifest/2"): what was run, with which configuration, on which data,
// and what a step means (the baseline spec). Provenance of machine and software is filled by the
// env layer where available; keys not measured yet are null, never guessed.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "env/network.hpp"
#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"

namespace mmprof {

// What the run learned about itself while running (unknown before it starts).
struct RunFacts {
  std::string pin_mode = "not started";
  std::string step_description = "not started";
  bool step_includes_model_compute = false;
  // /proc/net/dev as the run started, so the end-of-run manifest reports the bytes moved.
  env::NetworkSnapshot network_at_start;
  // The manifest written when the run is over. Only then is the data mix probed: its header
  // reads must not warm the page cache before the measured phases.
  bool end_of_run = false;
};

// What every run's manifest carries, whatever produced it (mmprof's loader or a user's job):
// schema, time, command line, working directory, host, mmprof's version, the environment,
// the resolved configuration and the inventory (repo, software, hardware, storage, network).
// `dataset` (may be null) is what the storage block describes.
nlohmann::json provenance_manifest(const std::vector<std::string>& argv,
                                   const nlohmann::json& config_tree,
                                   const std::filesystem::path& repo, const Dataset* dataset,
                                   const RunFacts& facts);

// The baseline spec alone (what a training step is, batch sizes, shapes), for reuse by ab/report.
nlohmann::json baseline_spec(const Config& config, const RunFacts& facts);

}  // namespace mmprof
