#include "report/json_access.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "config/config_keys.hpp"

namespace mmprof::report {

using nlohmann::json;

std::string value_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) {
    const double d = v.get<double>();
    return d == std::floor(d) ? fmt::format("{:.0f}", d) : fmt::format("{}", d);
  }
  return v.dump(-1, ' ', false, json::error_handler_t::replace);  // a user's bytes
}

json run_config_value(const std::string& key, const json& manifest) {
  // A user's job: its followed DataLoader's own value (mmprof's configuration does not apply).
  if (string_at(manifest, "/source", "") == "external") {
    const config::KeySpec* spec = config::find_key(key);
    if (spec == nullptr || spec->dataloader.empty()) return nullptr;
    const json loaders = value_at(manifest, "/job/dataloader/loaders");
    for (const auto& l : loaders.is_array() ? loaders : json::array()) {
      if (l.is_object() && l.value("followed", false))
        return value_at(l, "/config/" + std::string(spec->dataloader));
    }
    return nullptr;
  }
  if (key.rfind("data.", 0) == 0) {
    json resolved = value_at(manifest, "/data/" + key.substr(5));
    if (!resolved.is_null()) return resolved;
  }
  std::string pointer = "/config/" + key;
  std::replace(pointer.begin(), pointer.end(), '.', '/');
  json value = value_at(manifest, pointer);
  // A key the run's configuration lacks (the run predates it) behaved as its default.
  if (value.is_null() && value_at(manifest, "/config").is_object()) {
    if (const config::KeySpec* spec = config::find_key(key)) return spec->default_value;
  }
  return value;
}

json or_null(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

std::optional<double> phase_rate(const Summary& s, std::string_view phase,
                                 std::optional<double> PhaseRates::*rate) {
  const PhaseRates* rates = s.throughput.phase(phase);
  return rates != nullptr ? rates->*rate : std::nullopt;
}

json followed_loader_config(const json& job) {
  return value_at(rundir::followed_loader(job), "/config");
}

json followed_loader_config(const Summary& s) {
  const JobLoader* l = s.job ? s.job->dataloader.followed() : nullptr;
  return l != nullptr ? l->config : json(nullptr);
}

bool loader_is_dali(const json& config) {
  return value_at(config, "/library/name") == "nvidia-dali";
}

std::string not_a_dataloader(const json& config) {
  if (loader_is_dali(config)) return kDaliNotADataLoader;
  if (value_at(config, "/library/class") == "torchdata.nodes.Loader") return kNodesNotADataLoader;
  return "";
}

json fact(const std::string& id, const std::string& text, const std::string& metric,
          const json& value, const std::string& unit) {
  return {{"id", id}, {"text", text}, {"metric", metric}, {"value", value}, {"unit", unit}};
}

}  // namespace mmprof::report
