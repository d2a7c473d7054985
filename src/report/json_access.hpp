#pragma once
// What the report reads out of summary/manifest JSON beyond a figure (rundir/json_read.hpp): a
// configuration value, a job's followed loader and what it is.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "mmprof/summary.hpp"
#include "rundir/json_read.hpp"

namespace mmprof::report {

// The readers of rundir/json_read.hpp, as the report's code names them.
using rundir::FigureTypeError;
using rundir::number_at;
using rundir::string_at;
using rundir::value_at;

// A value as `--set` writes it: strings bare, whole numbers without a decimal point.
std::string value_text(const nlohmann::json& v);
// The run's value of config key `key` ("loader.num_workers") from its manifest; data.* keys as
// resolved in the manifest's data block (the real path of the embedded default, "files" rather
// than "auto"); a key the run's configuration lacks (it predates the key) is its default.
nlohmann::json run_config_value(const std::string& key, const nlohmann::json& manifest);
// A JSON number or null.
nlohmann::json or_null(const std::optional<double>& v);

// The rate `rate` of `phase` (compute, pipeline, end_to_end) in the summary's throughput; empty
// for a phase a run does not have.
std::optional<double> phase_rate(const Summary& s, std::string_view phase,
                                 std::optional<double> PhaseRates::*rate);

// The configuration of the job's followed DataLoader as the hook recorded it (its arguments, its
// dataset, its library): from a manifest's job part (`job`), or a summary's; null when none.
nlohmann::json followed_loader_config(const nlohmann::json& job);
nlohmann::json followed_loader_config(const Summary& s);
// Whether the loader of `config` (followed_loader_config) is NVIDIA DALI's framework iterator
// (DALIGenericIterator): not a DataLoader, so no DataLoader argument, worker process or
// pin_memory is its.
bool loader_is_dali(const nlohmann::json& config);
// Why a DALI loader has none of the DataLoader's stages, workers or arguments (one sentence).
inline constexpr const char* kDaliNotADataLoader =
    "a DALI pipeline, not a DataLoader: its operators run on DALI's threads in the job's process";
// The same for a torchdata.nodes Loader (a graph of nodes; its mappers' workers are its own).
inline constexpr const char* kNodesNotADataLoader =
    "a torchdata.nodes Loader, not a DataLoader: its ParallelMapper nodes run the dataset on "
    "their own threads or processes";
// Why the loader of `config` (followed_loader_config) has none of the DataLoader's stages,
// workers or arguments (kDaliNotADataLoader, kNodesNotADataLoader), or "" for a DataLoader (or
// no job).
std::string not_a_dataloader(const nlohmann::json& config);

// An observed fact of a run: {id, text, metric, value, unit}.
nlohmann::json fact(const std::string& id, const std::string& text, const std::string& metric,
                    const nlohmann::json& value, const std::string& unit);

}  // namespace mmprof::report
