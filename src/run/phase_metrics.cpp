#include "run/phase_metrics.hpp"

#include <algorithm>
#include <numeric>

#include "stats/descriptive.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

json rate_or_null(const PhaseMetrics& p, double value) {
  return p.ran && p.window_s > 0 ? json(value) : json(nullptr);
}

json phase_json(const PhaseMetrics& p) {
  if (!p.ran) return nullptr;
  return {{"steps", p.steps},
          {"batches", p.batches},
          {"samples", p.samples},
          {"bytes", p.bytes},
          {"window_s", p.window_s},
          {"warmup_steps", p.warmup_steps},
          {"warmup_s", p.warmup_s},
          {"time_to_first_batch_ms",
           p.time_to_first_batch_ms < 0 ? json(nullptr) : json(p.time_to_first_batch_ms)},
          {"failures", p.failures},
          {"minflt_per_sample",
           p.samples > 0 ? json(static_cast<double>(p.minflt) / static_cast<double>(p.samples))
                         : json(nullptr)},
          {"majflt", p.majflt}};
}

double sum(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0);
}

// --- resources (the sampler's aggregate) ---

json mb_from_kb(const std::optional<int64_t>& kb) {
  return kb ? json(static_cast<double>(*kb) / 1024.0) : json(nullptr);
}

json mb_from_bytes(const std::optional<int64_t>& bytes) {
  return bytes ? json(static_cast<double>(*bytes) / (1024.0 * 1024.0)) : json(nullptr);
}

template <typename T>
json opt_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json process_memory(const ProcessPeaks& p) {
  json j = {{"pid", p.pid},
            {"rss_peak_mb", mb_from_kb(p.rss_kb)},
            {"pss_peak_mb", mb_from_kb(p.pss_kb)},
            {"uss_peak_mb", mb_from_kb(p.uss_kb)},
            {"swap_peak_mb", mb_from_kb(p.swap_kb)}};
  if (p.role == "worker") {
    j["index"] = p.worker;
    j["phase"] = p.first_phase;
  } else if (p.role == "external") {
    j["comm"] = p.comm;
    j["phase"] = p.first_phase;
  }
  return j;
}

// Memory peaks cover the whole run (every sample, warm-up and phase boundaries included): a peak
// is a peak whenever it happens. Sampled peaks can miss spikes shorter than the interval.
json memory_json(const ResourceUsage& r) {
  json main = nullptr, workers = json::array(), external = json::array();
  for (const auto& p : r.processes()) {
    if (p.role == "main") {
      main = process_memory(p);
    } else {
      (p.role == "worker" ? workers : external).push_back(process_memory(p));
    }
  }
  const HostPeaks& h = r.host();
  json host_peak = nullptr, source = nullptr;
  if (h.cgroup_peak_bytes) {
    host_peak = mb_from_bytes(h.cgroup_peak_bytes);
    source = "cgroup memory.peak (since the cgroup was created)";
  } else if (h.used_peak_kb) {
    host_peak = mb_from_kb(h.used_peak_kb);
    source = "meminfo MemTotal - MemAvailable, sampled";
  }
  return {{"window", "run"},
          {"samples", r.snapshots()},
          {"interval_ms", r.facts.interval_ms},
          {"main", main},
          {"workers", workers},
          {"external", external},
          {"total_pss_peak_mb", mb_from_kb(r.total_pss_peak_kb())},
          {"host_peak_mb", host_peak},
          {"host_peak_source", source},
          {"host_used_peak_mb", mb_from_kb(h.used_peak_kb)},
          {"host_total_mb", mb_from_kb(h.mem_total_kb)},
          {"page_cache_peak_mb", mb_from_kb(h.cached_peak_kb)},
          {"cgroup_memory_current_peak_mb", mb_from_bytes(h.cgroup_current_peak_bytes)},
          {"cgroup_memory_peak_mb", mb_from_bytes(h.cgroup_peak_bytes)},
          {"shm_used_peak_mb", h.shm_used_peak_bytes
                                   ? json(static_cast<double>(*h.shm_used_peak_bytes) / 1048576.0)
                                   : json(nullptr)},
          {"sampler_error", r.error.empty() ? json(nullptr) : json(r.error)}};
}

json per_second(const std::optional<uint64_t>& v, double wall_s, double scale) {
  return v && wall_s > 0 ? json(static_cast<double>(*v) / scale / wall_s) : json(nullptr);
}

json cpu_window_json(const WindowUse& w) {
  const double wall = w.wall_s();
  json per_process = json::array();
  for (const auto& p : w.processes) {
    json j = {{"pid", p.pid},
              {"role", p.role},
              {"cpu_s", p.cpu_s},
              {"cores", wall > 0 ? json(p.cpu_s / wall) : json(nullptr)}};
    if (p.role == "worker") j["index"] = p.worker;
    per_process.push_back(std::move(j));
  }
  return {{"window", w.name},
          {"complete", w.closed},
          {"wall_s", wall},
          {"cpu_s", w.cpu_s()},
          {"utilization_cores", wall > 0 ? json(w.cpu_s() / wall) : json(nullptr)},
          {"per_process", per_process}};
}

// `samples`: data samples delivered in the window (page faults per sample); 0 when not counted.
json io_window_json(const WindowUse& w, int64_t samples) {
  const procfs::ProcIo io = w.io();
  const double wall = w.wall_s();
  const auto per_sample = [&](int64_t n) {
    return samples > 0 ? json(static_cast<double>(n) / static_cast<double>(samples))
                       : json(nullptr);
  };
  return {{"window", w.name},
          {"complete", w.closed},
          {"wall_s", wall},
          {"read_bytes", opt_json(io.read_bytes)},
          {"read_mb_per_s", per_second(io.read_bytes, wall, 1e6)},
          {"write_bytes", opt_json(io.write_bytes)},
          {"rchar", opt_json(io.rchar)},
          {"rchar_mb_per_s", per_second(io.rchar, wall, 1e6)},
          {"wchar", opt_json(io.wchar)},
          {"syscr", opt_json(io.syscr)},
          {"syscw", opt_json(io.syscw)},
          {"minflt", w.minflt()},
          {"majflt", w.majflt()},
          {"minflt_per_sample", per_sample(w.minflt())},
          {"majflt_per_sample", per_sample(w.majflt())}};
}

// cpu and io: the top-level figures cover the pipeline phase's measured window (warm-up
// excluded), or the whole run when the pipeline never reached its window; `phases` has each.
void resources_json(rundir::SummaryParts& s, const ResourceUsage& r,
                    const PhaseMetrics* const phases[3]) {
  json cpu_phases, io_phases;
  for (int i = 0; i < 3; ++i) {
    const auto w = r.window(phases[i]->name);
    cpu_phases[phases[i]->name] = w ? cpu_window_json(*w) : json(nullptr);
    io_phases[phases[i]->name] = w ? io_window_json(*w, phases[i]->samples) : json(nullptr);
  }
  const auto run = r.window("run");
  cpu_phases["run"] = run ? cpu_window_json(*run) : json(nullptr);
  io_phases["run"] = run ? io_window_json(*run, 0) : json(nullptr);
  const char* top = !cpu_phases["pipeline"].is_null() ? "pipeline" : "run";

  s.memory = memory_json(r);
  json cpu = cpu_phases[top].is_null() ? json::object() : cpu_phases[top];
  cpu["effective_cores"] =
      r.facts.cgroup_cpu_quota_cores
          ? std::min(*r.facts.cgroup_cpu_quota_cores, static_cast<double>(r.facts.affinity_cpus))
          : static_cast<double>(r.facts.affinity_cpus);
  cpu["effective_cores_source"] = r.facts.cgroup_cpu_quota_cores
                                      ? "cgroup cpu.max, capped by sched_getaffinity"
                                      : "sched_getaffinity";
  cpu["phases"] = cpu_phases;
  if (!cpu.contains("utilization_cores")) {
    cpu["utilization_cores"] = nullptr;
    cpu["per_process"] = json::array();
  }
  s.cpu = cpu;
  json io = io_phases[top].is_null() ? json{{"read_bytes", nullptr}, {"read_mb_per_s", nullptr}}
                                     : io_phases[top];
  io["phases"] = io_phases;
  s.io = io;
}

}  // namespace

void PhaseMetrics::add_batch(const Batch& batch, bool pinned) {
  batches++;
  failures += static_cast<int64_t>(batch.failures.size());
  collate_ms.push_back(batch.collate_ms);
  if (pinned) pin_ms.push_back(batch.pin_ms);
  for (const auto& s : batch.samples) {
    read_ms.push_back(s.read_ms);
    decode_ms.push_back(s.decode_ms);
    augment_ms.push_back(s.augment_ms);
    minflt += s.minflt;
    majflt += s.majflt;
  }
}

double PhaseMetrics::samples_per_s() const {
  return window_s > 0 ? static_cast<double>(samples) / window_s : 0;
}
double PhaseMetrics::batches_per_s() const {
  return window_s > 0 ? static_cast<double>(batches) / window_s : 0;
}
double PhaseMetrics::mb_per_s() const {
  return window_s > 0 ? static_cast<double>(bytes) / 1e6 / window_s : 0;
}

rundir::SummaryParts summarize(const PhaseMetrics& compute, const PhaseMetrics& pipeline,
                               const PhaseMetrics& end_to_end, const RunOutcome& outcome,
                               const ResourceUsage* resources) {
  rundir::SummaryParts s;
  s.status = outcome.status;
  s.message = outcome.message;
  s.phases = {{"compute", phase_json(compute)},
              {"pipeline", phase_json(pipeline)},
              {"end_to_end", phase_json(end_to_end)}};

  json& t = s.throughput;
  t["compute"] = {{"samples_per_s", rate_or_null(compute, compute.samples_per_s())},
                  {"batches_per_s", rate_or_null(compute, compute.batches_per_s())}};
  t["pipeline"] = {{"samples_per_s", rate_or_null(pipeline, pipeline.samples_per_s())},
                   {"batches_per_s", rate_or_null(pipeline, pipeline.batches_per_s())},
                   {"mb_per_s", rate_or_null(pipeline, pipeline.mb_per_s())}};
  t["end_to_end"] = {{"samples_per_s", rate_or_null(end_to_end, end_to_end.samples_per_s())},
                     {"batches_per_s", rate_or_null(end_to_end, end_to_end.batches_per_s())},
                     {"mb_per_s", rate_or_null(end_to_end, end_to_end.mb_per_s())}};
  // DS-Analyzer's prediction: the slower of the data pipeline and the compute ceiling.
  json predicted = nullptr;
  if (!t["compute"]["samples_per_s"].is_null() && !t["pipeline"]["samples_per_s"].is_null()) {
    predicted = std::min(compute.samples_per_s(), pipeline.samples_per_s());
  }
  t["predicted_end_to_end"] = {{"samples_per_s", predicted}};

  const double e2e_step_total = sum(end_to_end.step_ms);
  s.stall_fraction = end_to_end.ran && e2e_step_total > 0
                         ? json(sum(end_to_end.wait_ms) / e2e_step_total)
                         : json(nullptr);
  s.time_to_first_batch_ms =
      pipeline.time_to_first_batch_ms < 0 ? json(nullptr) : json(pipeline.time_to_first_batch_ms);

  // Step-level latencies come from the end-to-end phase when a step exists, else the pipeline.
  const PhaseMetrics& steps = end_to_end.ran ? end_to_end : pipeline;
  json& l = s.latency;
  l["phase"] = steps.ran ? json(steps.name) : json(nullptr);
  l["step"] = to_json(describe(steps.step_ms));
  l["wait"] = to_json(describe(steps.wait_ms));
  l["compute"] = to_json(describe(end_to_end.ran ? end_to_end.compute_ms : compute.compute_ms));
  l["h2d"] = to_json(describe(steps.h2d_ms));
  l["stages_phase"] = pipeline.ran ? json("pipeline") : json(nullptr);
  l["stages"] = {{"read", to_json(describe(pipeline.read_ms), false)},
                 {"decode", to_json(describe(pipeline.decode_ms), false)},
                 {"augment", to_json(describe(pipeline.augment_ms), false)},
                 {"collate", to_json(describe(pipeline.collate_ms), false)},
                 {"pin", to_json(describe(pipeline.pin_ms), false)}};
  l["pin_mode"] = outcome.pin_mode;

  // Without a sampler, DESIGN.md's memory, cpu and io keys are there with nulls, never faked.
  s.memory = {{"main", nullptr},
              {"workers", json::array()},
              {"host_peak_mb", nullptr},
              {"total_pss_peak_mb", nullptr}};
  s.cpu = {{"utilization_cores", nullptr}, {"per_process", json::array()}};
  s.io = {{"read_bytes", nullptr}, {"read_mb_per_s", nullptr}};
  if (resources != nullptr) {
    const PhaseMetrics* const phases[3] = {&compute, &pipeline, &end_to_end};
    resources_json(s, *resources, phases);
  }
  s.errors = {{"count", outcome.error_events}, {"samples", outcome.error_samples}};
  return s;
}

}  // namespace mmprof
