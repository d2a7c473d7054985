#pragma once
// manifest.json ("mmprof.manifest/1"): what was run, with which configuration, on which data,
// and what a step means (the baseline spec). Provenance of machine and software is filled by the
// env layer where available; keys not measured yet are null, never guessed.
#include <string>

#include <nlohmann/json.hpp>

#include "mmprof/baseline.hpp"
#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "step/step.hpp"

namespace mmprof {

nlohmann::json build_manifest(const Config& config, const Dataset& dataset,
                              const BaselineOptions& options, const Step* step,
                              const std::string& pin_mode);

// The baseline spec alone (what a training step is, batch sizes, shapes), for reuse by ab/report.
nlohmann::json baseline_spec(const Config& config, const Step* step);

}  // namespace mmprof
