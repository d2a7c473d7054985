#include "ab/trial_record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <system_error>
#include <vector>

#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "rundir/json_read.hpp"
#include "stats/descriptive.hpp"

namespace mmprof {
namespace {

// step_ms and wait_ms tails of `phase`'s steps.
void step_tails(const std::vector<StepRow>& rows, const std::string& phase, TrialRecord& t) {
  std::vector<double> step, wait;
  for (const StepRow& r : rows) {
    if (r.phase != phase) continue;
    step.push_back(r.step_ms);
    wait.push_back(r.wait_ms);
  }
  std::sort(step.begin(), step.end());
  std::sort(wait.begin(), wait.end());
  t.step_p95 = quantile_sorted(step, 0.95);
  t.step_p99 = quantile_sorted(step, 0.99);
  t.wait_p95 = quantile_sorted(wait, 0.95);
  t.wait_p99 = quantile_sorted(wait, 0.99);
}

// A user's job: the DataLoader argument its torch refused (the arm then does not test what it
// says), as a sentence; empty when every override was applied.
std::string refused_override(const JobLoader* loader) {
  if (loader == nullptr) return "";
  const nlohmann::json rejected = rundir::value_at(loader->overrides, "/rejected");
  if (!rejected.is_object()) return "";
  for (const auto& [key, why] : rejected.items()) {
    return fmt::format("the job's DataLoader did not take {}: {}", key,
                       why.is_string() ? why.get<std::string>() : why.dump());
  }
  return "";
}

// The followed DataLoader's dataset when it is iterable-style (TrialRecord::iterable_dataset).
std::string iterable_dataset(const JobLoader* loader) {
  if (loader == nullptr || !loader->config.is_object()) return "";
  const nlohmann::json& c = loader->config;
  if (c.value("sampler", nlohmann::json()) != "_InfiniteConstantSampler") return "";
  std::string name = c.value("dataset", nlohmann::json()).is_string() ? c["dataset"] : "?";
  const nlohmann::json lib = c.value("library", nlohmann::json());
  if (lib.is_object() && lib.value("class", "") != name)
    name += fmt::format(", a {} {}", lib.value("name", "?"), lib.value("class", "?"));
  return name;
}

}  // namespace

MetricChoice choose_metric(const Config& base, bool job) {
  if (job) {
    return {"end_to_end", "throughput.end_to_end.samples_per_s",
            "a user's job: the samples/s of its own training loop"};
  }
  if (base.step.kind == StepKind::none) {
    return {"pipeline", "throughput.pipeline.samples_per_s",
            "step.kind is none: the loader alone is what is measured"};
  }
  return {"end_to_end", "throughput.end_to_end.samples_per_s",
          fmt::format("step.kind is {}: end-to-end samples/s is what training sees",
                      to_string(base.step.kind))};
}

nlohmann::json to_json(const MetricChoice& m) {
  return {{"key", m.key}, {"phase", m.phase}, {"why", m.why}, {"unit", "samples/s"}};
}

void read_trial_outputs(const std::filesystem::path& run_dir, const MetricChoice& metric,
                        TrialRecord& t) {
  // A trial that failed at once left no run directory: every figure stays unset.
  if (!RunDir::is_run(run_dir)) return;
  const RunDir run = RunDir::open(run_dir);
  if (run.has_summary()) {
    const Summary& summary = run.summary();
    const PhaseRates* rates = summary.throughput.phase(metric.phase);
    if (rates != nullptr && rates->samples_per_s && *rates->samples_per_s > 0)
      t.metric = *rates->samples_per_s;
    t.pss_peak_mib = summary.memory.total_pss_peak_mib.value_or(NAN);
    t.stall_fraction = summary.stall_fraction.value_or(NAN);
    t.host_peak_mib = summary.memory.host_peak_mib.value_or(NAN);
    t.time_to_first_batch_ms = summary.time_to_first_batch_ms.value_or(NAN);
    if (summary.shuffle) t.shuffle_gap_ratio = summary.shuffle->gap_ratio.value_or(NAN);
    if (summary.read_pattern)
      t.sequential_fraction = summary.read_pattern->sequential_fraction.value_or(NAN);
    if (const LocalityPhase* p = summary.locality ? summary.locality->phase(metric.phase) : nullptr)
      t.resident_at_window = p->resident_at_window.value_or(NAN);
    t.errors = summary.errors.count;
    const JobLoader* loader = summary.job ? summary.job->dataloader.followed() : nullptr;
    t.invalid = refused_override(loader);
    t.iterable_dataset = iterable_dataset(loader);
    if (summary.status == "failed") t.failure = summary.message;
  }
  if (const auto steady = run.steady()) {
    if (steady->contains(metric.phase)) {
      t.steady = (*steady)[metric.phase]["steady"].get<bool>();
      t.steady_extended = (*steady)[metric.phase]["extended"].get<bool>();
    }
  }
  step_tails(run.steps(), metric.phase, t);
  // A trial stopped before its first measured sample may have no stages.csv: nothing counted.
  std::error_code ec;
  if (std::filesystem::exists(run_dir / run_file::stages, ec)) {
    for (const StageRow& row : run.stages()) {
      if (row.phase == metric.phase && !row.modality.empty()) {
        t.measured_by_modality[row.modality]++;
      }
    }
  }
  t.digests = run.digests();
}

std::string unexercised_factor(const std::string& key, const TrialRecord& t) {
  if (t.measured_by_modality.empty()) return "";
  for (const std::string modality : {"image", "video"}) {
    if (!key.starts_with(modality + ".")) continue;
    const auto n = t.measured_by_modality.find(modality);
    if (n != t.measured_by_modality.end() && n->second > 0) return "";
    return fmt::format(
        "its measured steps held 0 {0}s, so {1} was never exercised: a factor of {0}s shows "
        "its effect only on data with {0}s in the measured steps",
        modality, key);
  }
  return "";
}

std::string failure_text(const TrialRecord& t) {
  return t.failure.empty() ? "" : " (" + t.failure + ")";
}

nlohmann::json to_json(const TrialRecord& t, const std::string& arm_id) {
  const auto opt_bool = [](const std::optional<bool>& b) {
    return b ? nlohmann::json(*b) : nlohmann::json();
  };
  return {{"round", t.round},
          {"position", t.position},
          {"arm", arm_id},
          {"run_dir", t.run_dir},
          {"status", t.status},
          {"exit_code", t.exit_code},
          {"wall_s", t.wall_s},
          {"metric", t.metric ? nlohmann::json(*t.metric) : nlohmann::json()},
          {"steady", opt_bool(t.steady)},
          {"steady_extended", opt_bool(t.steady_extended)},
          {"latency_ms",
           {{"step_p95", finite_or_null(t.step_p95)},
            {"step_p99", finite_or_null(t.step_p99)},
            {"wait_p95", finite_or_null(t.wait_p95)},
            {"wait_p99", finite_or_null(t.wait_p99)}}},
          {"pss_peak_mib", finite_or_null(t.pss_peak_mib)},
          {"stall_fraction", finite_or_null(t.stall_fraction)},
          {"host_peak_mib", finite_or_null(t.host_peak_mib)},
          {"time_to_first_batch_ms", finite_or_null(t.time_to_first_batch_ms)},
          {"shuffle_gap_ratio", finite_or_null(t.shuffle_gap_ratio)},
          {"sequential_fraction", finite_or_null(t.sequential_fraction)},
          {"resident_at_window", finite_or_null(t.resident_at_window)},
          {"errors", t.errors},
          {"failure", t.failure.empty() ? nlohmann::json() : nlohmann::json(t.failure)}};
}

}  // namespace mmprof
