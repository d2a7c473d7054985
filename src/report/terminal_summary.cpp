#include "report/terminal_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "report/analysis.hpp"
#include "report/json_access.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

std::string num(const json& v, const char* f = "{:.1f}") {
  return v.is_number() ? fmt::format(fmt::runtime(f), v.get<double>()) : "n/a";
}

// A figure, or "n/a (why)": the summary never prints an n/a without its reason.
std::string num(const std::optional<double>& v) {
  return num(or_null(v));
}
std::string num_or(const json& v, const char* f, const std::string& why) {
  return v.is_number() ? num(v, f) : "n/a (" + why + ")";
}

// A distribution with no values says why instead of four n/a.
std::string dist_line(const std::string& name, const TimeSpread& d,
                      const std::string& why_empty = "", size_t name_width = 9) {
  if (d.count == 0 && !why_empty.empty())
    return fmt::format("  {:<{}} n/a: {}\n", name, name_width, why_empty);
  const auto ms = [](const std::optional<double>& v) { return num(or_null(v), "{:.2f}"); };
  return fmt::format("  {:<{}} p50 {:>8}  p90 {:>8}  p99 {:>8}  max {:>8}  (n={})\n", name,
                     name_width, ms(d.p50), ms(d.p90), ms(d.p99), ms(d.max), d.count);
}

// A job's torchvision dataset: inside __getitem__, its loader (decode) and each transform, over
// the items whose parts the hook timed; nothing when it timed none.
std::string format_getitem_parts(const Latency& latency) {
  const TimeSpread& decode = latency.stage("decode");
  const TimeSpread& augment = latency.stage("augment");
  if (decode.count == 0 && augment.count == 0) return "";
  std::string out =
      fmt::format("inside __getitem__ (ms per {}: the dataset's loader, then its transforms):\n",
                  latency.getitem_per_call ? "__getitems__ call" : "sample");
  size_t width = 9;  // the stages' names, and each transform's indented under augment
  for (const auto& [name, d] : latency.transforms)
    width = std::max(width, name.size() + 2);
  if (decode.count > 0) out += dist_line("decode", decode, "", width);
  if (augment.count > 0) out += dist_line("augment", augment, "", width);
  for (const auto& [name, d] : latency.transforms)
    out += dist_line("  " + name, d, "", width);
  return out;
}

// mmprof's loader: stage times by sample class, slowest decode first, and the slowest class.
std::string format_breakdown(const StageBreakdownFigures& b) {
  const auto share = [](const SampleClassFigures& c, const char* none) {
    return c.decode_share ? fmt::format("{:.0f} %", 100 * *c.decode_share) : std::string(none);
  };
  std::string out = fmt::format(
      "by sample class (ms per sample, {} phase; format, modality, source resolution):\n", b.phase);
  for (const SampleClassFigures& c : b.by_class) {
    out += fmt::format(
        "  {:<26} n={:<5} read {:>6.2f}  decode {:>7.2f}  augment {:>5.2f}  {:>4} of decode\n",
        c.label, c.samples, c.read_ms_mean, c.decode_ms_mean, c.augment_ms_mean,
        share(c, "n/a (no decode time)"));
  }
  out += fmt::format(
      "  slowest class: {} (decode {} ms per sample{}); largest share of decode: {} ({})\n",
      b.slowest.label, fmt::format("{:.1f}", b.slowest.decode_ms_mean),
      b.times_rest ? fmt::format(", {:.1f}x the rest", *b.times_rest) : "", b.largest_share.label,
      share(b.largest_share, "n/a: no decode time"));
  return out;
}

// mmprof's loader: each worker's load and the imbalance flag with its likely cause.
std::string format_workers(const WorkerBalance& w) {
  std::string out = "loader workers (pipeline phase):\n";
  for (const WorkerStats& x : w.workers) {
    out += fmt::format(
        "  worker {:<3} busy {:>6}  batches {:<5} samples {:<6} {}\n", x.worker,
        x.busy_fraction ? fmt::format("{:.2f}", *x.busy_fraction) : "no measured window", x.batches,
        x.samples,
        x.bytes ? num(json(static_cast<double>(*x.bytes) / 1e6)) + " MB read"
                : "MB read n/a (its reads were not counted)");
  }
  if (w.imbalanced) {
    for (const std::string& f : w.flags)
      out += fmt::format("  imbalanced: {}\n", f);
    if (!w.likely_cause.empty()) out += fmt::format("  likely cause: {}\n", w.likely_cause);
  } else if (w.busy_spread) {
    out += fmt::format("  balanced: busy fractions within {:.2f} (limit {:g})\n", *w.busy_spread,
                       w.busy_spread_limit);
  }
  return out;
}

// "138.2, 113.9": each worker's PSS peak, or the spread when there are many.
std::string pss_values(const std::vector<double>& v) {
  if (v.size() <= 8) {
    std::string out;
    for (const double x : v)
      out += fmt::format("{}{:.1f}", out.empty() ? "" : ", ", x);
    return out;
  }
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  return fmt::format("median {:.1f}, max {:.1f} over {}", sorted[sorted.size() / 2], sorted.back(),
                     sorted.size());
}

// The group a worker's PSS is shown in: the phase it started in, or, where the job's workers
// serve several DataLoaders (a training and a validation loader), its loader: "loader 1
// (ImageFolder, followed)", from `loaders` (summary job.dataloader.loaders).
std::string worker_group(const ProcessMemory& w, const std::vector<JobLoader>& loaders,
                         bool by_loader) {
  if (!by_loader || !w.loader) return w.phase.empty() ? "?" : w.phase;
  std::string what;
  for (const JobLoader& l : loaders) {
    if (l.pid != w.main_pid.value_or(-1) || l.loader != *w.loader) continue;
    what = fmt::format(" ({}{})", report::string_at(l.config, "/dataset", "?"),
                       l.followed ? ", followed" : "");
  }
  return fmt::format("loader {}{}", *w.loader, what);
}

// Why a run shows no worker's PSS: its loader has none, or (a job's loaders start some) no
// sample read them before the run ended.
std::string no_workers_why(const std::vector<JobLoader>& loaders) {
  int64_t most = 0;
  for (const JobLoader& l : loaders) {
    most = std::max(most,
                    static_cast<int64_t>(report::number_at(l.config, "/num_workers").value_or(0)));
  }
  if (most == 0) return "loader.num_workers=0";
  return fmt::format(
      "the job's DataLoader starts {} workers, but no sample read their PSS before "
      "the run ended: too short a run for the sampler",
      most);
}

// The memory a user sizes a host by: the host's used memory at its peak (MemTotal -
// MemAvailable) and the run's PSS (a page shared by N processes counted 1/N in each): the peak of
// their sum, the main process's, and each worker's by phase, or by loader where a job's workers
// serve several (`loaders`: the job's, none for mmprof's loader). The *_mb keys hold MiB.
// `no_workers`: why the run has no worker process (shown when none was sampled).
std::string format_memory(const MemoryPeaks& m, const std::vector<JobLoader>& loaders,
                          const std::string& no_workers) {
  if (!m.sampler_error.empty())
    return fmt::format("memory: n/a (the resource sampler failed: {})\n", m.sampler_error);
  const auto mib = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.1f}", *v) : std::string("not sampled");
  };
  std::string out =
      fmt::format("memory (MiB, peaks): host used {} of {}; PSS of the run {}\n",
                  mib(m.host_used_peak_mib), mib(m.host_total_mib), mib(m.total_pss_peak_mib));
  std::set<std::pair<int, int>> served;  // (main pid, loader) of the workers
  for (const ProcessMemory& w : m.workers)
    if (w.loader) served.emplace(w.main_pid.value_or(0), *w.loader);
  std::vector<std::pair<std::string, std::vector<double>>> groups;
  for (const ProcessMemory& w : m.workers) {
    if (!w.pss_peak_mib) continue;
    const std::string group = worker_group(w, loaders, served.size() > 1);
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& p) { return p.first == group; });
    if (it == groups.end()) it = groups.insert(groups.end(), {group, {}});
    it->second.push_back(*w.pss_peak_mib);
  }
  std::string workers;
  for (const auto& [group, values] : groups)
    workers += fmt::format("{}{} {}", workers.empty() ? "" : "; ", group, pss_values(values));
  out +=
      fmt::format("  PSS: main {}; workers {}\n", mib(m.main ? m.main->pss_peak_mib : std::nullopt),
                  workers.empty() ? "none (" + no_workers + ")" : workers);
  return out;
}

// Pinning and the GPU on one line: how batches were held, and whether the GPU was measured.
std::string format_device(const Summary& s) {
  std::string gpu;
  if (s.gpu) {
    const auto& idle = s.gpu->idle_fraction;
    const std::string& cupti = s.gpu->cupti.unavailable;
    gpu = idle             ? fmt::format("idle {:.1f} % of the measured steps (CUPTI)", 100 * *idle)
          : !cupti.empty() ? "idle n/a (CUPTI unavailable: " + cupti + ")"
                           : "idle n/a (no GPU activity in the measured steps)";
  } else {
    gpu = !s.gpu_unavailable.empty() ? s.gpu_unavailable : "not measured";
  }
  // A job's batches are pinned (or not) by the DataLoader mmprof followed.
  const json config = report::followed_loader_config(s);
  const json job_pin = report::value_at(config, "/pin_memory");
  const std::string foreign = report::not_a_dataloader(config);
  std::string pinning = "n/a (no loader ran)";
  if (s.pin_mode) {
    pinning = *s.pin_mode;
  } else if (job_pin.is_boolean() && !foreign.empty()) {  // torchdata.nodes: a PinMemory node
    pinning = fmt::format("the job's torchdata.nodes Loader has {}PinMemory node",
                          job_pin.get<bool>() ? "a " : "no ");
  } else if (job_pin.is_boolean()) {
    pinning = fmt::format("the job's DataLoader has pin_memory={}",
                          job_pin.get<bool>() ? "True" : "False");
  } else if (!foreign.empty()) {  // DALI: no pin_memory of a DataLoader
    pinning = fmt::format("n/a ({})", foreign);
  }
  return fmt::format("pin: {}\ngpu: {}\n", pinning, gpu);
}

// The one-line verdict: what bounds the run, with its number (report/analysis's classification).
std::string format_verdict(const Summary& s) {
  // A job without the hook's waits is no "pipeline-only" run: nothing says what bounds it.
  if (s.external() && !s.stall_fraction) {
    return fmt::format("bottleneck: n/a (no wait for data was measured in the job; hook: {})\n",
                       s.job ? s.job->hook.status : "no status");
  }
  const json c = report::classify(s);
  return fmt::format("bottleneck: {}: {}\n", c["primary"].get<std::string>(),
                     c["why"].get<std::string>());
}

// The DataLoader the hook followed, as the job built it, and the dataset library under it with
// its own settings: "DataLoader(batch_size=8, num_workers=2, prefetch_factor=2) over Images, a
// mosaicml-streaming 0.13.0 StreamingDataset (batch_size=8, shuffle=false, ...)". "" for none.
std::string followed_loader_text(const Summary& s) {
  const json c = report::followed_loader_config(s);
  if (!c.is_object()) return "";
  const auto args = [](const json& values, std::initializer_list<const char*> keys) {
    std::string out;
    for (const char* k : keys) {
      if (values.contains(k))
        out += fmt::format("{}{}={}", out.empty() ? "" : ", ", k, values[k].dump());
    }
    return out;
  };
  const json lib = c.value("library", json());
  // DALI's iterator is the loader itself: its batch size, then its pipeline's settings. A
  // torchdata.nodes Loader: what its nodes hold of the DataLoader's keys, then its graph.
  const bool dali = report::loader_is_dali(c);
  if (!dali && !report::not_a_dataloader(c).empty()) {
    std::string graph;
    for (const auto& n : report::value_at(lib, "/settings/nodes")) {
      graph += fmt::format("{}{}", graph.empty() ? "" : " <- ", n.value("class", "?"));
      if (n.contains("num_workers"))
        graph += fmt::format("({} {})", n["num_workers"].dump(), n.value("method", "?"));
    }
    return fmt::format("torchdata.nodes.Loader({}) over {}, torchdata {}: {}",
                       args(c, {"batch_size", "prefetch_factor", "pin_memory", "in_order"}),
                       c.value("dataset", "?"), lib.value("version", "?"), graph);
  }
  std::string text =
      dali ? fmt::format("{}({}) over", c.value("dataset", "?"), args(c, {"batch_size"}))
           : fmt::format("DataLoader({}) over {}",
                         args(c, {"batch_size", "num_workers", "prefetch_factor", "pin_memory",
                                  "persistent_workers", "in_order"}),
                         c.value("dataset", "?"));
  if (lib.is_object()) {
    const json settings = lib.value("settings", json::object());
    std::string all;
    for (const auto& [k, v] : settings.items())
      all += fmt::format("{}{}={}", all.empty() ? "" : ", ", k, v.dump());
    const json version = lib.value("version", json());
    text += fmt::format("{} a {} {} {}{}", dali ? "" : ",", lib.value("name", "?"),
                        version.is_string() ? version.get<std::string>() : "?",
                        dali ? "pipeline" : lib.value("class", "?"),
                        all.empty() ? "" : " (" + all + ")");
  }
  return text;
}

}  // namespace

// A user's job: what ran, how it ended, what the hook saw (the DataLoader, per rank, per worker).
std::string format_job(const Summary& s) {
  if (!s.job) return "job: no job part in summary.json\n";
  const JobFigures& j = *s.job;
  std::string out =
      fmt::format("job: {}\n  {}\n", fmt::join(j.command, " "), j.ended.empty() ? "?" : j.ended);
  if (!j.short_why.empty()) out += fmt::format("  warning: {}\n", j.short_why);
  out += fmt::format("  hook: {}\n", j.hook.status.empty() ? "?" : j.hook.status);
  if (!j.primary_why.empty()) out += fmt::format("  figures above: {}\n", j.primary_why);
  if (const std::string loader = followed_loader_text(s); !loader.empty())
    out += fmt::format("  loader: {}\n", loader);
  // A --set loader.* the job's DataLoader refused (issue 32, case 17), as the report says it.
  for (const JobLoader& l : j.dataloader.loaders) {
    const json rejected = report::value_at(l.overrides, "/rejected");
    if (!rejected.is_object()) continue;
    for (const auto& [key, why] : rejected.items()) {
      out += fmt::format("  warning: --set loader.{} was not applied: {}\n", key,
                         why.is_string() ? why.get<std::string>() : why.dump());
    }
  }
  if (!j.digests.text.empty()) out += fmt::format("  content digests: {}\n", j.digests.text);
  for (const std::string& k : j.killed_at_end)
    out += fmt::format("  killed at the end: {}\n", k);
  // The GPU's reason is said once, on the summary's gpu line.
  const std::string& gpu = s.gpu_unavailable;
  for (const std::string& u : j.unavailable) {
    if (gpu.empty() || u != "gpu: " + gpu) out += fmt::format("  {}\n", u);
  }
  for (const CowGrowth& c : j.cow) {
    if (c.growing) out += fmt::format("  copy-on-write: {}\n", c.verdict);
  }
  return out;
}

namespace {

// Why a phase of the run has no figures (its throughput is null), or "" when it has them.
std::string why_no_phase(const Summary& s, const json& config, const std::string& phase) {
  const PhaseRates& rates = *s.throughput.phase(phase);
  if (rates.samples_per_s) return "";
  if (!rates.why_null.empty()) return rates.why_null;
  const bool ran = s.ran(phase);
  if (s.resume && s.resume->phase != phase && !ran)
    return fmt::format("not run again when resumed from {}", s.resume->from);
  if (!ran && phase != "pipeline" && report::value_at(config, "/step/kind") == "none") {
    return "step.kind=none, no step to time: use configs/emulated-accelerator.yaml or --set "
           "step.kind=sleep";
  }
  if (s.status != "complete")
    return fmt::format("the run ended ({}) before the {} phase measured", s.status, phase);
  return fmt::format("the {} phase has no measured window", phase);
}

// "   (why)" after a figure that is n/a; the end-to-end line points at the compute line when
// both have the same reason.
std::string why_suffix(const std::string& why, const std::string& same_as = "") {
  if (why.empty()) return "";
  return fmt::format("   ({})", why == same_as ? "as compute" : why);
}

// The pipeline phase's loader's time to its first batch.
std::string first_batch_text(const Summary& s, const std::string& why_no_pipeline) {
  if (s.time_to_first_batch_ms) return num(s.time_to_first_batch_ms) + " ms";
  if (!why_no_pipeline.empty()) return "n/a (" + why_no_pipeline + ")";
  return "n/a (the pipeline phase delivered no batch)";
}

std::string format_throughput(const Summary& s, const json& config) {
  const Throughput& t = s.throughput;
  const std::string compute = why_no_phase(s, config, "compute"),
                    pipeline = why_no_phase(s, config, "pipeline"),
                    e2e = why_no_phase(s, config, "end_to_end");
  std::string out = "throughput (samples/s):\n";
  out += fmt::format("  compute ceiling   {:>10}{}\n", num(t.compute.samples_per_s),
                     why_suffix(compute));
  out += fmt::format("  pipeline only     {:>10}   {}\n", num(t.pipeline.samples_per_s),
                     pipeline.empty()      ? fmt::format("({} MB/s read)", num(t.pipeline.mb_per_s))
                     : pipeline == compute ? std::string("(as compute)")
                                           : fmt::format("({})", pipeline));
  out += fmt::format("  end to end        {:>10}{}\n", num(t.end_to_end.samples_per_s),
                     why_suffix(e2e, compute));
  out += fmt::format("  predicted e2e     {:>10}   (min of pipeline and compute{})\n",
                     num(t.predicted_end_to_end),
                     t.predicted_end_to_end ? ""
                     : !compute.empty()     ? ": compute n/a"
                                            : ": pipeline n/a");
  for (const auto& caveat : report::ordering_caveats(s))
    out += fmt::format("  caveat: {}\n", caveat["text"].get<std::string>());
  out += fmt::format("stall fraction: {}   time to first batch: {}\n",
                     s.stall_fraction ? fmt::format("{:.1f} %", 100 * *s.stall_fraction)
                     : e2e.empty()    ? "n/a (no measured step time)"
                                      : "n/a (no end-to-end phase)",
                     first_batch_text(s, pipeline));
  return out;
}

}  // namespace

std::string format_summary(const Summary& s, const json& config) {
  std::string out = fmt::format("status: {}\n", s.status);
  out += format_throughput(s, config);
  out += format_verdict(s);
  const Latency& l = s.latency;
  out += fmt::format("latency (ms, {} phase):\n", l.phase.empty() ? "no" : l.phase);
  out += dist_line("step", l.step);
  out += dist_line("wait", l.wait);
  const bool job = s.external();
  // DALI's pipeline, a torchdata.nodes Loader: no DataLoader stage, worker or argument of theirs.
  const std::string foreign =
      job ? report::not_a_dataloader(report::followed_loader_config(s)) : "";
  out += fmt::format("per-sample stages (ms, {} phase):\n",
                     l.stages_phase.empty() ? "no" : l.stages_phase);
  const std::vector<const char*> stages =
      job ? std::vector<const char*>{"getitem", "fetch", "collate", "pin"}
          : std::vector<const char*>{"read", "decode", "augment", "collate", "pin"};
  // pin_mode says why nothing was pinned ("pageable: loader.pin_memory=false").
  const std::string pin_mode = s.pin_mode.value_or("");
  for (const char* stage : !foreign.empty() ? std::vector<const char*>{} : stages) {
    out += dist_line(stage, l.stage(stage),
                     std::string(stage) == "pin" && !pin_mode.empty() && pin_mode != "pinned"
                         ? "batches stayed pageable (why: the pin line below)"
                         : fmt::format("no sample measured in the {} phase",
                                       l.stages_phase.empty() ? "pipeline" : l.stages_phase));
  }
  if (!foreign.empty())
    out += fmt::format("  n/a: {}; the hook times its iterator's waits\n", foreign);
  if (job) out += format_getitem_parts(l);
  if (s.stage_breakdown) out += format_breakdown(*s.stage_breakdown);
  if (s.workers_balance) out += format_workers(*s.workers_balance);
  static const std::vector<JobLoader> kNone;
  const std::vector<JobLoader>& loaders = s.job ? s.job->dataloader.loaders : kNone;
  out += format_memory(s.memory, loaders, !foreign.empty() ? foreign : no_workers_why(loaders));
  out += format_device(s);
  // The report's sentence (report/analysis): the run's cores, the host's, contention.
  out += "cpu: " + report::cpu_text(report::attribute_resources(s, json::object())["cpu"]) + "\n";
  const int64_t errors = s.errors.count;
  if (job) {
    // mmprof reads none of a job's samples: its dataset raises its own errors (job.exception).
    out +=
        "errors: n/a (the job's dataset handles its own samples; an exception that ended it "
        "is under job)\n";
  } else {
    out += errors == 0
               ? std::string("errors: none (no sample failed)\n")
               : fmt::format(
                     "errors: {} events on {} samples (one per line in errors.jsonl of "
                     "the run directory)\n",
                     errors, s.errors.samples ? std::to_string(*s.errors.samples) : "uncounted");
  }
  const int64_t ignored = s.reliability ? s.reliability->ignored_files : 0;  // none for a job
  if (ignored > 0) {
    out += fmt::format(
        "ignored: {} files under the dataset are neither samples nor captions (errors.jsonl, "
        "kind ignored)\n",
        ignored);
  }
  // Null for a job the hook did not see; mmprof's runs give the pipeline phase's steady wait, a
  // job's block is its loop's own.
  const BoundaryJudgement* e = s.epoch_boundary ? s.epoch_boundary->headline() : nullptr;
  if (e != nullptr && e->stall_ms) {
    const std::optional<bool> persistent = s.epoch_boundary->persistent_workers;
    out += fmt::format("epoch boundary: first batch waits {} ms (steady {} ms), {} workers\n",
                       num(or_null(e->stall_ms), "{:.2f}"),
                       num_or(or_null(e->steady_wait_ms), "{:.2f}", "no steady batch"),
                       persistent ? (*persistent ? "persistent" : "non-persistent") : "unknown");
    if (!e->verdict.empty()) out += "  " + e->verdict + "\n";
  }
  if (s.resume) {
    out += fmt::format("resumed {} from {} at batch {}: first batch {} ms after the restart\n",
                       s.resume->phase, s.resume->from, s.resume->start_batch_id,
                       num(std::optional(s.resume->time_to_first_batch_ms)));
  }
  if (job) out += format_job(s);
  if (s.trace) {
    const TraceFigures& tr = *s.trace;
    out += fmt::format("trace: {} events in {} ({} recorded, {} dropped at trace.max_events={})\n",
                       tr.events, tr.file, tr.recorded_events, tr.dropped_events, tr.max_events);
  }
  return out;
}

std::string format_job_summary(const json& job) {
  std::string out = fmt::format("job: {} ranks, dist.sync={}, {} phase, status {}\n",
                                job["world_size"].get<int>(),
                                job["sync"].is_string() ? job["sync"].get<std::string>() : "?",
                                job["phase"].is_string() ? job["phase"].get<std::string>() : "no",
                                job["status"].get<std::string>());
  const auto num = [](const json& v, const char* f) {
    return v.is_number() ? fmt::format(fmt::runtime(f), v.get<double>()) : std::string("n/a");
  };
  out += fmt::format("  global {} samples/s\n", num(job["global"]["samples_per_s"], "{:.1f}"));
  out += fmt::format("  {:>4} {:>10} {:>7} {:>9} {:>9} {:>9} {:>8}  {}\n", "rank", "samples/s",
                     "stall", "step p50", "step p99", "sync ms", "slowest", "status");
  const json& s = job["stragglers"];
  for (const json& r : job["ranks"]) {
    const int k = r["rank"].get<int>();
    std::string slowest = "-";
    if (s.is_object()) {
      slowest =
          fmt::format("{}", s["by_rank"][static_cast<size_t>(k)]["slowest_steps"].get<int64_t>());
    }
    out += fmt::format("  {:>4} {:>10} {:>7} {:>9} {:>9} {:>9} {:>8}  {}\n", k,
                       num(r.value("samples_per_s", json()), "{:.1f}"),
                       r.value("stall_fraction", json()).is_number()
                           ? fmt::format("{:.1f} %", 100 * r["stall_fraction"].get<double>())
                           : "n/a",
                       num(r.value("step_ms", json::object()).value("p50", json()), "{:.1f}"),
                       num(r.value("step_ms", json::object()).value("p99", json()), "{:.1f}"),
                       num(r.value("sync_ms_mean", json()), "{:.2f}"), slowest,
                       r["status"].get<std::string>());
  }
  const json& epochs = job.value("epochs", json());
  if (epochs.is_object()) {
    out += fmt::format("  {}{}\n", epochs["equal"] == true ? "epochs: " : "warning: ",
                       epochs["text"].get<std::string>());
  }
  if (s.is_object()) {
    out += fmt::format("  slowest rank: {} (slowest in {:.0f} % of {} steps; spread {})\n  {}\n",
                       s["slowest_rank"].get<int>(), 100 * s["slowest_rank_share"].get<double>(),
                       s["steps"].get<int64_t>(), num(s["spread"], "{:.2f}x"),
                       s["cause"]["text"].get<std::string>());
  }
  for (const json& f : job["failed_ranks"]) {
    out += fmt::format("  rank {} failed: {}{}\n", f["rank"].get<int>(),
                       f["how"].is_string() ? f["how"].get<std::string>() : "",
                       f["message"].is_string() ? ": " + f["message"].get<std::string>() : "");
  }
  return out;
}

namespace {

// Columns of UTF-8 text: its characters (every byte but a continuation byte 10xxxxxx).
size_t columns(std::string_view s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

void wrap_line(std::string_view line, size_t width, std::string& out) {
  const size_t indent = std::min(line.find_first_not_of(' '), line.size());
  const std::string more(indent + 2, ' ');
  std::string_view rest = line;
  std::string_view lead;  // the indentation the current piece starts with
  while (columns(lead) + columns(rest) > width) {
    const size_t room = width - std::min(width, columns(lead));
    const size_t first = lead.empty() ? indent + 1 : 1;  // never cut inside the indentation
    // The last space that leaves the piece within the room (by characters), else the first.
    size_t cut = std::string_view::npos, chars = 0;
    for (size_t i = 0; i < rest.size() && chars <= room; ++i) {
      if ((static_cast<unsigned char>(rest[i]) & 0xC0) != 0x80) ++chars;
      if (rest[i] == ' ' && i >= first) cut = i;
    }
    if (cut == std::string_view::npos) cut = rest.find(' ', first);
    if (cut == std::string_view::npos) break;
    out.append(lead).append(rest.substr(0, cut)).push_back('\n');
    rest = rest.substr(std::min(rest.size(), rest.find_first_not_of(' ', cut)));
    lead = more;
  }
  out.append(lead).append(rest).push_back('\n');
}

}  // namespace

std::string wrap_lines(const std::string& text, size_t width) {
  if (width == 0) return text;
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    wrap_line(std::string_view(text).substr(at, end - at), width, out);
    at = end + 1;
  }
  if (!text.empty() && text.back() != '\n') out.pop_back();
  return out;
}

}  // namespace mmprof::report
