#include "cli/baseline.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "cli/ranks.hpp"
#include "cli/resume.hpp"
#include "cli/usage.hpp"
#include "external/external_run.hpp"
#include "external/hook_env.hpp"
#include "external/job_process.hpp"
#include "external/stand_in.hpp"
#include "mmprof/baseline.hpp"
#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "probe/clock.hpp"
#include "report/analysis.hpp"
#include "report/json_access.hpp"
#include "util/shell_quote.hpp"

namespace mmprof::cli {
namespace {

using nlohmann::json;

std::string num(const json& v, const char* f = "{:.1f}") {
  return v.is_number() ? fmt::format(fmt::runtime(f), v.get<double>()) : "n/a";
}

// A figure, or "n/a (why)": the summary never prints an n/a without its reason.
std::string num_or(const json& v, const char* f, const std::string& why) {
  return v.is_number() ? num(v, f) : "n/a (" + why + ")";
}

// A distribution with no values says why instead of four n/a.
std::string dist_line(const char* name, const json& d, const std::string& why_empty = "") {
  if (d["count"].get<size_t>() == 0 && !why_empty.empty())
    return fmt::format("  {:<9} n/a: {}\n", name, why_empty);
  return fmt::format("  {:<9} p50 {:>8}  p90 {:>8}  p99 {:>8}  max {:>8}  (n={})\n", name,
                     num(d["p50"], "{:.2f}"), num(d["p90"], "{:.2f}"), num(d["p99"], "{:.2f}"),
                     num(d["max"], "{:.2f}"), d["count"].get<size_t>());
}

// A job's torchvision dataset: inside __getitem__, its loader (decode) and each transform, over
// the items whose parts the hook timed; nothing when it timed none.
std::string format_getitem_parts(const json& latency) {
  const json& decode = latency["stages"]["decode"];
  const json& augment = latency["stages"]["augment"];
  const json transforms = latency.value("transforms", json::object());
  if (decode["count"].get<size_t>() == 0 && augment["count"].get<size_t>() == 0) return "";
  std::string out =
      fmt::format("inside __getitem__ (ms per {}: the dataset's loader, then its transforms):\n",
                  latency.value("getitem_per_call", false) ? "__getitems__ call" : "sample");
  if (decode["count"].get<size_t>() > 0) out += dist_line("decode", decode);
  if (augment["count"].get<size_t>() > 0) out += dist_line("augment", augment);
  for (const auto& [name, d] : transforms.items())
    out += dist_line(("  " + name).c_str(), d);
  return out;
}

// mmprof's loader: stage times by sample class, slowest decode first, and the slowest class.
std::string format_breakdown(const json& b) {
  std::string out = fmt::format(
      "by sample class (ms per sample, {} phase; format, modality, source resolution):\n",
      b.value("phase", "?"));
  for (const auto& c : b["by_class"]) {
    out +=
        fmt::format("  {:<26} n={:<5} read {:>8}  decode {:>8}  augment {:>8}  {:>5} of decode\n",
                    c["class"].get<std::string>(), c["samples"].get<int64_t>(),
                    num(c["read_ms_mean"], "{:.2f}"), num(c["decode_ms_mean"], "{:.2f}"),
                    num(c["augment_ms_mean"], "{:.2f}"),
                    c["decode_share"].is_number()
                        ? fmt::format("{:.0f}%", 100 * c["decode_share"].get<double>())
                        : "n/a (no decode time)");
  }
  const json& slow = b["slowest"]["by_mean_decode"];
  const json& share = b["slowest"]["by_decode_share"];
  out += fmt::format(
      "  slowest class: {} (decode {} ms per sample{}); largest share of decode: {} "
      "({})\n",
      slow["class"].get<std::string>(), num(slow["decode_ms_mean"]),
      slow["times_rest"].is_number()
          ? fmt::format(", {:.1f}x the rest", slow["times_rest"].get<double>())
          : "",
      share["class"].get<std::string>(),
      share["decode_share"].is_number()
          ? fmt::format("{:.0f}%", 100 * share["decode_share"].get<double>())
          : "n/a: no decode time");
  return out;
}

// mmprof's loader: each worker's load and the imbalance flag with its likely cause.
std::string format_workers(const json& w) {
  std::string out = "loader workers (pipeline phase):\n";
  for (const auto& x : w["workers"]) {
    out += fmt::format(
        "  worker {:<3} busy {:>6}  batches {:<5} samples {:<6} {}\n", x["worker"].get<int>(),
        num_or(x["busy_fraction"], "{:.2f}", "no measured window"), x["batches"].get<int64_t>(),
        x["samples"].get<int64_t>(),
        x["bytes"].is_number() ? num(json(x["bytes"].get<double>() / 1e6)) + " MB read"
                               : "MB read n/a (its reads were not counted)");
  }
  if (w.value("imbalanced", false)) {
    for (const auto& f : w["flags"])
      out += fmt::format("  imbalanced: {}\n", f.get<std::string>());
    if (w["likely_cause"].is_string())
      out += fmt::format("  likely cause: {}\n", w["likely_cause"].get<std::string>());
  } else if (w["busy_spread_fraction"].is_number()) {
    out += fmt::format("  balanced: busy fractions within {:.2f} (limit {})\n",
                       w["busy_spread_fraction"].get<double>(),
                       num(w["busy_spread_limit_fraction"], "{:g}"));
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
std::string worker_group(const json& w, const json& loaders, bool by_loader) {
  if (!by_loader || !w.contains("loader")) return w.value("phase", "?");
  std::string what;
  for (const auto& l : loaders.is_array() ? loaders : json::array()) {
    if (l.value("pid", 0) != w.value("main_pid", -1) || l.value("loader", -1) != w["loader"])
      continue;
    what = fmt::format(" ({}{})", report::string_at(l, "/config/dataset", "?"),
                       l.value("followed", false) ? ", followed" : "");
  }
  return fmt::format("loader {}{}", w["loader"].get<int>(), what);
}

// Why a run shows no worker's PSS: its loader has none, or (a job's loaders start some) no
// sample read them before the run ended.
std::string no_workers_why(const json& loaders) {
  int64_t most = 0;
  for (const auto& l : loaders.is_array() ? loaders : json::array()) {
    most = std::max(most,
                    static_cast<int64_t>(report::number_at(l, "/config/num_workers").value_or(0)));
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
// serve several (`loaders`: the job's, null for mmprof's loader). The *_mb keys hold MiB.
// `no_workers`: why the run has no worker process (shown when none was sampled).
std::string format_memory(const json& m, const json& loaders, const std::string& no_workers) {
  if (!m.is_object()) return "memory: n/a (summary.json has no memory block)\n";
  if (m.value("sampler_error", json()).is_string()) {
    return fmt::format("memory: n/a (the resource sampler failed: {})\n",
                       m["sampler_error"].get<std::string>());
  }
  const auto mib = [](const json& v) { return num_or(v, "{:.1f}", "not sampled"); };
  std::string out = fmt::format("memory (MiB, peaks): host used {} of {}; PSS of the run {}\n",
                                mib(m.value("host_used_peak_mib", json())),
                                mib(m.value("host_total_mib", json())),
                                mib(m.value("total_pss_peak_mib", json())));
  const json all = m.value("workers", json::array());
  std::set<std::pair<int, int>> served;  // (main pid, loader) of the workers
  for (const auto& w : all)
    if (w.contains("loader")) served.emplace(w.value("main_pid", 0), w["loader"].get<int>());
  std::vector<std::pair<std::string, std::vector<double>>> groups;
  for (const auto& w : all) {
    if (!w.value("pss_peak_mib", json()).is_number()) continue;
    const std::string group = worker_group(w, loaders, served.size() > 1);
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& p) { return p.first == group; });
    if (it == groups.end()) it = groups.insert(groups.end(), {group, {}});
    it->second.push_back(w["pss_peak_mib"].get<double>());
  }
  std::string workers;
  for (const auto& [group, values] : groups)
    workers += fmt::format("{}{} {}", workers.empty() ? "" : "; ", group, pss_values(values));
  out += fmt::format("  PSS: main {}; workers {}\n", mib(report::value_at(m, "/main/pss_peak_mib")),
                     workers.empty() ? "none (" + no_workers + ")" : workers);
  return out;
}

// Pinning and the GPU on one line: how batches were held, and whether the GPU was measured.
std::string format_device(const json& s) {
  const json pin = report::value_at(s, "/pin_mode");
  const json& g = s.value("gpu", json());
  std::string gpu;
  if (g.is_object()) {
    const json idle = g.value("idle_fraction", json());
    const json cupti = report::value_at(g, "/cupti/unavailable");
    gpu = idle.is_number()
              ? fmt::format("idle {:.1f} % of the measured steps (CUPTI)", 100 * idle.get<double>())
          : cupti.is_string() ? "idle n/a (CUPTI unavailable: " + cupti.get<std::string>() + ")"
                              : "idle n/a (no GPU activity in the measured steps)";
  } else {
    gpu = s.value("gpu_unavailable", json("not measured")).get<std::string>();
  }
  // A job's batches are pinned (or not) by the DataLoader mmprof followed.
  json job_pin;
  const json loaders = report::value_at(s, "/job/dataloader/loaders");
  for (const auto& loader : loaders.is_array() ? loaders : json::array()) {
    if (loader.value("followed", false)) job_pin = report::value_at(loader, "/config/pin_memory");
  }
  const std::string foreign = report::not_a_dataloader(s);
  std::string pinning = "n/a (no loader ran)";
  if (pin.is_string()) {
    pinning = pin.get<std::string>();
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
std::string format_verdict(const json& s) {
  // A job without the hook's waits is no "pipeline-only" run: nothing says what bounds it.
  if (s.value("source", "mmprof") == "external" && !s["stall_fraction"].is_number()) {
    return fmt::format("bottleneck: n/a (no wait for data was measured in the job; hook: {})\n",
                       report::value_at(s, "/job/hook/status").is_string()
                           ? s["job"]["hook"]["status"].get<std::string>()
                           : "no status");
  }
  const json c = report::classify(s);
  return fmt::format("bottleneck: {}: {}\n", c["primary"].get<std::string>(),
                     c["why"].get<std::string>());
}

}  // namespace

void setup_baseline(CLI::App& app, BaselineCliOptions& o) {
  add_run_options(app, o.run);
  add_json_flag(app, o.json, "summary.json");
  app.add_option("--steps", o.steps,
                 "Measured steps (= --set phases.steps=N; default 100); for a job, batches of its "
                 "DataLoader after warm-up, then the job is stopped (default: the job runs until "
                 "it ends)")
      ->check(above(0));
  app.add_option("--warmup-steps", o.warmup_steps,
                 "Warm-up steps left out of every figure (= --set phases.warmup_steps=N; default "
                 "10)")
      ->check(at_least(0));
  app.add_option("--duration", o.duration_s,
                 "A job: stop it after this many seconds of measured steps (instead of --steps)")
      ->check(above(0));
  app.add_option("--loader", o.loader,
                 "A job with several DataLoaders: which one to follow (its construction index in "
                 "the process, or its dataset's class name); default: the one iterated most");
  app.add_option("--like", o.like,
                 "Configure mmprof's loader like the job measured in RUN (its DataLoader's batch "
                 "size, workers, prefetch, pinning, data and step time), to compare the stand-in "
                 "with the job in mmprof report RUN STAND_IN");
  app.add_option("--env", o.env, "A job: NAME=VALUE added to its environment (repeatable)")
      ->allow_extra_args(false);
  app.add_option("command", o.command,
                 "Your own job, after --: mmprof baseline -- python train.py ARGS (its "
                 "DataLoader is timed by a zero-code hook, its process tree sampled)");
  app.add_option("--nproc-per-node", o.nproc_per_node,
                 "Start N ranks of this run on this host, synchronised through c10d as under "
                 "torchrun (dist.sync); writes a job directory: one run per rank + job.json")
      ->check(CLI::Range(2, 1024));
  app.add_option("--resume", o.resume,
                 "Continue the interrupted run directory RUN from its checkpoint.json, with its "
                 "configuration, into a new run directory (--out, default RUN-resumed)");
}

namespace {

// The DataLoader the hook followed, as the job built it, and the dataset library under it with
// its own settings: "DataLoader(batch_size=8, num_workers=2, prefetch_factor=2) over Images, a
// mosaicml-streaming 0.13.0 StreamingDataset (batch_size=8, shuffle=false, ...)". "" for none.
std::string followed_loader_text(const json& summary) {
  const json c = report::followed_loader_config(summary);
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
  const bool dali = report::followed_loader_is_dali(summary);
  if (!dali && !report::not_a_dataloader(summary).empty()) {
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
std::string format_job(const json& s) {
  const json& j = s["job"];
  std::string cmd;
  for (const auto& a : j.value("command", json::array()))
    cmd += (cmd.empty() ? "" : " ") + a.get<std::string>();
  std::string out = fmt::format("job: {}\n  {}\n", cmd, j.value("ended", "?"));
  if (const json why = report::value_at(j, "/steps/short_why"); why.is_string())
    out += fmt::format("  warning: {}\n", why.get<std::string>());
  out += fmt::format("  hook: {}\n", j["hook"].value("status", "?"));
  if (j.value("primary_why", "") != "")
    out += fmt::format("  figures above: {}\n", j["primary_why"].get<std::string>());
  if (const std::string loader = followed_loader_text(s); !loader.empty())
    out += fmt::format("  loader: {}\n", loader);
  // A --set loader.* the job's DataLoader refused (issue 32, case 17), as the report says it.
  const json loaders = report::value_at(j, "/dataloader/loaders");
  for (const auto& l : loaders.is_array() ? loaders : json::array()) {
    const json rejected = report::value_at(l, "/overrides/rejected");
    if (!rejected.is_object()) continue;
    for (const auto& [key, why] : rejected.items()) {
      out += fmt::format("  warning: --set loader.{} was not applied: {}\n", key,
                         why.is_string() ? why.get<std::string>() : why.dump());
    }
  }
  if (j.contains("digests") && j["digests"].is_object())
    out += fmt::format("  content digests: {}\n", j["digests"].value("text", "?"));
  for (const auto& k : j.value("killed_at_end", json::array()))
    out += fmt::format("  killed at the end: {}\n", k.get<std::string>());
  for (const auto& u : j.value("unavailable", json::array()))
    out += fmt::format("  {}\n", u.get<std::string>());
  for (const auto& c : j.value("cow", json::array())) {
    if (c.value("growing", false))
      out += fmt::format("  copy-on-write: {}\n", c.value("verdict", ""));
  }
  return out;
}

namespace {

// Why a phase of the run has no figures (its throughput is null), or "" when it has them.
std::string why_no_phase(const json& s, const json& config, const std::string& phase) {
  if (report::value_at(s, "/throughput/" + phase + "/samples_per_s").is_number()) return "";
  const json why = report::value_at(s, "/throughput/" + phase + "/why_null");
  if (why.is_string()) return why;
  const bool ran = !report::value_at(s, "/phases/" + phase).is_null();
  const json resume = report::value_at(s, "/reliability/resume");
  if (resume.is_object() && resume.value("phase", "") != phase && !ran)
    return fmt::format("not run again when resumed from {}", resume.value("from", "?"));
  if (!ran && phase != "pipeline" && report::value_at(config, "/step/kind") == "none") {
    return "step.kind=none, no step to time: use configs/emulated-accelerator.yaml or --set "
           "step.kind=sleep";
  }
  if (s["status"] != "complete") {
    return fmt::format("the run ended ({}) before the {} phase measured",
                       s["status"].get<std::string>(), phase);
  }
  return fmt::format("the {} phase has no measured window", phase);
}

// "   (why)" after a figure that is n/a; the end-to-end line points at the compute line when
// both have the same reason.
std::string why_suffix(const std::string& why, const std::string& same_as = "") {
  if (why.empty()) return "";
  return fmt::format("   ({})", why == same_as ? "as compute" : why);
}

// The pipeline phase's loader's time to its first batch.
std::string first_batch_text(const json& s, const std::string& why_no_pipeline) {
  if (s["time_to_first_batch_ms"].is_number()) return num(s["time_to_first_batch_ms"]) + " ms";
  if (!why_no_pipeline.empty()) return "n/a (" + why_no_pipeline + ")";
  return "n/a (the pipeline phase delivered no batch)";
}

std::string format_throughput(const json& s, const json& config) {
  const json& t = s["throughput"];
  const std::string compute = why_no_phase(s, config, "compute"),
                    pipeline = why_no_phase(s, config, "pipeline"),
                    e2e = why_no_phase(s, config, "end_to_end");
  std::string out = "throughput (samples/s):\n";
  out += fmt::format("  compute ceiling   {:>10}{}\n", num(t["compute"]["samples_per_s"]),
                     why_suffix(compute));
  out +=
      fmt::format("  pipeline only     {:>10}   {}\n", num(t["pipeline"]["samples_per_s"]),
                  pipeline.empty() ? fmt::format("({} MB/s read)", num(t["pipeline"]["mb_per_s"]))
                                   : fmt::format("({})", pipeline));
  out += fmt::format("  end to end        {:>10}{}\n", num(t["end_to_end"]["samples_per_s"]),
                     why_suffix(e2e, compute));
  const json predicted = t["predicted_end_to_end"]["samples_per_s"];
  out +=
      fmt::format("  predicted e2e     {:>10}   (min of pipeline and compute{})\n", num(predicted),
                  predicted.is_number() ? ""
                  : !compute.empty()    ? ": compute n/a"
                                        : ": pipeline n/a");
  for (const auto& caveat : report::ordering_caveats(s))
    out += fmt::format("  caveat: {}\n", caveat["text"].get<std::string>());
  out += fmt::format("stall fraction: {}   time to first batch: {}\n",
                     s["stall_fraction"].is_number()
                         ? fmt::format("{:.1f}%", 100 * s["stall_fraction"].get<double>())
                     : e2e.empty() ? "n/a (no measured step time)"
                                   : "n/a (no end-to-end phase)",
                     first_batch_text(s, pipeline));
  return out;
}

}  // namespace

std::string format_summary(const json& s, const json& config) {
  std::string out = fmt::format("status: {}\n", s["status"].get<std::string>());
  out += format_throughput(s, config);
  out += format_verdict(s);
  const json& l = s["latency_ms"];
  out += fmt::format("latency (ms, {} phase):\n",
                     l["phase"].is_string() ? l["phase"].get<std::string>() : "no");
  out += dist_line("step", l["step"]);
  out += dist_line("wait", l["wait"]);
  const bool job = s.value("source", "mmprof") == "external";
  // DALI's pipeline, a torchdata.nodes Loader: no DataLoader stage, worker or argument of theirs.
  const std::string foreign = job ? report::not_a_dataloader(s) : "";
  out += fmt::format("per-sample stages (ms, {} phase):\n",
                     l["stages_phase"].is_string() ? l["stages_phase"].get<std::string>() : "no");
  const std::vector<const char*> stages =
      job ? std::vector<const char*>{"getitem", "fetch", "collate", "pin"}
          : std::vector<const char*>{"read", "decode", "augment", "collate", "pin"};
  // pin_mode says why nothing was pinned ("pageable: loader.pin_memory=false").
  const std::string pin_mode = s["pin_mode"].is_string() ? s["pin_mode"].get<std::string>() : "";
  for (const char* stage : !foreign.empty() ? std::vector<const char*>{} : stages) {
    out += dist_line(
        stage, l["stages"][stage],
        std::string(stage) == "pin" && !pin_mode.empty() && pin_mode != "pinned"
            ? pin_mode
            : fmt::format("no sample measured in the {} phase",
                          l["stages_phase"].is_string() ? l["stages_phase"].get<std::string>()
                                                        : "pipeline"));
  }
  if (!foreign.empty())
    out += fmt::format("  n/a: {}; the hook times its iterator's waits\n", foreign);
  if (job) out += format_getitem_parts(l);
  if (s.contains("stage_breakdown") && s["stage_breakdown"].is_object())
    out += format_breakdown(s["stage_breakdown"]);
  if (s.contains("workers_balance") && s["workers_balance"].is_object())
    out += format_workers(s["workers_balance"]);
  const json loaders = report::value_at(s, "/job/dataloader/loaders");
  out += format_memory(s.value("memory", json()), loaders,
                       !foreign.empty() ? foreign : no_workers_why(loaders));
  out += format_device(s);
  // The report's sentence (report/analysis): the run's cores, the host's, contention.
  out += "cpu: " + report::cpu_text(report::attribute_resources(s, json::object())["cpu"]) + "\n";
  const auto errors = s["errors"]["count"].get<int64_t>();
  if (job) {
    // mmprof reads none of a job's samples: its dataset raises its own errors (job.exception).
    out +=
        "errors: n/a (the job's dataset handles its own samples; an exception that ended it "
        "is under job)\n";
  } else {
    out += fmt::format("errors: {} events over {} samples{}\n", errors,
                       s["errors"]["samples"].get<int64_t>(),
                       errors > 0 ? " (one per line in errors.jsonl of the run directory)" : "");
  }
  const json reliability = s.value("reliability", json());  // null for a user's job
  const int64_t ignored = reliability.is_object() ? reliability.value("ignored_files", 0) : 0;
  if (ignored > 0) {
    out += fmt::format(
        "ignored: {} files under the dataset are neither samples nor captions (errors.jsonl, "
        "kind ignored)\n",
        ignored);
  }
  const json e = s.value("epoch_boundary", json());  // null for a job the hook did not see
  if (e.is_object() && e.value("stall_ms", json()).is_number()) {
    // mmprof's runs give the pipeline phase's steady wait; a job's block is its loop's own.
    const json steady = e.contains("pipeline") ? e["pipeline"].value("steady_wait_ms", json())
                                               : e.value("steady_wait_ms", json());
    const json persistent = e.value("persistent_workers", json());
    out += fmt::format("epoch boundary: first batch waits {} ms (steady {} ms), {} workers\n",
                       num(e["stall_ms"], "{:.2f}"), num_or(steady, "{:.2f}", "no steady batch"),
                       persistent.is_boolean()
                           ? (persistent.get<bool>() ? "persistent" : "non-persistent")
                           : "unknown");
    if (e.contains("verdict") && e["verdict"].is_string())
      out += "  " + e["verdict"].get<std::string>() + "\n";
  }
  if (s.contains("reliability") && s["reliability"].contains("resume")) {
    const json& r = s["reliability"]["resume"];
    out += fmt::format("resumed {} from {} at batch {}: first batch {} ms after the restart\n",
                       r["phase"].get<std::string>(), r["from"].get<std::string>(),
                       r["start_batch_id"].get<uint64_t>(), num(r["time_to_first_batch_ms"]));
  }
  if (job) out += format_job(s);
  if (s.contains("trace")) {
    const json& tr = s["trace"];
    out += fmt::format("trace: {} events in {} ({} recorded, {} dropped at trace.max_events={})\n",
                       tr["events"].get<uint64_t>(), tr["file"].get<std::string>(),
                       tr["recorded_events"].get<uint64_t>(), tr["dropped_events"].get<uint64_t>(),
                       tr["max_events"].get<uint64_t>());
  }
  return out;
}

namespace {

// --steps and --warmup-steps are phases.* for mmprof's loader (and for a job, its batch counts).
RunOptions with_step_options(const BaselineCliOptions& o) {
  RunOptions r = o.run;
  if (o.steps) r.sets.push_back(fmt::format("phases.steps={}", *o.steps));
  if (o.warmup_steps) r.sets.push_back(fmt::format("phases.warmup_steps={}", *o.warmup_steps));
  return r;
}

// Runs `run`; when it is interrupted (SIGINT, exit 130) after writing its checkpoint, the error
// names the run directory and ends with the command that continues it (`mmprof baseline` or
// `mmprof trace`, as `command` ran it), ready to paste.
template <class Run>
json with_resume_command(const std::string& command, const std::filesystem::path& out, Run run) {
  try {
    return run();
  } catch (const Error& e) {
    std::error_code ec;
    if (e.code() != ExitCode::interrupted ||
        !std::filesystem::exists(out / run_file::checkpoint, ec))
      throw;
    const std::string dir = std::filesystem::absolute(out).lexically_normal().string();
    throw Error(e.code(),
                fmt::format("{}; run directory {}; continue it with: mmprof {} --resume {}",
                            e.what(), dir, command, shell_word(dir)));
  }
}

// The run's result on stdout: summary.json under --json, nothing under --quiet, else the
// human summary and where the run directory is.
void print_result(const BaselineCliOptions& o, const json& summary, const json& config_tree,
                  const std::filesystem::path& out) {
  if (o.json) {
    print_json(summary);
  } else if (!o.run.verbosity.quiet) {
    std::fputs(format_summary(summary, config_tree).c_str(), stdout);
    std::printf("run directory: %s\n", std::filesystem::absolute(out).c_str());
  }
}

int run_job(const BaselineCliOptions& o, const std::vector<std::string>& argv,
            const std::string& command, bool trace) {
  if (!o.resume.empty()) throw UsageError("--resume continues mmprof's own loader, not a job");
  if (!o.run.data.empty()) {
    throw UsageError(
        "--data does not apply to a job (it reads its own data); use it with "
        "mmprof baseline --like RUN");
  }
  if (o.steps && o.duration_s)
    throw UsageError("--steps and --duration both bound the run: give one");
  // A command that cannot start is refused before --out holds anything of a run.
  external::resolve_command(o.command.front());
  const RunOptions run = with_step_options(o);
  const ResolvedRun r = resolve_run(run);
  external::ExternalRunOptions e;
  e.out = o.run.out.empty() ? default_out_dir(command) : o.run.out;
  e.force = o.run.force;
  e.argv = argv;
  e.command = o.command;
  e.config_tree = r.tree;
  e.config = r.config;
  e.overrides = external::dataloader_overrides(r.tree, run.sets);
  e.warmup_steps = r.config.phases.warmup_steps;
  // A job runs until it ends by itself unless it is bounded: --steps or phases.steps set.
  const bool steps_set = std::any_of(run.sets.begin(), run.sets.end(), [](const std::string& s) {
    return s.rfind("phases.steps=", 0) == 0;
  });
  if (steps_set) e.steps = r.config.phases.steps;
  e.duration_s = o.duration_s;
  e.loader = o.loader;
  for (const auto& kv : o.env) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("--env " + kv + " must be NAME=VALUE");
    e.env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  e.repo = o.run.repo;
  e.progress = progress_style(o.run.verbosity, o.json);
  e.show_job_output = !o.run.verbosity.quiet;
  e.trace = trace;
  print_result(o, external::run_external(e), e.config_tree, e.out);
  return 0;
}

// One rank of a job (under torchrun or --nproc-per-node): its run directory is JOB/rank-K;
// rank 0 prints the job, the others only their errors.
int run_rank(const BaselineCliOptions& o, const ResolvedRun& r, const Dataset& dataset,
             const json& like, const std::vector<std::string>& argv, BaselineRunner runner) {
  RankJob job = join_job(r.config, r.tree, dataset.fingerprint(), o.run.out);
  BaselineOptions b;
  b.out = job.out;
  b.force = o.run.force;
  b.argv = argv;
  b.config_tree = r.tree;
  b.repo = o.run.repo;
  b.progress =
      r.config.dist.rank == 0 ? progress_style(o.run.verbosity, o.json) : ProgressStyle::none;
  b.like = like;
  b.group = job.group.get();
  json summary;
  try {
    summary = runner(r.config, dataset, b);
  } catch (const Error&) {
    // What the others measured stays; rank 0 merges what is there (a peer may still be writing:
    // mmprof report JOB merges again).
    try {
      (void)finish_job(job, false);
    } catch (const Error&) {  // the run's own error is the one to report
    }
    throw;
  }
  const json merged = finish_job(job, true);
  if (merged.is_null()) return 0;
  if (o.json) {
    print_json(merged);
  } else if (!o.run.verbosity.quiet) {
    std::fputs(format_job_summary(merged).c_str(), stdout);
    std::printf("job directory: %s\n", job.job.c_str());
  }
  return 0;
}

}  // namespace

int run_baseline_command(const BaselineCliOptions& o, const std::vector<std::string>& argv,
                         const std::string& command, BaselineRunner runner) {
  if (o.nproc_per_node) return launch_ranks(o, argv, command);
  if (!o.command.empty()) return run_job(o, argv, command, runner != run_baseline);
  if (o.duration_s)
    throw UsageError("--duration bounds a job: mmprof baseline --duration S -- CMD");
  if (!o.loader.empty()) throw UsageError("--loader picks a job's DataLoader: -- CMD is missing");
  if (!o.env.empty()) throw UsageError("--env sets a job's environment: -- CMD is missing");
  const int64_t t_start = monotonic_ns();
  RunOptions run_options = with_step_options(o);
  nlohmann::json like;
  if (!o.like.empty()) {
    external::StandIn s = external::stand_in_for(RunDir::open(o.like));
    // The job's values first: the user's own --set and --data win over them.
    if (!o.run.data.empty()) {
      std::erase_if(s.sets, [](const std::string& v) { return v.rfind("data.path=", 0) == 0; });
    }
    run_options.sets.insert(run_options.sets.begin(), s.sets.begin(), s.sets.end());
    like = {{"run", std::filesystem::absolute(o.like).string()},
            {"sets", s.sets},
            {"why", s.why},
            {"unknown", s.unknown}};
  }
  BaselineOptions b;
  ResolvedRun r;
  if (o.resume.empty()) {
    r = resolve_run(run_options);
    b.out = o.run.out.empty() ? default_out_dir(command) : o.run.out;
  } else {
    ResumedRun resumed = resolve_resume(o.resume, o.run, t_start);
    r = std::move(resumed.resolved);
    b.out = resumed.out;
    b.resume = std::move(resumed.point);
  }
  const Dataset dataset = open_dataset(r.config);
  if (r.config.dist.world_size > 1) {
    if (!o.resume.empty()) throw UsageError("--resume continues one run, not a rank of a job");
    return run_rank(o, r, dataset, like, argv, runner);
  }
  b.force = o.run.force;
  b.argv = argv;
  b.config_tree = r.tree;
  b.repo = o.run.repo;
  b.progress = progress_style(o.run.verbosity, o.json);
  b.like = like;
  print_result(o, with_resume_command(command, b.out, [&] { return runner(r.config, dataset, b); }),
               b.config_tree, b.out);
  return 0;
}

}  // namespace mmprof::cli
