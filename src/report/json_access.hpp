#pragma once
// Reading optional figures out of summary/manifest JSON: a missing key and a null are the same
// thing here ("not measured"), never a 0.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "mmprof/error.hpp"

namespace mmprof::report {

// A figure that is present but not a number (a string, true, an object): not a file mmprof wrote.
// An InputError; the report names the file it came from (report_builder).
class FigureTypeError : public InputError {
 public:
  FigureTypeError(std::string pointer, nlohmann::json value);
  const std::string& pointer() const noexcept { return pointer_; }
  const nlohmann::json& value() const noexcept { return value_; }

 private:
  std::string pointer_;
  nlohmann::json value_;
};

// The number at JSON pointer `pointer` ("/a/b"), or nullopt when absent or null ("not
// measured"). Throws FigureTypeError when something else is there.
std::optional<double> number_at(const nlohmann::json& j, const std::string& pointer);
// The string at `pointer`, or `fallback`.
std::string string_at(const nlohmann::json& j, const std::string& pointer,
                      const std::string& fallback = "");
// The value at `pointer`, or null when absent (never throws on a null parent).
nlohmann::json value_at(const nlohmann::json& j, const std::string& pointer);
// A value as `--set` writes it: strings bare, whole numbers without a decimal point.
std::string value_text(const nlohmann::json& v);
// The run's value of config key `key` ("loader.num_workers") from its manifest; data.* keys as
// resolved in the manifest's data block (the real path of the embedded default, "files" rather
// than "auto"); a key the run's configuration lacks (it predates the key) is its default.
nlohmann::json run_config_value(const std::string& key, const nlohmann::json& manifest);
// A JSON number or null.
nlohmann::json or_null(const std::optional<double>& v);

// A run of a user's own job (summary source external) rather than of mmprof's loader.
bool is_job(const nlohmann::json& summary);
// The configuration of the job's followed DataLoader (summary job.dataloader); null when none.
nlohmann::json followed_loader_config(const nlohmann::json& summary);
// Whether the job's followed loader is NVIDIA DALI's framework iterator (DALIGenericIterator):
// not a DataLoader, so no DataLoader argument, worker process or pin_memory is its. `tree` is a
// summary (job.dataloader) or a manifest (job.dataloader).
bool followed_loader_is_dali(const nlohmann::json& tree);
// Why a DALI loader has none of the DataLoader's stages, workers or arguments (one sentence).
inline constexpr const char* kDaliNotADataLoader =
    "a DALI pipeline, not a DataLoader: its operators run on DALI's threads in the job's process";
// The same for a torchdata.nodes Loader (a graph of nodes; its mappers' workers are its own).
inline constexpr const char* kNodesNotADataLoader =
    "a torchdata.nodes Loader, not a DataLoader: its ParallelMapper nodes run the dataset on "
    "their own threads or processes";
// Why the job's followed loader has none of the DataLoader's stages, workers or arguments
// (kDaliNotADataLoader, kNodesNotADataLoader), or "" for a DataLoader (or no job).
std::string not_a_dataloader(const nlohmann::json& tree);

// An observed fact of a run: {id, text, metric, value, unit}.
nlohmann::json fact(const std::string& id, const std::string& text, const std::string& metric,
                    const nlohmann::json& value, const std::string& unit);

}  // namespace mmprof::report
