#include "report/staging.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "report/json_access.hpp"

namespace mmprof::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Seconds an epoch takes at `rate` samples/s.
double epoch_s(double samples, double rate) {
  return samples / rate;
}

// Epochs after which a copy that cost `stage_s` has paid off, when each epoch on it saves
// `saved_s`; null when it saves nothing (never pays off).
json epochs_to_pay_off(double stage_s, double saved_s) {
  return saved_s > 0 ? json(stage_s / saved_s) : json(nullptr);
}

json read_stage_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return nullptr;
  const json j = json::parse(in, nullptr, false);
  return j.is_object() && j.value("schema", "") == "mmprof.stage/1" ? j : json(nullptr);
}

// The base arm's data.path: the data.path factor's first value (design.factors[].base).
std::string base_path(const json& experiment) {
  for (const auto& f : value_at(experiment, "/design/factors")) {
    if (f.value("key", "") == "data.path" && f["base"].is_string()) return f["base"];
  }
  return "";
}

// The same place: URLs as written, local paths resolved (symlinks, relative parts).
bool same_source(const std::string& a, const std::string& b) {
  if (a.find("://") != std::string::npos || b.find("://") != std::string::npos) return a == b;
  std::error_code ec1, ec2;
  const fs::path x = fs::weakly_canonical(a, ec1), y = fs::weakly_canonical(b, ec2);
  return ec1 || ec2 ? a == b : x == y;
}

// stage.json's total over its sessions; a record from before sessions were kept is one session.
json stage_total(const json& stage) {
  if (value_at(stage, "/total").is_object()) return stage["total"];
  const double copied = number_at(stage, "/copied_bytes").value_or(0);
  return {{"sessions", 1},
          {"wall_s", number_at(stage, "/wall_s").value_or(0)},
          {"copied_bytes", copied},
          {"costed", copied >= number_at(stage, "/bytes").value_or(0)}};
}

// Why stage.json cannot give the copy's cost, or empty: the copy must be of the base's data, be
// complete, and mmprof stage must have copied all of it (over however many sessions).
std::string unusable_stage(const json& stage, const std::string& copy, const std::string& base) {
  const std::string source = string_at(stage, "/source", "");
  if (!base.empty() && !same_source(source, base)) {
    return fmt::format("{}/stage.json is a copy of {}, not of the base arm's data.path {}", copy,
                       source, base);
  }
  if (value_at(stage, "/complete") == false) {
    return fmt::format(
        "the copy in {} is not complete ({} of {} files in its last session): run mmprof stage "
        "again to finish it",
        copy,
        number_at(stage, "/copied_files").value_or(0) +
            number_at(stage, "/already_there_files").value_or(0),
        number_at(stage, "/files").value_or(0));
  }
  const json total = stage_total(stage);
  if (total["costed"] != true) {
    return fmt::format(
        "{}/stage.json accounts for copying {:.1f} of its {:.1f} MB: the rest was there before "
        "mmprof stage first ran, so what the copy cost is not known",
        copy, number_at(total, "/copied_bytes").value_or(0) / 1e6,
        number_at(stage, "/bytes").value_or(0) / 1e6);
  }
  return "";
}

std::string caveat(const json& experiment, const std::optional<RunData>& base) {
  std::string text;
  const Locality* locality = base && base->summary.locality ? &*base->summary.locality : nullptr;
  if (locality != nullptr && locality->network()) {
    text =
        "The base reads over HTTP and keeps nothing locally, so each of its epochs pays the "
        "network again; a staged copy that fits in memory is read from the page cache after its "
        "first epoch, so later epochs save more than the trials measured.";
  } else if (locality != nullptr && locality->fits_in_ram == true) {
    text = fmt::format(
        "The dataset ({:.0f} MiB) fits in this host's memory ({:.0f} MiB): after the first epoch "
        "the page cache serves it wherever it is stored, so the saving per epoch holds for the "
        "first epoch of each job only unless the cache is dropped between epochs.",
        static_cast<double>(locality->dataset_bytes) / (1024.0 * 1024.0),
        locality->host_memory_mib.value_or(0));
  }
  if (value_at(experiment, "/design/cache") == "warm") {
    if (!text.empty()) text += ' ';
    text +=
        "The trials ran with --cache warm: the data was read once before each loader phase, which "
        "hides what a first, cold read costs; --cache cold measures that.";
  }
  return text;
}

}  // namespace

json staging_break_even(const json& experiment, const std::optional<RunData>& base) {
  json out = json::array();
  const std::string metric = string_at(experiment, "/design/metric/key", "");
  const auto samples = base ? number_at(base->manifest, "/data/samples") : std::nullopt;
  for (const auto& r : value_at(experiment, "/results")) {
    if (r.value("factor", json()) != "data.path" || r.value("role", "") != "factor") continue;
    const std::string copy =
        r.value("value", json("")).is_string() ? r["value"].get<std::string>() : "";
    json e = {{"arm", r.value("arm", "")}, {"copy", copy}};
    const json stage = read_stage_json(fs::path(copy) / "stage.json");
    const auto base_rate = number_at(r, "/base_median");
    const auto effect = number_at(r, "/effect_pct");
    const auto lo = number_at(r, "/ci_pct/0"), hi = number_at(r, "/ci_pct/1");
    if (stage.is_null()) {
      e["reason"] = fmt::format(
          "no stage.json in {}: copy it with mmprof stage SRC {} to count what staging costs", copy,
          copy);
    } else if (const std::string why = unusable_stage(stage, copy, base_path(experiment));
               !why.empty()) {
      e["reason"] = why;
    } else if (metric.find("samples_per_s") == std::string::npos) {
      e["reason"] = "the experiment's metric is not a throughput in samples/s (" + metric + ")";
    } else if (!samples || !base_rate || !effect || !lo || !hi || *base_rate <= 0) {
      e["reason"] = "the base's sample count or the arm's effect is missing";
    } else {
      // Every session's time: an interrupted copy resumed cost both.
      const json total = stage_total(stage);
      const double stage_s = number_at(total, "/wall_s").value_or(0);
      const double base_epoch = epoch_s(*samples, *base_rate);
      const auto saved = [&](double pct) {
        return base_epoch - epoch_s(*samples, *base_rate * (1 + pct / 100));
      };
      e["source"] = value_at(stage, "/source");
      e["stage_s"] = stage_s;
      e["stage_sessions"] = total["sessions"];
      e["stage_mb_per_s"] = value_at(stage, "/copied_mb_per_s");
      e["samples_per_epoch"] = *samples;
      e["epoch_s"] = {{"as_is", base_epoch},
                      {"staged", epoch_s(*samples, *base_rate * (1 + *effect / 100))}};
      e["saved_s_per_epoch"] = {{"median", saved(*effect)}, {"ci", {saved(*lo), saved(*hi)}}};
      // The interval runs from the largest saving (fewest epochs) to the smallest (most; null:
      // the CI allows no saving at all, and then staging may never pay off).
      e["pays_off_after_epochs"] = {
          {"median", epochs_to_pay_off(stage_s, saved(*effect))},
          {"ci", {epochs_to_pay_off(stage_s, saved(*hi)), epochs_to_pay_off(stage_s, saved(*lo))}}};
    }
    e["caveat"] = caveat(experiment, base);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace mmprof::report
