#pragma once
// manifest.json ("mmprof.manifest/1"): what was run, with which configuration, on which data,
// and what a step means (the baseline spec). Provenance of machine and software is filled by the
// env layer where available; keys not measured yet are null, never guessed.
#include <nlohmann/json.hpp>
#include <string>

#include "env/network.hpp"
#include "mmprof/baseline.hpp"
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

// Keys of DESIGN.md's manifest; repo, software, hardware, storage, network, environment and
// data_mix are the inventory's blocks (env/inventory.hpp), computed once per process.
nlohmann::json build_manifest(const Config& config, const Dataset& dataset,
                              const BaselineOptions& options, const RunFacts& facts);

// The baseline spec alone (what a training step is, batch sizes, shapes), for reuse by ab/report.
nlohmann::json baseline_spec(const Config& config, const RunFacts& facts);

}  // namespace mmprof
