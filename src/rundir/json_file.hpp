#pragma once
// Reading the JSON files of run and experiment directories, with errors that name the file.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace mmprof::rundir {

// The JSON object in `file`. Throws InputError: "<file> is missing: <why>" when it does not exist,
// "<file> is not valid JSON (...)" when it is corrupt or cut short (or not an object).
// A run's JSON and CSV files are read whole: regular files of at most this many bytes.
inline constexpr uint64_t kMaxRunFileBytes = 1ull << 30;
nlohmann::json read_json_object(const std::filesystem::path& file, const std::string& why);
// The same, or nullopt when the file does not exist.
std::optional<nlohmann::json> read_json_if_present(const std::filesystem::path& file);
// Throws InputError when `j` does not carry `schema` ("<file> is not an <schema> file"). A file of
// the version before (a run or experiment of an older mmprof) is upgraded in place: version 1 of
// the manifest, summary, experiment, inventory and report named its MiB figures *_mb (and
// *_mb_per_min), version 2 names them *_mib, and the summary's pin_mode moved from latency_ms to
// the top; nothing else changed (docs/architecture.md).
void check_schema(nlohmann::json& j, const char* schema, const std::filesystem::path& file);

}  // namespace mmprof::rundir
