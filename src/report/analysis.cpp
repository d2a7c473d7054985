#include "report/analysis.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "report/json_access.hpp"
#include "rundir/json_values.hpp"
#include "stats/descriptive.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

double ratio_or_zero(std::optional<double> a, std::optional<double> b) {
  return a && b && *b > 0 ? *a / *b : 0.0;
}

// The stage, among `per_batch`, with the largest cost (ties: the earlier stage).
std::string largest(const json& per_batch) {
  std::string best;
  double best_ms = -1;
  for (const auto& [stage, ms] : per_batch.items()) {
    if (ms.is_number() && ms.get<double>() > best_ms) {
      best = stage;
      best_ms = ms.get<double>();
    }
  }
  return best;
}

int worker_count(const json& manifest) {
  return std::max(1,
                  static_cast<int>(number_at(manifest, "/config/loader/num_workers").value_or(1)));
}

}  // namespace

std::string input_bound_level(double stall) {
  if (stall < kModeratelyInputBound) return "not";
  if (stall < kHighlyInputBound) return "moderately";
  return "highly";
}

namespace {

// Why a user's job has no measured step: it failed (how, and what it raised), the hook saw no
// DataLoader, or its followed loader delivered no batch after the warm-up.
std::string unmeasured_job(const Summary& s) {
  if (s.status == "failed") return s.message.empty() ? "it failed" : s.message;
  const std::string hook = s.job ? s.job->hook.status : "";
  if (!hook.empty() && hook != "ok" && !hook.starts_with("partial"))
    return "the DataLoader hook is " + hook;
  return "its followed loader delivered no batch after the warm-up";
}

json classify_bound(const Summary& s) {
  json c;
  const auto stall = s.stall_fraction;
  const auto step = s.latency.step.mean;
  const double compute_share = ratio_or_zero(s.latency.compute.mean, step);
  const auto h2d = s.latency.h2d.mean;
  c["stall_fraction"] = or_null(stall);
  c["compute_share"] = step ? json(compute_share) : json(nullptr);
  c["h2d_share"] = h2d && step ? json(ratio_or_zero(h2d, step)) : json(nullptr);
  c["thresholds"] = {{"moderately_input_bound", kModeratelyInputBound},
                     {"highly_input_bound", kHighlyInputBound},
                     {"transfer_bound_h2d_share", kTransferBoundShare}};
  // A worker stuck on an item (issue 32 case 13): the job waited for it, not for a pipeline
  // that is slow, so no share of the steps before it describes the job.
  if (s.job && !s.job->stuck.empty()) {
    c["input_bound"] = nullptr;
    c["primary"] = "not-established";
    c["why"] = fmt::format(
        "the job was stuck: {}, and waited for it (DataLoader's timeout is off); the steps "
        "measured before it do not describe the job",
        s.job->stuck.front().text);
    return c;
  }
  if (!stall) {
    c["input_bound"] = nullptr;
    if (s.external()) {
      // A user's job is end to end by nature: no stall means no step of it was measured.
      c["primary"] = "not-established";
      c["why"] = "no step of the job was measured: " + unmeasured_job(s);
      return c;
    }
    c["primary"] = "pipeline-only";
    c["why"] = "no end-to-end phase (step.kind none): only the pipeline's own rate is known";
    return c;
  }
  const std::string level = input_bound_level(*stall);
  c["input_bound"] = level;
  if (level != "not") {
    c["primary"] = "input-bound";
    c["why"] = fmt::format(
        "the step waited for data {:.1f} % of its time ({} input-bound: >= {:.0f} %)", 100 * *stall,
        level, 100 * (level == "highly" ? kHighlyInputBound : kModeratelyInputBound));
  } else if (h2d && ratio_or_zero(h2d, step) >= kTransferBoundShare) {
    c["primary"] = "transfer-bound";
    c["why"] = fmt::format("host-to-device copies take {:.1f} % of the step (>= {:.0f} %)",
                           100 * ratio_or_zero(h2d, step), 100 * kTransferBoundShare);
  } else {
    c["primary"] = "compute-bound";
    c["why"] = fmt::format(
        "the step waited for data only {:.1f} % of its time (< {:.0f} %); compute takes {:.1f} %",
        100 * *stall, 100 * kModeratelyInputBound, 100 * compute_share);
  }
  return c;
}

// Whether the workers or the main process (the training loop, and the loading it does itself
// with no worker or decode placed there) waited to run (kCpuContended), and the words the
// classification adds.
std::pair<json, std::string> cpu_contention(const Summary& s) {
  const RunQueueDelay* delay = s.cpu.run_queue_delay();
  const auto workers = delay != nullptr ? delay->workers_mean_fraction : std::nullopt;
  const auto main = delay != nullptr ? delay->main_fraction : std::nullopt;
  if (!workers && !main) return {nullptr, ""};
  std::vector<std::string> waited;
  if (workers && *workers >= kCpuContended) {
    waited.push_back(
        fmt::format("the workers waited for a CPU {:.1f} % of their time", 100 * *workers));
  }
  if (main && *main >= kCpuContended) {
    waited.push_back(
        fmt::format("the main process waited for a CPU {:.1f} % of its time", 100 * *main));
  }
  if (waited.empty()) return {false, ""};
  // Oversubscribed by whom: other processes on the run's CPUs, or the run's own.
  const HostCpuShare* host = s.cpu.host();
  const auto others = host != nullptr ? std::optional(host->others_busy_cores) : std::nullopt;
  const std::string by =
      !others          ? "more runnable processes than free CPUs"
      : *others >= 0.5 ? fmt::format("other processes kept {:.2f} of the run's CPUs busy", *others)
                       : "the run's own processes outnumber its CPUs";
  return {true, fmt::format("; CPU-contended: {} (>= {:.0f} %): {}", fmt::join(waited, ", and "),
                            100 * kCpuContended, by)};
}

}  // namespace

json classify(const Summary& s) {
  json c = classify_bound(s);
  const auto [contended, why] = cpu_contention(s);
  c["cpu_contended"] = contended;
  c["thresholds"]["cpu_contended_run_queue_delay_fraction"] = kCpuContended;
  c["why"] = c["why"].get<std::string>() + why;
  return c;
}

json prediction(const Summary& s) {
  const auto predicted = s.throughput.predicted_end_to_end;
  const auto measured = s.throughput.end_to_end.samples_per_s;
  json p = {{"predicted_samples_per_s", or_null(predicted)},
            {"measured_samples_per_s", or_null(measured)},
            {"ratio", nullptr},
            {"interference", nullptr}};
  if (predicted && measured && *predicted > 0) {
    p["ratio"] = *measured / *predicted;
    p["interference"] = *measured / *predicted < kInterferenceRatio;
  }
  return p;
}

json ordering_caveats(const Summary& s) {
  json out = json::array();
  const auto e2e = s.throughput.end_to_end.samples_per_s;
  const std::array<std::pair<const char*, const char*>, 2> bounds = {
      {{"pipeline", "the pipeline's own rate"}, {"compute", "the compute ceiling"}}};
  for (const auto& [phase, what] : bounds) {
    const auto bound = phase_rate(s, phase, &PhaseRates::samples_per_s);
    if (!e2e || !bound || *bound <= 0 || *e2e <= *bound) continue;
    out.push_back(
        {{"id", fmt::format("end_to_end_above_{}", phase)},
         {"metric", fmt::format("throughput.end_to_end / throughput.{}", phase)},
         {"ratio", *e2e / *bound},
         {"text",
          fmt::format("end to end ({:.1f} samples/s) is {:.1f} % above {} ({:.1f} samples/s), "
                      "which steady state cannot give; the phases ran one after the other, so "
                      "the host's load changed between them or a phase was too short to settle: "
                      "both figures are uncertain by at least that much",
                      *e2e, 100 * (*e2e / *bound - 1), what, *bound)}});
  }
  return out;
}

// Each stage's share of the per-batch time and the largest one (the limit).
json attribution(const json& per_batch, std::optional<double> period_ms, const std::string& basis) {
  double total = 0;
  for (const auto& [stage, ms] : per_batch.items())
    total += ms.is_number() ? ms.get<double>() : 0.0;
  json shares = json::object();
  for (const auto& [stage, ms] : per_batch.items())
    shares[stage] = ms.is_number() && total > 0 ? json(ms.get<double>() / total) : json(nullptr);
  return {{"per_batch_ms", per_batch},
          {"shares", shares},
          {"limit", total > 0 ? json(largest(per_batch)) : json(nullptr)},
          {"batch_period_ms", or_null(period_ms)},
          {"basis", basis}};
}

// The mean delivered batch of `phase`: short batches at an epoch's end (a partial last batch)
// and failed samples make it smaller than the configured batch size. From
// throughput.<phase>.samples_per_batch, else samples_per_s / batches_per_s of the same window
// (older runs), else `nominal` with that said.
std::pair<double, std::string> delivered_batch(const Summary& s, const std::string& phase,
                                               double nominal) {
  if (const auto v = phase_rate(s, phase, &PhaseRates::samples_per_batch))
    return {*v, fmt::format("throughput.{}.samples_per_batch", phase)};
  const auto samples = phase_rate(s, phase, &PhaseRates::samples_per_s);
  const auto batches = phase_rate(s, phase, &PhaseRates::batches_per_s);
  if (samples && batches && *batches > 0)
    return {*samples / *batches, fmt::format("throughput.{} samples_per_s / batches_per_s", phase)};
  return {nominal, "the configured batch_size: no delivered batch sizes in the summary"};
}

// A user's job: the stages its hook times. __getitem__ (the user's read, decode and transforms
// together) per sample, in the workers; collate per batch in the workers; pin in main. Where the
// hook timed a torchvision dataset's loader and transforms inside __getitem__, they are the
// decode and augment stages and getitem_rest what __getitem__ spent besides. A __getitems__
// dataset's getitem figure is per call (a batch), not per sample. The batch size and workers are
// those of the job's followed DataLoader, not mmprof's configuration.
json attribute_job_stages(const Summary& s) {
  const json loader = followed_loader_config(s);
  const double nominal = number_at(loader, "/batch_size").value_or(1);
  const auto [batch, batch_source] = delivered_batch(s, "end_to_end", nominal);
  const double workers = std::max(1.0, number_at(loader, "/num_workers").value_or(1));
  const bool per_call = s.latency.getitem_per_call;
  const double per_batch_items = per_call ? 1.0 : batch;
  const auto per_batch_of = [&](const char* stage) -> std::optional<double> {
    const auto mean = s.latency.stage(stage).mean;
    if (!mean) return std::nullopt;
    return *mean * per_batch_items / workers;
  };
  json per_batch = json::object();
  const auto getitem = per_batch_of("getitem");
  const auto decode = per_batch_of("decode"), augment = per_batch_of("augment");
  if (getitem && (decode || augment)) {
    per_batch["decode"] = or_null(decode);
    per_batch["augment"] = or_null(augment);
    per_batch["getitem_rest"] = std::max(0.0, *getitem - decode.value_or(0) - augment.value_or(0));
  } else {
    per_batch["getitem"] = or_null(getitem);
  }
  const auto collate = s.latency.stage("collate").mean;
  per_batch["collate"] = collate ? json(*collate / workers) : json(nullptr);
  per_batch["pin"] = or_null(s.latency.stage("pin").mean);
  json a = attribution(
      per_batch, s.latency.step.mean,
      fmt::format("the job's own DataLoader (end-to-end phase): __getitem__ mean x {} / {} "
                  "workers{}; collate / workers; pin in main",
                  per_call ? std::string("1 __getitems__ call per batch")
                           : fmt::format("{:.4g} samples per batch ({}; batch_size {})", batch,
                                         batch_source, nominal),
                  workers,
                  per_batch.contains("getitem_rest")
                      ? ", split into the dataset's loader (decode), its transforms (augment) "
                        "and the rest of __getitem__ (getitem_rest)"
                      : ""));
  a["samples_per_batch"] = batch;
  if (!s.stall_fraction) {
    // The stage times then come from the warm-up's items: no limit of a window that held no step.
    a["limit"] = nullptr;
    a["limit_not_established"] =
        "no step of the job was measured, so the stage times (from the warm-up's items) limit "
        "nothing that was measured";
  }
  return a;
}

// The stage model against the measured batch period: what it explains, what is left for the
// hand-over (ipc), and by how much it explains more than the period, with why that can happen.
void compare_with_period(json& per_batch, json& a, double explained, std::optional<double> period,
                         double workers) {
  a["explained_ms"] = explained;
  a["model_overshoot_ms"] = nullptr;
  a["note"] = nullptr;
  if (!period) {
    per_batch["ipc"] = nullptr;
    return;
  }
  const double over = explained - *period;
  a["model_overshoot_ms"] = std::max(0.0, over);
  if (over <= 0) {
    per_batch["ipc"] = *period - explained;
    return;
  }
  // Not clamped to 0: a residual below zero is not a hand-over cost but a model that does not
  // hold, and the report says so.
  per_batch["ipc"] = nullptr;
  a["note"] = fmt::format(
      "the stage model explains {:.1f} ms per batch, {:.1f} ms ({:.0f} %) more than the measured "
      "batch period of {:.1f} ms: the {:g} workers delivered faster than their stage times allow, "
      "so the window counted batches prefetched before it began (a short window drains the "
      "prefetch queue) or the workers overlapped more than num_workers; ipc is not derivable",
      explained, over, 100 * over / *period, *period, workers);
}

json attribute_stages(const Summary& s, const json& manifest) {
  if (s.external()) return attribute_job_stages(s);
  const double nominal = number_at(manifest, "/config/loader/batch_size").value_or(1);
  const auto [batch, batch_source] = delivered_batch(s, "pipeline", nominal);
  const double workers = worker_count(manifest);
  json per_batch = json::object();
  // Per-sample stages run in parallel in the workers: their cost per delivered batch is
  // (samples in it) x mean / workers. Collate is per batch, in the worker too.
  for (const char* stage : {"read", "decode", "augment"}) {
    const auto mean = s.latency.stage(stage).mean;
    per_batch[stage] = mean ? json(*mean * batch / workers) : json(nullptr);
  }
  const auto collate = s.latency.stage("collate").mean;
  per_batch["collate"] = collate ? json(*collate / workers) : json(nullptr);
  // Pin and H2D run in the main process, one batch after the other.
  per_batch["pin"] = or_null(s.latency.stage("pin").mean);
  const double accum = number_at(manifest, "/config/step/accum_steps").value_or(1);
  const auto h2d = s.latency.h2d.mean;
  per_batch["h2d"] = h2d ? json(*h2d / std::max(1.0, accum)) : json(nullptr);
  // What the stage timers do not explain of the measured batch period: handing batches over
  // (shared memory ring, queue wake-ups) and workers waiting for a CPU.
  double explained = 0;
  for (const char* stage : {"read", "decode", "augment", "collate"})
    explained += per_batch[stage].is_number() ? per_batch[stage].get<double>() : 0.0;
  explained =
      std::max(explained, per_batch["pin"].is_number() ? per_batch["pin"].get<double>() : 0);
  const auto batches_per_s = s.throughput.pipeline.batches_per_s;
  const auto period =
      batches_per_s && *batches_per_s > 0 ? std::optional(1000.0 / *batches_per_s) : std::nullopt;
  json extra = json::object();
  compare_with_period(per_batch, extra, explained, period, workers);
  json a = attribution(
      per_batch, period,
      fmt::format("pipeline phase; per-sample means x {:.4g} samples per delivered batch ({}; "
                  "loader.batch_size {}) / {} workers; collate / workers; pin and h2d serial in "
                  "main; ipc = measured batch period minus the stages",
                  batch, batch_source, nominal, workers));
  a["samples_per_batch"] = batch;
  a.update(extra);
  return a;
}

std::string cpu_text(const json& c) {
  const auto used = number_at(c, "/utilization_cores");
  const auto cores = number_at(c, "/available_cores");
  if (!used || !cores) return "CPU use not measured";
  std::string text = fmt::format("mmprof used {:.2f} of {:g} cores", *used, *cores);
  if (const auto busy = number_at(c, "/host_busy_cores"), cpus = number_at(c, "/host_cpus");
      busy && cpus) {
    text +=
        fmt::format("; the host kept its {:g} CPU{} busy {:.2f} cores ({:.2f} by others", *cpus,
                    *cpus == 1 ? "" : "s", *busy, number_at(c, "/others_busy_cores").value_or(0));
    if (const auto steal = number_at(c, "/host_steal_fraction"); steal && *steal > 0)
      text += fmt::format(", steal {:.1f} %", 100 * *steal);
    if (const auto iowait = number_at(c, "/host_iowait_fraction"))
      text += fmt::format(", iowait {:.1f} %", 100 * *iowait);
    text += ")";
  } else {
    text += "; host CPU not measured";
  }
  if (const auto some = number_at(c, "/pressure_some_fraction"))
    text += fmt::format("; CPU pressure {:.0f} % of the time", 100 * *some);
  const auto delay = number_at(c, "/workers_run_queue_delay_fraction");
  const auto main = number_at(c, "/main_run_queue_delay_fraction");
  if (delay) text += fmt::format("; workers waited for a CPU {:.1f} % of their time", 100 * *delay);
  if (main && delay) text += fmt::format(", the main process {:.1f} % of its", 100 * *main);
  if (main && !delay)
    text += fmt::format("; the main process waited for a CPU {:.1f} % of its time", 100 * *main);
  if (value_at(c, "/contended") == true)
    text += fmt::format(": CPU-contended (>= {:.0f} %)", 100 * kCpuContended);
  if (const auto idle = number_at(c, "/idle_cores")) text += fmt::format("; {:.2f} idle", *idle);
  if (value_at(c, "/saturated") == true) text += " (saturated)";
  if (const json loading = value_at(c, "/loading"); loading.is_object())
    text += "; " + loading["text"].get<std::string>();
  return text;
}

namespace {

// What the processes that load the data did with their wall time in the run's window: on a CPU,
// waiting for one (run queue), or off CPU (I/O, a sleep, a lock), per worker slot (the configured
// workers, which non-persistent workers share over epochs), or the main process when it loads.
json loader_activity(const Summary& s, const json& m) {
  const json workers_cfg = run_config_value("loader.num_workers", m);
  const bool main_loads = workers_cfg.is_number() && workers_cfg.get<double>() < 1;
  const std::string role = main_loads ? "main" : "worker";
  double cores = 0, delay = 0, observed = 0;
  int processes = 0, delays = 0;
  for (const ProcessCpu& p : s.cpu.top ? s.cpu.top->per_process : std::vector<ProcessCpu>{}) {
    if (p.role != role || !p.cores) continue;
    ++processes;
    cores += *p.cores;
    // A summary without the field (an older run's) saw each process through the window.
    observed += p.observed_fraction.value_or(1.0);
    if (p.run_queue_delay_fraction) {
      delay += *p.run_queue_delay_fraction;
      ++delays;
    }
  }
  if (processes == 0) return nullptr;
  const double slots =
      main_loads || !workers_cfg.is_number() ? processes : std::max(1.0, workers_cfg.get<double>());
  const std::string who =
      main_loads ? "the main process (it loads the data)"
                 : fmt::format("each of {:g} worker slot{}", slots, slots == 1 ? "" : "s");
  // Workers that ended as the window began (their epoch's batches were all fetched) used no CPU
  // in it because they were gone, not because they waited: what they do is not known.
  if (observed / slots < kLoaderObserved) {
    return {{"role", role},
            {"processes", processes},
            {"slots", slots},
            {"cores_each", nullptr},
            {"run_queue_fraction", nullptr},
            {"off_cpu_fraction", nullptr},
            {"observed_fraction", observed / slots},
            {"kind", "not-established"},
            {"thresholds", {{"observed", kLoaderObserved}}},
            {"source", "summary cpu.per_process: observed_fraction per process"},
            {"text", fmt::format("what {} did is not established: samples saw {} {:.0f} % of the "
                                 "measured window (need {:.0f} %): {} ended inside it",
                                 who, main_loads ? "it" : "them", 100 * observed / slots,
                                 100 * kLoaderObserved, main_loads ? "it" : "they")}};
  }
  const double on = cores / slots;
  // NaN when no process had its run-queue delay read.
  const double queued = delays > 0 ? delay / delays : NAN;
  const double waiting = std::isfinite(queued) ? queued : 0.0;
  const double off = std::clamp(1.0 - on - waiting, 0.0, 1.0);
  const std::string kind = on >= kLoaderCpuBound      ? "cpu-bound"
                           : waiting >= kCpuContended ? "cpu-contended"
                           : off >= kLoaderOffCpu     ? "off-cpu"
                                                      : "mixed";
  std::string text = fmt::format("{} was on a CPU {:.0f} % of the time", who, 100 * on);
  if (std::isfinite(queued)) text += fmt::format(", waited for one {:.0f} %", 100 * queued);
  text += fmt::format(", off CPU (I/O, a sleep, a lock) {:.0f} %: {}", 100 * off,
                      kind == "cpu-bound"       ? "it computes, more of it needs more cores"
                      : kind == "cpu-contended" ? "it waits for a CPU"
                      : kind == "off-cpu"       ? "it waits, not computes: another one costs "
                                                  "about what this one used"
                                                : "it both computes and waits");
  return {{"role", role},
          {"processes", processes},
          {"slots", slots},
          {"cores_each", on},
          {"run_queue_fraction", finite_or_null(queued)},
          {"off_cpu_fraction", off},
          {"observed_fraction", observed / slots},
          {"kind", kind},
          {"thresholds", {{"cpu_bound", kLoaderCpuBound}, {"off_cpu", kLoaderOffCpu}}},
          {"source", "summary cpu.per_process: cpu_s / wall and run_queue_delay per process"},
          {"text", text}};
}

json cpu_resource(const Summary& s, const json& m) {
  const auto used = s.cpu.top_figure(&CpuWindow::utilization_cores);
  auto cores = s.cpu.effective_cores;
  std::string cores_source = "summary cpu.effective_cores";
  if (!cores) {
    cores = number_at(m, "/hardware/cpu/logical_cpus");
    cores_source = "manifest hardware.cpu.logical_cpus";
  }
  json c = {{"utilization_cores", or_null(used)},
            {"available_cores", or_null(cores)},
            {"available_source", cores_source}};
  // The host's CPUs that the run may use, everyone's time on them (summary cpu.host).
  const HostCpuShare* h = s.cpu.host();
  const bool host = h != nullptr;
  const double cpus = host ? h->cpus : 0, busy = host ? h->busy_fraction : 0;
  const double steal = host ? h->steal_fraction.value_or(0) : 0;
  c["host_cpus"] = host ? json(cpus) : json(nullptr);
  c["host_busy_cores"] = host ? json(busy * cpus) : json(nullptr);
  c["host_busy_fraction"] = host ? json(busy) : json(nullptr);
  c["host_steal_fraction"] = or_null(host ? h->steal_fraction : std::nullopt);
  c["host_iowait_fraction"] = or_null(host ? h->iowait_fraction : std::nullopt);
  c["others_busy_cores"] = host ? json(h->others_busy_cores) : json(nullptr);
  c["pressure_some_fraction"] =
      or_null(s.cpu.top ? s.cpu.top->pressure.some_fraction : std::nullopt);
  const RunQueueDelay* q = s.cpu.run_queue_delay();
  const auto delay = q != nullptr ? q->workers_mean_fraction : std::nullopt;
  const auto main = q != nullptr ? q->main_fraction : std::nullopt;
  c["workers_run_queue_delay_fraction"] = or_null(delay);
  c["workers_run_queue_delay_max_fraction"] =
      or_null(q != nullptr ? q->workers_max_fraction : std::nullopt);
  c["main_run_queue_delay_fraction"] = or_null(main);
  c["thresholds"] = {{"saturated_fraction", kCpuSaturated},
                     {"contended_run_queue_delay_fraction", kCpuContended}};
  // Saturated: the run's own processes, or everyone on the run's CPUs, keep them busy.
  const bool own = used && cores && *used >= kCpuSaturated * *cores;
  c["saturated"] =
      used && cores ? json(own || (host && busy + steal >= kCpuSaturated)) : json(nullptr);
  c["contended"] =
      delay || main ? json(delay.value_or(0) >= kCpuContended || main.value_or(0) >= kCpuContended)
                    : json(nullptr);
  // Idle cores are idle on the host, not merely unused by mmprof; a cgroup quota caps them at
  // what the run's own use leaves of it.
  if (host && cores && used) {
    const double host_idle = cpus * std::max(0.0, 1.0 - busy - steal);
    c["idle_cores"] = std::max(0.0, std::min(host_idle, *cores - *used));
    c["idle_cores_source"] =
        "host: /proc/stat idle time of the run's CPUs (cpu.host), capped by available - used";
  } else {
    c["idle_cores"] = used && cores ? json(std::max(0.0, *cores - *used)) : json(nullptr);
    c["idle_cores_source"] =
        "available - used by mmprof's processes: the run has no host CPU figures (cpu.host)";
  }
  c["loading"] = loader_activity(s, m);
  c["text"] = cpu_text(c);
  return c;
}

json storage_resource(const Summary& s, const json& m) {
  const auto read = s.io.top_figure(&IoWindow::read_mb_per_s);
  const auto rchar = s.io.top_figure(&IoWindow::rchar_mb_per_s);
  const auto probe = number_at(m, "/storage/probe/sequential/mb_per_s");
  json st = {
      {"read_mb_per_s", or_null(read)},
      {"rchar_mb_per_s", or_null(rchar)},
      {"probe_sequential_mb_per_s", or_null(probe)},
      {"probe_random_qd_mb_per_s", or_null(number_at(m, "/storage/probe/random_4k_qd/mb_per_s"))},
      {"probe_queue_depth", value_at(m, "/storage/probe/random_4k_qd/queue_depth")},
      {"fs_type", value_at(m, "/storage/fs_type")},
      {"rotational", value_at(m, "/storage/rotational")}};
  // The loader's own bytes against the device's (summary "locality", newer runs) when the run
  // has them; else the processes' read() bytes against the device's, which also count what
  // mmprof itself reads (its /proc samples).
  const Locality* locality = s.locality ? &*s.locality : nullptr;
  for (const char* phase : {"pipeline", "end_to_end"}) {
    const LocalityPhase* p = locality != nullptr ? locality->phase(phase) : nullptr;
    if (p == nullptr || !p->page_cache_fraction || st.contains("page_cache_share")) continue;
    st["page_cache_share"] = *p->page_cache_fraction;
    st["page_cache_source"] =
        fmt::format("locality.phases.{}: loader bytes vs device read_bytes", phase);
    st["cache"] = locality->cache;
  }
  if (!st.contains("page_cache_share") && locality != nullptr && locality->network()) {
    // Socket reads are not read(2) bytes: rchar would call the network's bytes cached ones.
    st["page_cache_share"] = nullptr;
    st["page_cache_source"] = "a remote dataset: its bytes came over the network (locality)";
  } else if (!st.contains("page_cache_share")) {
    st["page_cache_share"] = read && rchar && *rchar > 0
                                 ? json(std::clamp(1.0 - *read / *rchar, 0.0, 1.0))
                                 : json(nullptr);
    st["page_cache_source"] = "io: read_bytes vs rchar of the run's processes";
  }
  if (read && probe && *probe > 0) {
    st["saturated"] = *read >= kStorageSaturated * *probe;
  } else {
    st["saturated"] = nullptr;
    st["reason"] = probe ? "no storage reads measured (io.read_mb_per_s null)"
                         : "no storage probe in the manifest (mmprof inspect --probe-storage)";
  }
  return st;
}

// A remote dataset (locality.source network): the read stage is a wait on HTTP transfers, so when
// it is the limiting stage the network, not a local resource, bounds the loader.
json network_resource(const Summary& s, const json& stages) {
  if (!s.locality || !s.locality->network()) {
    return {{"source", "local"}, {"saturated", false}};
  }
  json n = {{"source", "network"}, {"url", s.locality->url}};
  for (const char* phase : {"pipeline", "end_to_end"}) {
    const LocalityPhase* p = s.locality->phase(phase);
    if (p == nullptr || !p->network_mb_per_s) continue;
    n["phase"] = phase;
    n["read_mb_per_s"] = *p->network_mb_per_s;
    n["read_retries"] = rundir::nullable(p->read_retries);
    break;
  }
  n["saturated"] = value_at(stages, "/limit") == "read";
  return n;
}

json memory_resource(const Summary& s, const json& m) {
  const auto peak = s.memory.host_peak_mib;
  auto total = s.memory.host_total_mib;
  if (!total) total = number_at(m, "/hardware/memory/total_mib");
  const auto majflt = s.io.majflt();
  json mem = {{"host_peak_mib", or_null(peak)},
              {"host_total_mib", or_null(total)},
              {"total_pss_peak_mib", or_null(s.memory.total_pss_peak_mib)},
              {"majflt", or_null(majflt)},
              {"minflt_per_sample", or_null(s.io.top_figure(&IoWindow::minflt_per_sample))}};
  const double swap = s.memory.swap_peak_mib();
  mem["swap_peak_mib"] = swap;
  mem["pressure"] =
      peak && total ? json(*peak >= kMemoryPressure * *total || swap > 0 || majflt.value_or(0) > 0)
                    : json(nullptr);
  return mem;
}

// From the GPU's own timeline (CUPTI, docs/metrics.md): idle time while the consumer waited
// for a batch is the input pipeline's; idle time otherwise is the step's own (launch gaps,
// synchronisation, another process on the device). Busy = kernels cover >= 90 % of the window.
json gpu_resource(const Summary& s, const json& m) {
  if (!s.gpu) {
    return {{"measured", false},
            {"saturated", nullptr},
            {"reason", s.gpu_unavailable.empty() ? string_at(m, "/hardware/gpu_unavailable_reason",
                                                             "summary.json has no gpu block")
                                                 : s.gpu_unavailable}};
  }
  const GpuFigures& g = *s.gpu;
  const auto busy = g.kernel_busy_fraction;
  return {{"measured", true},
          {"idle_fraction", or_null(g.idle_fraction)},
          {"data_wait_idle_fraction", or_null(g.data_wait_idle_fraction)},
          {"other_idle_fraction", or_null(g.other_idle_fraction)},
          {"kernel_busy_fraction", or_null(busy)},
          {"saturated", busy ? json(*busy >= kGpuSaturated) : json(nullptr)}};
}

}  // namespace

json attribute_resources(const Summary& s, const json& m, const json& stages) {
  json r = {{"cpu", cpu_resource(s, m)},
            {"storage", storage_resource(s, m)},
            {"network", network_resource(s, stages)},
            {"memory", memory_resource(s, m)},
            {"gpu", gpu_resource(s, m)}};
  r["limit"] = "none saturated";
  const std::array<std::pair<const char*, const char*>, 6> order = {{{"network", "saturated"},
                                                                     {"storage", "saturated"},
                                                                     {"cpu", "saturated"},
                                                                     {"cpu", "contended"},
                                                                     {"memory", "pressure"},
                                                                     {"gpu", "saturated"}}};
  // A busy host limits the loader only when its loading processes compute or queue for a CPU: a
  // worker that sleeps or waits on I/O is limited by what it waits for, whoever keeps the CPUs
  // busy; one whose activity was not seen is not shown to be limited by a host others keep busy
  // (the run's own use saturating its cores still is).
  const json& cpu = r["cpu"];
  const bool off_cpu = value_at(cpu, "/loading/kind") == "off-cpu";
  const auto used = number_at(cpu, "/utilization_cores");
  const auto cores = number_at(cpu, "/available_cores");
  const bool own = used && cores && *used >= kCpuSaturated * *cores;
  const bool host_only =
      cpu["saturated"] == true && !own && value_at(cpu, "/loading/kind") == "not-established";
  for (const auto& [resource, flag] : order) {
    const bool is_cpu = std::string(resource) == "cpu";
    if (r[resource][flag] == true && !(is_cpu && off_cpu) &&
        !(is_cpu && host_only && std::string(flag) == "saturated")) {
      r["limit"] = resource;
      break;
    }
  }
  if (off_cpu && r["limit"] == "none saturated") r["limit"] = "off-cpu wait";
  if (host_only && r["limit"] == "none saturated") {
    r["limit"] = "not established";
    r["limit_why"] = "other processes kept the host's CPUs busy, and " +
                     value_at(cpu, "/loading/text").get<std::string>();
  }
  return r;
}

}  // namespace mmprof::report
