#include "rundir/json_file.hpp"

#include <fmt/format.h>

#include "mmprof/error.hpp"
#include "util/files.hpp"

namespace mmprof::rundir {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Version 1's names of MiB figures, renamed as version 2 names them, at every depth.
void mib_keys_of_version_1(json& j) {
  if (j.is_array()) {
    for (auto& v : j)
      mib_keys_of_version_1(v);
    return;
  }
  if (!j.is_object()) return;
  json renamed = json::object();
  for (auto& [key, value] : j.items()) {
    mib_keys_of_version_1(value);
    std::string name = key;
    for (const std::string suffix : {"_mb", "_mb_per_min"}) {
      if (name.ends_with(suffix)) {
        name = name.substr(0, name.size() - suffix.size()) + "_mib" + suffix.substr(3);
        break;
      }
    }
    renamed[name] = std::move(value);
  }
  j = std::move(renamed);
}

// Version 1 of the summary kept pin_mode, a string, among the latencies.
void pin_mode_of_version_1(json& j) {
  const auto latency = j.find("latency_ms");
  if (latency == j.end() || !latency->is_object() || !latency->contains("pin_mode")) return;
  j["pin_mode"] = (*latency)["pin_mode"];
  latency->erase("pin_mode");
}

}  // namespace

json read_json_object(const fs::path& file, const std::string& why) {
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    throw InputError(fmt::format("{} is missing{}{}", file.string(), why.empty() ? "" : ": ", why));
  }
  const std::string text = read_input_file(file, "run file", kMaxRunFileBytes);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number no double holds (1e999).
    throw InputError(
        fmt::format("{} is not valid JSON (corrupt or cut short: {})", file.string(), e.what()));
  }
  if (!j.is_object()) {
    throw InputError(fmt::format("{} is not valid JSON for mmprof (not an object)", file.string()));
  }
  return j;
}

std::optional<json> read_json_if_present(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  return read_json_object(file, "");
}

void check_schema(json& j, const char* schema, const fs::path& file) {
  const auto it = j.find("schema");
  const std::string found = it != j.end() && it->is_string() ? it->get<std::string>() : "";
  if (found == schema) return;
  const std::string wanted = schema;
  if (wanted.ends_with("/2") && found == wanted.substr(0, wanted.size() - 1) + "1") {
    mib_keys_of_version_1(j);
    pin_mode_of_version_1(j);
    j["schema"] = schema;
    return;
  }
  throw InputError(fmt::format("{} is not an {} file (schema '{}')", file.string(), schema, found));
}

}  // namespace mmprof::rundir
