// layout_report: what the report shows, in which order (format-independent).
#include <fmt/format.h>

#include <cmath>

#include "report/document.hpp"
#include "report/json_access.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

std::string str(const json& v) {
  return v.is_null() ? "n/a" : value_text(v);
}

std::string pct(const json& v) {
  return v.is_number() ? fmt::format("{:.1f} %", 100 * v.get<double>()) : "n/a";
}

void run_overview(const json& run, Section& s) {
  const json& c = run["classification"];
  s.blocks.push_back(Paragraph{str(c["why"]), false});
  const json& p = run["prediction"];
  if (p["ratio"].is_number()) {
    s.blocks.push_back(Paragraph{fmt::format(
        "Predicted end to end, min(pipeline, compute): {} samples/s; measured: {} samples/s "
        "({} of the prediction{}).",
        format_number(p["predicted_samples_per_s"]), format_number(p["measured_samples_per_s"]),
        pct(p["ratio"]),
        p["interference"] == true ? ": the pipeline and the step interfere" : "")});
  }
  for (const auto& caveat : run.value("caveats", json::array()))
    s.blocks.push_back(Paragraph{"Caveat: " + str(caveat["text"]) + ".", true});
  const json& st = run["stages"];
  if (const json why = value_at(st, "/limit_not_established"); why.is_string()) {
    s.blocks.push_back(Paragraph{"Limit: not established: " + why.get<std::string>() + ".", true});
    return;
  }
  s.blocks.push_back(Paragraph{
      fmt::format(
          "Limit: stage {} ({} of the per-batch time), resource: {}{}.", str(st["limit"]),
          st["limit"].is_string() ? pct(st["shares"][st["limit"].get<std::string>()]) : "n/a",
          str(value_at(run, "/resources/limit")),
          value_at(run, "/resources/limit_why").is_string()
              ? ": " + str(value_at(run, "/resources/limit_why"))
              : ""),
      true});
}

void run_facts(const json& run, std::vector<Section>& out, int level) {
  Section s{level, "Observed", {}};
  Table t{{"fact", "metric", "value"}, {}};
  for (const auto& f : run["facts"]) {
    t.rows.push_back(
        {str(f["text"]), str(f["metric"]), format_figure(f["value"]) + " " + str(f["unit"])});
  }
  s.blocks.push_back(t);
  s.blocks.push_back(
      Chart{"stages", "Per-batch time by stage (ms)", run["stages"]["per_batch_ms"], ""});
  const json cdf = run["charts"]["latency_cdf"];
  s.blocks.push_back(Chart{
      "cdf",
      fmt::format("Step and wait time by percentile{}, from steps.csv (ms)",
                  cdf.is_array() && !cdf.empty() && cdf.front()["phase"] == cdf.back()["phase"]
                      ? ", " + cdf.front()["phase"].get<std::string>() + " phase"
                      : ""),
      cdf,
      "The percentile axis is logarithmic in 1 / (1 - p): p90, p99 and p99.9 are evenly spaced, "
      "so the tail is as wide as the body; max is the slowest step."});
  s.blocks.push_back(Chart{
      "steps", "Where each measured step's time went, from steps.csv (ms)",
      value_at(run, "/charts/step_breakdown"),
      "Each column is one step (or the mean of a run of steps, when there are many): the wait "
      "for its batch, the host-to-device copy, the step's compute, a multi-rank run's sync, and "
      "the rest of the step's time."});
  s.blocks.push_back(Chart{
      "memory", "Memory per process over time (RSS lines, PSS dots; MiB), from resources.csv",
      run["charts"]["memory"],
      "Each line is one process's RSS, sampled every interval for its whole life, named with the "
      "phases it was sampled in; its dots are its PSS, read where the sampler could afford "
      "smaps_rollup (at phase boundaries, and within 0.5 % of a core: seconds apart for a large "
      "process). A dashed rule marks where a phase's sampling began."});
  out.push_back(std::move(s));
}

// mmprof's loader: per-sample stage times by sample class, and the load of each worker.
void run_loader(const json& run, std::vector<Section>& out, int level) {
  const json classes = value_at(run, "/stage_breakdown/by_class");
  const json workers = value_at(run, "/workers_balance/workers");
  if (!classes.is_array() && !workers.is_array()) return;
  Section s{level, "Samples by class and loader workers", {}};
  if (classes.is_array()) {
    s.blocks.push_back(Paragraph{fmt::format(
        "Mean ms per sample in the {} phase by class (format or codec, modality, source "
        "resolution bucket), slowest decode first.",
        str(value_at(run, "/stage_breakdown/phase")))});
    Table t{{"class", "samples", "read ms", "decode ms", "decode p90 ms", "augment ms",
             "share of decode"},
            {}};
    for (const auto& c : classes) {
      const auto at = [&](const char* key) { return value_at(c, std::string("/") + key); };
      t.rows.push_back({str(at("class")), str(at("samples")), format_number(at("read_ms_mean"), 2),
                        format_number(at("decode_ms_mean"), 2),
                        format_number(at("decode_ms_p90"), 2),
                        format_number(at("augment_ms_mean"), 2), pct(at("decode_share"))});
    }
    s.blocks.push_back(t);
  }
  if (workers.is_array()) {
    Table t{{"worker", "batches", "samples", "MB read", "busy", "batch mean ms", "sample p50 ms"},
            {}};
    for (const auto& x : workers) {
      const auto at = [&](const char* key) { return value_at(x, std::string("/") + key); };
      const auto bytes = number_at(x, "/bytes");
      t.rows.push_back({str(at("worker")), str(at("batches")), str(at("samples")),
                        bytes ? format_number(json(*bytes / 1e6), 1) : "n/a",
                        pct(at("busy_fraction")), format_number(at("fetch_mean_ms"), 2),
                        format_number(at("getitem_p50_ms"), 2)});
    }
    s.blocks.push_back(t);
  }
  out.push_back(std::move(s));
}

// A user's own job: what ran and how it ended, and its ranks side by side.
void run_job(const json& run, std::vector<Section>& out, int level) {
  if (!run.contains("job") || !run["job"].is_object()) return;
  const json& j = run["job"];
  Section s{level, "The job", {}};
  s.blocks.push_back(CodeLines{{str(j["command"])}});
  // `ended` is one sentence (runs before it had the exit and who stopped the job).
  s.blocks.push_back(
      Paragraph{j["ended"].is_string()
                    ? fmt::format("It {}; DataLoader hook: {}.", str(j["ended"]), str(j["hook"]))
                    : fmt::format("Ended with {} (stopped by mmprof: {}); DataLoader hook: {}.",
                                  str(j["exit"]), str(j["stopped_by"]), str(j["hook"]))});
  if (j["short_why"].is_string())
    s.blocks.push_back(Paragraph{"Warning: " + str(j["short_why"]) + ".", true});
  if (j["exception"].is_object()) {
    const json& e = j["exception"];
    s.blocks.push_back(Paragraph{
        fmt::format("It raised {}{}.", str(e["text"]),
                    e["process"].is_string() ? " in its " + e["process"].get<std::string>() : "")});
  }
  if (j["ranks"].size() > 1) {
    Table t{{"rank", "pid", "steps", "stall fraction", "step p50 ms", "step p99 ms", "samples/s",
             "slowest"},
            {}};
    for (const auto& r : j["ranks"]) {
      t.rows.push_back({str(r["rank"]), str(r["pid"]), str(r["steps"]), pct(r["stall_fraction"]),
                        format_number(r["step_p50_ms"], 2), format_number(r["step_p99_ms"], 2),
                        format_number(r["samples_per_s"]), r["slowest"] == true ? "yes" : ""});
    }
    s.blocks.push_back(t);
  }
  out.push_back(std::move(s));
}

// A stand-in (--like) beside the job it mimics.
void run_stand_in(const json& run, std::vector<Section>& out, int level) {
  if (!run.contains("stand_in") || !run["stand_in"].is_object()) return;
  const json& c = run["stand_in"];
  Section s{level, "Stand-in vs the job", {}};
  s.blocks.push_back(
      Paragraph{"mmprof's loader configured like the job in " + str(c["job"]) +
                " (mmprof baseline --like). Ratios far from 1 mark what-if figures not to trust."});
  Table t{{"figure", "job", "stand-in", "stand-in / job"}, {}};
  for (const auto& r : c["rows"]) {
    t.rows.push_back({str(r["metric"]), format_figure(r["job"]), format_figure(r["stand_in"]),
                      format_number(r["ratio"], 2)});
  }
  s.blocks.push_back(t);
  out.push_back(std::move(s));
}

void run_hypotheses(const json& run, std::vector<Section>& out, int level) {
  Section s{level, "Hypotheses (to confirm or refute with mmprof ab)", {}};
  if (run["hypotheses"].empty()) {
    s.blocks.push_back(Paragraph{"None: no compatible change addresses this run's limit."});
  } else if (run.value("hypotheses_scope", json()).is_string()) {
    s.blocks.push_back(Paragraph{run["hypotheses_scope"].get<std::string>(), true});
  }
  for (const auto& h : run["hypotheses"]) {
    s.blocks.push_back(Paragraph{str(h["text"]) + ". Refuted if " + str(h["refuted_if"]) + "."});
    if (h["confirm_or_refute"].is_string())
      s.blocks.push_back(CodeLines{{h["confirm_or_refute"].get<std::string>()}});
    if (h["note"].is_string()) s.blocks.push_back(Paragraph{h["note"].get<std::string>()});
  }
  out.push_back(std::move(s));
}

void run_recommendations(const json& run, std::vector<Section>& out, int level) {
  Section s{
      level,
      fmt::format("Recommended changes (knowledge base v{}, {})",
                  str(run["knowledge_base"]["version"]), str(run["knowledge_base"]["updated"])),
      {}};
  Table t{{"change", "expected effect", "risks", "preconditions"}, {}};
  Links sources;
  for (const auto& r : run["recommended"]) {
    std::string checks;
    for (const auto& p : r["preconditions"])
      checks += (checks.empty() ? "" : "; ") + str(p["detail"]);
    t.rows.push_back({str(r["title"]), str(r["expected_effect"]), str(r["risks"]),
                      checks.empty() ? "none" : checks});
    for (const auto& src : r["sources"]) {
      const bool published = src.contains("published");
      sources.links.push_back(
          {str(src["title"]), str(src["url"]),
           fmt::format("{}: {} {}", str(r["id"]), published ? "published" : "version",
                       str(published ? src["published"] : src.value("version", json())))});
    }
  }
  if (t.rows.empty()) {
    s.blocks.push_back(Paragraph{"No compatible change addresses this run's limit."});
  } else {
    s.blocks.push_back(t);
    s.blocks.push_back(sources);
  }
  Table ex{{"excluded change", "reason"}, {}};
  for (const auto& e : run["excluded"])
    ex.rows.push_back({str(e["title"]), str(e["reason"])});
  if (!ex.rows.empty()) s.blocks.push_back(ex);
  out.push_back(std::move(s));
}

void run_samples(const json& run, std::vector<Section>& out, int level) {
  Section s{level, "Slowest samples, errors and cross-checks", {}};
  // A job's samples have one time, its __getitem__; mmprof's loader times three stages.
  const bool job = run.contains("job") && run["job"].is_object();
  Table slow{job ? std::vector<std::string>{"index", "worker", "__getitem__ ms"}
                 : std::vector<std::string>{"key", "modality", "worker", "read ms", "decode ms",
                                            "augment ms"},
             {}};
  for (const auto& x : run["slowest_samples"]) {
    if (job) {
      slow.rows.push_back({str(x["key"]), str(x["worker"]), format_number(x["getitem_ms"], 2)});
    } else {
      slow.rows.push_back({str(x["key"]), str(x["modality"]), str(x["worker"]),
                           format_number(x["read_ms"], 2), format_number(x["decode_ms"], 2),
                           format_number(x["augment_ms"], 2)});
    }
  }
  s.blocks.push_back(slow);
  if (!run["errors"].empty()) {
    Table errors{{"key", "stage", "message"}, {}};
    for (const auto& e : run["errors"]) {
      errors.rows.push_back({str(e.value("key", json())), str(e.value("stage", json())),
                             str(e.value("message", json()))});
    }
    s.blocks.push_back(errors);
  }
  Table checks{{"cross-check", "summary.json", "recomputed from CSV", "agrees"}, {}};
  for (const auto& c : run["cross_checks"]) {
    checks.rows.push_back({str(c["what"]), format_figure(c["summary"]),
                           format_figure(c["recomputed"]), c["ok"] == true ? "yes" : "NO"});
  }
  s.blocks.push_back(checks);
  out.push_back(std::move(s));
}

void run_sections(const json& run, const std::string& title, std::vector<Section>& out, int level) {
  Section s{level, title, {}};
  run_overview(run, s);
  out.push_back(std::move(s));
  run_facts(run, out, level + 1);
  run_loader(run, out, level + 1);
  run_job(run, out, level + 1);
  run_stand_in(run, out, level + 1);
  run_hypotheses(run, out, level + 1);
  run_recommendations(run, out, level + 1);
  run_samples(run, out, level + 1);
}

std::string ci_text(const json& ci) {
  if (!ci.is_array() || ci.size() != 2) return "";
  return fmt::format(" [{}, {}]", format_number(ci[0]), format_number(ci[1]));
}

// The indifference band in percent: calibration.tau_pct, else tau (log units) converted.
std::string tau_text(const json& x) {
  if (const auto pct = number_at(x, "/calibration/tau_pct")) return fmt::format("{:.1f} %", *pct);
  if (const auto tau = number_at(x, "/calibration/tau"))
    return fmt::format("{:.1f} %", 100 * (std::exp(*tau) - 1));
  return "n/a";
}

// "base 6 of 6, loader.num_workers=2 6 of 6": the trials whose steady-state check failed twice,
// from the decisions' steady_state counts; empty when every trial settled.
std::string nonsteady_text(const json& decisions) {
  std::string out;
  const auto add = [&](const std::string& who, const json& n, const json& of) {
    if (n.is_number() && n.get<int>() > 0)
      out += fmt::format("{}{} {} of {}", out.empty() ? "" : ", ", who, str(n), str(of));
  };
  if (!decisions.empty()) {
    add("base", value_at(decisions[0], "/steady_state/base_nonsteady"),
        value_at(decisions[0], "/steady_state/base_trials"));
  }
  for (const auto& d : decisions) {
    add(str(d["arm"]), value_at(d, "/steady_state/arm_nonsteady"),
        value_at(d, "/steady_state/arm_trials"));
  }
  return out;
}

// ab's result for `arm` (null when there is none).
json result_for(const json& x, const std::string& arm) {
  for (const auto& r : x["results"])
    if (r.value("arm", "") == arm) return r;
  return nullptr;
}

// "5 of 6": how many of the arm's trials reached steady state.
std::string steady_text(const json& result) {
  if (!result.is_object() || !result["steady_trials"].is_number()) return "n/a";
  return fmt::format("{} of {}", str(result["steady_trials"]), str(result["n"]));
}

// The A/A arm's own result (the base against itself: the noise the band was calibrated on) and
// how many base trials settled.
std::string calibration_text(const json& x) {
  std::string out;
  if (const json aa = result_for(x, "A/A"); aa.is_object()) {
    out = fmt::format(
        "A/A (the base against itself): effect {} %{}, verdict {} ({}); its trials reached "
        "steady state {}. ",
        format_number(aa["effect_pct"]), ci_text(aa["ci_pct"]), str(aa["verdict"]),
        str(aa["reason"]), steady_text(aa));
  }
  if (!x["decisions"].empty()) {
    const json& d = x["decisions"][0];
    const auto n = number_at(d, "/steady_state/base_trials");
    const auto bad = number_at(d, "/steady_state/base_nonsteady");
    if (n && bad) {
      out += fmt::format("Base trials that reached steady state: {:.0f} of {:.0f}.", *n - *bad, *n);
    }
  }
  return out;
}

// When a staged copy (an arm of data.path, made by mmprof stage) pays for itself.
void staging_blocks(const json& staging, Section& s) {
  if (!staging.is_array() || staging.empty()) return;
  Table t{{"staged copy", "copy took (s)", "epoch as is -> staged (s)",
           "saved per epoch (s) [95 % CI]", "pays off after epochs [95 % CI]"},
          {}};
  std::string notes;
  for (const auto& e : staging) {
    if (e.contains("reason")) {
      t.rows.push_back({str(e["copy"]), "n/a", "n/a", "n/a", str(e["reason"])});
    } else {
      const json& ci = e["pays_off_after_epochs"]["ci"];
      t.rows.push_back(
          {str(e["copy"]), format_number(e["stage_s"]),
           format_number(e["epoch_s"]["as_is"]) + " -> " + format_number(e["epoch_s"]["staged"]),
           format_number(e["saved_s_per_epoch"]["median"], 2) +
               ci_text(e["saved_s_per_epoch"]["ci"]),
           (e["pays_off_after_epochs"]["median"].is_number()
                ? format_number(e["pays_off_after_epochs"]["median"])
                : std::string("never")) +
               fmt::format(" [{}, {}]", format_number(ci[0]),
                           ci[1].is_number() ? format_number(ci[1]) : std::string("never"))});
    }
    if (notes.empty()) notes = str(e["caveat"]);
  }
  s.blocks.push_back(t);
  if (!notes.empty()) s.blocks.push_back(Paragraph{notes});
}

// Decode placement (report/placement.hpp): where decode ran in each arm, what it cost the CPU and
// what it took from the GPU.
void placement_blocks(const json& placement, std::vector<Section>& out) {
  if (!placement.is_object()) return;
  Section s{3, "Decode placement", {}};
  Table t{{"arm", "decode ran in", "samples/s", "loader CPU cores (workers + main)", "cores freed",
           "main-process decode per batch (ms)", "CPU fallbacks", "NVDEC / JPEG / SM util %",
           "compute +%", "verdict"},
          {}};
  for (const auto& a : placement["arms"]) {
    t.rows.push_back(
        {str(a["arm"]), str(a["where"]), format_number(a["samples_per_s"]),
         fmt::format("{} ({} + {})", format_number(a["loader_cores"], 2),
                     format_number(a["worker_cores"], 2), format_number(a["main_cores"], 2)),
         format_number(a.value("cores_freed", json()), 2), format_number(a["device_decode_ms_p50"]),
         format_number(a["cpu_fallbacks"], 0),
         fmt::format("{} / {} / {}", format_number(a["decoder_util_pct"], 0),
                     format_number(a["jpeg_util_pct"], 0), format_number(a["sm_util_pct"], 0)),
         format_number(a["compute_inflation_pct"]), str(a.value("verdict", json("")))});
  }
  s.blocks.push_back(t);
  s.blocks.push_back(Paragraph{
      "Medians over each arm's complete trials. Cores: CPU time of the loader's workers and main "
      "process per second of the measured phase; cores freed is the base's minus the arm's. The "
      "main process decodes the placed modalities inside next(), so its decode time is part of "
      "the wait a step sees. Utilisation is NVML's over its last sample period at the phase's "
      "end (n/a without NVML). Compute +% is the step's compute with the loader running against "
      "the compute phase alone: what the placement (and the loader) took from training; it needs "
      "a step on the GPU (step.kind=gemm). An emulated arm decodes on this host's CPU and "
      "measures the placement's plumbing, not a GPU."});
  out.push_back(std::move(s));
}

void experiment_sections(const json& x, std::vector<Section>& out) {
  Section s{2, "Experiment " + str(x["name"]), {}};
  s.blocks.push_back(Paragraph{fmt::format(
      "Status {}; metric {}; {} rounds, {} cache; indifference band tau = {}.", str(x["status"]),
      str(value_at(x, "/metric/key")), str(x["rounds"]), str(x["cache"]), tau_text(x))});
  // A cold experiment states whether its trials measured a cold cache (warm-up reads back).
  if (const json& cache = x.value("cache_at_window", json()); cache.is_object()) {
    s.blocks.push_back(Paragraph{"Cache at the measured window: " + str(cache["text"]) + ".",
                                 cache.value("cold_in_fact", false) != true});
  }
  if (const std::string calibration = calibration_text(x); !calibration.empty())
    s.blocks.push_back(Paragraph{calibration});
  Table t{{"arm", "ab verdict", "effect % [95 % CI]", "steady trials", "decision", "reason"}, {}};
  Table triggers{{"adopted change", "metric", "rollback when", "window", "why"}, {}};
  for (const auto& d : x["decisions"]) {
    t.rows.push_back(
        {str(d["arm"]), str(d["verdict"]), format_number(d["effect_pct"]) + ci_text(d["ci_pct"]),
         steady_text(result_for(x, str(d["arm"]))), str(d["decision"]), str(d["reason"])});
    for (const auto& tr : d["rollback_triggers"]) {
      triggers.rows.push_back(
          {str(d["arm"]), str(tr["metric"]),
           fmt::format("{} {}", str(tr["condition"]), format_number(tr["threshold"], 2)),
           str(tr["window"]), str(tr["why"])});
    }
  }
  s.blocks.push_back(t);
  if (const std::string nonsteady = nonsteady_text(x["decisions"]); !nonsteady.empty()) {
    s.blocks.push_back(Paragraph{fmt::format(
        "Trials that never reached steady state: {}. Their throughput measures warm-up as much as "
        "the configuration; when they are most of an arm's or the base's trials, the arm's "
        "verdict is withheld.",
        nonsteady)});
  }
  s.blocks.push_back(Chart{
      "arms", "Throughput per arm, median with 95 % CI (samples/s)", x["arm_throughput"],
      "Base: the median of its trials with the order-statistic CI of that median. Every other arm, "
      "A/A included: its median with the paired CI of its effect, placed on the base median. "
      "Shaded: the indifference band +-tau around the base; an arm whose CI lies inside it is "
      "equivalent. The verdict is on the right."});
  if (!triggers.rows.empty()) s.blocks.push_back(triggers);
  staging_blocks(x["staging"], s);
  out.push_back(std::move(s));
  placement_blocks(x.value("placement", json()), out);
  if (x["base_run"].is_object()) run_sections(x["base_run"], "Base arm, first trial", out, 3);
}

void compare_section(const json& c, std::vector<Section>& out) {
  Section s{2, "Compare " + str(c["base"]) + " -> " + str(c["new"]), {}};
  Table t{{"metric", "base", "new", "change %", "95 % CI of change", "limit %", "outcome"}, {}};
  std::string why;
  for (const auto& r : c["rows"]) {
    const json ci = r.value("change_ci_pct", json());
    t.rows.push_back({str(r["name"]), format_number(r["base"], 2), format_number(r["new"], 2),
                      format_number(r["change_pct"]),
                      ci.is_array() ? format_number(ci[0]) + " to " + format_number(ci[1]) : "",
                      format_number(r["limit_pct"], 0), str(r["outcome"])});
    if (r.contains("why")) why += fmt::format(" {}: {}.", str(r["name"]), str(r["why"]));
  }
  s.blocks.push_back(t);
  if (!why.empty()) s.blocks.push_back(Paragraph{"Inconclusive:" + why, false});
  s.blocks.push_back(Paragraph{str(c["outcome"]) + ": " + str(c["reason"]), true});
  out.push_back(std::move(s));
}

// A job of several ranks: the ranks side by side, the straggler and why, and each step's time
// before the sync by rank (the highest line at a step is the rank the others waited for).
void job_sections(const json& j, std::vector<Section>& out) {
  const json& s = j["stragglers"];
  Section sec{2,
              fmt::format("Job {}: {} ranks{}", str(j["name"]), str(j["world_size"]),
                          s.is_object() ? ", slowest rank " + str(s["slowest_rank"]) : ""),
              {}};
  sec.blocks.push_back(Paragraph{fmt::format(
      "dist.sync={} ({}), {} phase, status {}; all ranks together: {} samples/s.", str(j["sync"]),
      j["group"].is_string() ? str(j["group"]) : "no process group recorded", str(j["phase"]),
      str(j["status"]), format_number(j["global"]["samples_per_s"]))});
  Table t{{"rank", "samples/s", "stall", "step p50 ms", "step p99 ms", "sync ms", "sync share",
           "slowest in steps", "limiting stage", "status"},
          {}};
  for (const auto& r : j["ranks"]) {
    const size_t k = r["rank"].get<size_t>();
    const json by_rank = s.is_object() && k < s["by_rank"].size() ? s["by_rank"][k] : json();
    t.rows.push_back(
        {str(r["rank"]), format_number(r.value("samples_per_s", json())),
         pct(r.value("stall_fraction", json())), format_number(value_at(r, "/step_ms/p50")),
         format_number(value_at(r, "/step_ms/p99")),
         format_number(r.value("sync_ms_mean", json()), 2), pct(r.value("sync_fraction", json())),
         by_rank.is_object() ? str(by_rank["slowest_steps"]) : "n/a",
         r.value("limiting_stage", json()).is_string() ? str(r["limiting_stage"]) : "n/a",
         str(r["status"])});
  }
  sec.blocks.push_back(t);
  const json& epochs = j.value("epochs", json());
  if (epochs.is_object()) {
    // Unequal steps per epoch hang or cut short a DDP job: stated as a finding, not a detail.
    sec.blocks.push_back(Paragraph{
        (epochs["equal"] == true ? "Epochs: " : "Unequal epochs: ") + str(epochs["text"]) + ".",
        epochs["equal"] != true});
  }
  if (s.is_object()) {
    std::string samples;
    for (const auto& x : s["cause"].value("slowest_samples", json::array())) {
      samples +=
          (samples.empty() ? "" : ", ") + str(x["key"]) + " " + format_number(x["ms"]) + " ms";
    }
    // A job summary from before the straggler test has no `established`: its straggler stands.
    const bool established = s.value("established", true);
    sec.blocks.push_back(Paragraph{
        established
            ? fmt::format("Rank {} is the straggler: slowest in {} of {} steps; its mean time "
                          "before the sync is {}x the median rank's. {}. Its limiting stage: {}; "
                          "its slowest samples: {}.",
                          str(s["slowest_rank"]), pct(s["slowest_rank_share"]), str(s["steps"]),
                          format_number(s["spread"], 2), str(s["cause"]["text"]),
                          s["cause"].value("limiting_stage", json()).is_string()
                              ? str(s["cause"]["limiting_stage"])
                              : "n/a",
                          samples.empty() ? "none recorded" : samples)
            : str(s["cause"]["text"]) + ".",
        true});
    json series = json::array();
    for (const auto& r : s["by_rank"]) {
      json points = json::array();
      int64_t i = 0;
      for (const auto& v : r["local_ms"])
        points.push_back({i++, v});
      series.push_back({{"rank", r["rank"]}, {"points", points}});
    }
    sec.blocks.push_back(Chart{
        "ranks", "Time before the sync, per step and rank", series,
        "Each rank's step time less its sync wait: the highest line at a step is the rank the "
        "others waited for (job.json stragglers.slowest_per_step)."});
  }
  const json reshard = s.is_object() ? s["cause"].value("reshard", json()) : json();
  if (reshard.is_object()) {
    sec.blocks.push_back(Paragraph{"Rank " + str(s["slowest_rank"]) + ": " + str(reshard["text"]) +
                                   (reshard.contains("commands") ? ":" : ".")});
    if (reshard.contains("commands"))
      sec.blocks.push_back(CodeLines{reshard["commands"].get<std::vector<std::string>>()});
  }
  for (const auto& f : j["failed_ranks"]) {
    sec.blocks.push_back(
        Paragraph{fmt::format("Rank {} failed{}: {}{}", str(f["rank"]),
                              j["first_failed_rank"] == f["rank"] ? " first" : "", str(f["how"]),
                              f["message"].is_string() ? " (" + str(f["message"]) + ")" : ""),
                  true});
  }
  if (j["slowest_run"].is_string()) {
    sec.blocks.push_back(Paragraph{"The slowest rank's run is analysed below as Run " +
                                   str(j["slowest_run"]) + "."});
  }
  out.push_back(std::move(sec));
}

Section method_section() {
  Section s{2, "Method and sources", {}};
  s.blocks.push_back(Paragraph{
      "Input-bound thresholds (stall fraction < 5 % not, 5-20 % moderately, >= 20 % highly) are "
      "TensorFlow Profiler's; predicted end to end = min(pipeline, compute) is DS-Analyzer's "
      "differential method; A/B verdicts come from mmprof ab's randomized interleaved rounds."});
  s.blocks.push_back(Links{{
      {"Optimize TensorFlow performance using the Profiler (input pipeline analyzer)",
       "https://www.tensorflow.org/guide/profiler", "accessed 2026-11-30"},
      {"Mohan et al., Analyzing and Mitigating Data Stalls in DNN Training, PVLDB 14(5)",
       "https://www.vldb.org/pvldb/vol14/p771-mohan.pdf", "published 2021-01"},
      {"Abedi and Brecht, Conducting Repeatable Experiments in Highly Variable Cloud Computing "
       "Environments, ICPE 2017",
       "https://doi.org/10.1145/3030207.3030229", "published 2017-04"},
  }});
  return s;
}

}  // namespace

std::string format_number(const json& v, int decimals) {
  if (!v.is_number()) return "n/a";
  return fmt::format("{:.{}f}", v.get<double>(), decimals);
}

std::string format_figure(const json& v) {
  if (!v.is_number()) return "n/a";
  const double x = v.get<double>();
  if (std::fabs(x - std::round(x)) < 1e-9 * std::max(1.0, std::fabs(x))) return format_number(v, 0);
  return format_number(v, std::fabs(x) >= 100 ? 2 : 4);
}

std::vector<Section> layout_report(const json& report) {
  std::vector<Section> out;
  Section title{1, "mmprof report", {}};
  // The gate's verdict only when one was asked for (--gate); report.json keeps it either way.
  if (value_at(report, "/gate/requested") == true) {
    title.blocks.push_back(Paragraph{
        fmt::format("Gate: {} (exit {}; criteria: {})", str(value_at(report, "/gate/reason")),
                    str(value_at(report, "/gate/exit_code")),
                    str(value_at(report, "/criteria/file"))),
        true});
  }
  out.push_back(std::move(title));
  for (const auto& j : report.value("jobs", json::array()))
    job_sections(j, out);
  for (const auto& run : report["runs"]) {
    run_sections(
        run,
        fmt::format("Run {}: {}{}", str(run["name"]), str(run["classification"]["primary"]),
                    run["classification"]["input_bound"].is_string()
                        ? " (" + str(run["classification"]["input_bound"]) + " input-bound)"
                        : ""),
        out, 2);
  }
  for (const auto& x : report["experiments"])
    experiment_sections(x, out);
  if (report["compare"].is_object()) compare_section(report["compare"], out);
  out.push_back(method_section());
  return out;
}

}  // namespace mmprof::report
