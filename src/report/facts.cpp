// analyze_run: the analysis of one run plus its observed facts, each with the metric and value
// that shows it, and the cross-checks of summary figures against the CSV files.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "report/analysis.hpp"
#include "report/job_facts.hpp"
#include "report/json_access.hpp"
#include "report/loader_facts.hpp"
#include "report/series.hpp"
#include "rundir/summary_parts.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

// Where the summary's stage times come from (older runs say nothing: their pipeline phase).
std::string stages_phase(const Summary& s) {
  return s.latency.stages_phase.empty() ? "pipeline" : s.latency.stages_phase;
}

void throughput_facts(const Summary& s, const json& prediction, json& facts) {
  for (const char* phase : {"compute", "pipeline", "end_to_end"}) {
    const auto v = phase_rate(s, phase, &PhaseRates::samples_per_s);
    if (!v) continue;
    facts.push_back(fact(fmt::format("throughput.{}", phase),
                         fmt::format("{} phase delivers {:.1f} samples/s", phase, *v),
                         fmt::format("throughput.{}.samples_per_s", phase), *v, "samples/s"));
  }
  if (prediction["ratio"].is_number()) {
    const double r = prediction["ratio"];
    // Above min(pipeline, compute) is an order steady state cannot give (ordering_caveats).
    const char* note = prediction["interference"] == true ? ": the pipeline and the step interfere"
                       : r > 1 ? ": above it, which steady state cannot give (see the caveats)"
                               : "";
    facts.push_back(fact(
        "prediction",
        fmt::format("measured end to end is {:.0f} % of min(pipeline, compute){}", 100 * r, note),
        "throughput.end_to_end / throughput.predicted_end_to_end", r, "ratio"));
  }
  for (const auto& c : ordering_caveats(s)) {
    facts.push_back(fact("caveat." + c["id"].get<std::string>(), c["text"].get<std::string>(),
                         c["metric"].get<std::string>(), c["ratio"], "ratio"));
  }
}

void stage_facts(const json& stages, json& facts) {
  if (const json note = value_at(stages, "/note"); note.is_string()) {
    facts.push_back(fact("stage.model", note.get<std::string>(), "stages.model_overshoot_ms",
                         stages["model_overshoot_ms"], "ms/batch"));
  }
  if (!stages["limit"].is_string()) return;
  const std::string limit = stages["limit"];
  facts.push_back(fact("stage.limit",
                       fmt::format("{} costs {:.1f} ms per batch, {:.0f} % of the pipeline's "
                                   "per-batch time",
                                   limit, stages["per_batch_ms"][limit].get<double>(),
                                   100 * stages["shares"][limit].get<double>()),
                       fmt::format("per_batch_ms.{}", limit), stages["per_batch_ms"][limit],
                       "ms/batch"));
}

// r may come from an older or foreign run: every figure is optional (number_at), never read
// with operator[] on a key that may be missing.
void resource_facts(const json& r, json& facts) {
  const auto num = [&](const char* pointer) { return number_at(r, pointer); };
  const auto flag = [&](const char* pointer) { return value_at(r, pointer) == true; };
  if (const auto used = num("/cpu/utilization_cores"); used && num("/cpu/available_cores")) {
    facts.push_back(
        fact("cpu", cpu_text(value_at(r, "/cpu")), "cpu.utilization_cores", *used, "cores"));
  }
  // The workers' wait for a CPU and the main process's (which loads itself with no worker).
  const std::string contended =
      flag("/cpu/contended")
          ? fmt::format(": the run is CPU-contended (>= {:.0f} %)", 100 * kCpuContended)
          : fmt::format(": not CPU-contended (< {:.0f} %)", 100 * kCpuContended);
  for (const auto& [id, pointer, words, source] :
       {std::tuple{"cpu.contention", "/cpu/workers_run_queue_delay_fraction",
                   "the workers waited on a run queue {:.1f} % of their time{}",
                   "workers_mean_fraction"},
        std::tuple{"cpu.contention.main", "/cpu/main_run_queue_delay_fraction",
                   "the main process waited on a run queue {:.1f} % of its time{}",
                   "main_fraction"}}) {
    if (const auto delay = num(pointer)) {
      facts.push_back(fact(id, fmt::format(fmt::runtime(words), 100 * *delay, contended),
                           std::string("cpu.run_queue_delay.") + source, *delay,
                           "fraction of wall time"));
    }
  }
  if (const auto read = num("/storage/read_mb_per_s")) {
    std::string text = fmt::format("storage delivered {:.1f} MB/s", *read);
    if (const auto probe = num("/storage/probe_sequential_mb_per_s")) {
      text += fmt::format(" against a probed {:.0f} MB/s sequential", *probe);
      if (const auto random = num("/storage/probe_random_qd_mb_per_s")) {
        text += fmt::format(" and {:.0f} MB/s in random 4 KiB reads at queue depth {}", *random,
                            value_at(r, "/storage/probe_queue_depth").dump());
      }
    }
    if (const auto cached = num("/storage/page_cache_share")) {
      text += fmt::format("; {:.0f} % of the bytes read came from the page cache", 100 * *cached);
      if (const json& cache = value_at(r, "/storage/cache"); cache.is_string()) {
        text += fmt::format(" (data.cache={})", cache.get<std::string>());
      }
    }
    facts.push_back(fact("storage", text, "io.read_mb_per_s", *read, "MB/s"));
  }
  if (const auto rate = num("/network/read_mb_per_s")) {
    facts.push_back(fact(
        "network",
        fmt::format("the dataset came over HTTP from {} at {:.1f} MB/s (over its samples' reads); "
                    "{} requests retried; nothing of it is kept locally between epochs",
                    value_text(value_at(r, "/network/url")), *rate,
                    value_text(value_at(r, "/network/read_retries"))),
        "locality.phases.network_mb_per_s", *rate, "MB/s"));
  }
  if (const auto peak = num("/memory/host_peak_mib"), total = num("/memory/host_total_mib");
      peak && total) {
    facts.push_back(fact("memory",
                         fmt::format("host memory peaked at {:.0f} of {:.0f} MiB{}", *peak, *total,
                                     flag("/memory/pressure") ? " (pressure)" : ""),
                         "memory.host_peak_mib", *peak, "MiB"));
  }
  if (const auto idle = num("/gpu/idle_fraction")) {
    const auto wait_idle = num("/gpu/data_wait_idle_fraction");
    facts.push_back(fact(
        "gpu",
        fmt::format(
            "the GPU was idle {:.1f} % of the end-to-end window, {} while the step waited for data",
            100 * *idle, wait_idle ? fmt::format("{:.1f} %", 100 * *wait_idle) : "n/a"),
        "gpu.idle_fraction", *idle, "fraction of the GPU window"));
  }
  if (const auto minflt = num("/memory/minflt_per_sample")) {
    facts.push_back(fact("faults",
                         fmt::format("{:.1f} minor and {} major page faults per sample", *minflt,
                                     num("/memory/majflt").value_or(0) != 0 ? "some" : "no"),
                         "io.minflt_per_sample", *minflt, "faults/sample"));
  }
}

bool is_ignored(const json& line) {
  return line.value("kind", "") == "ignored";
}

void error_facts(const RunData& run, json& facts) {
  const double ignored =
      run.summary.reliability ? static_cast<double>(run.summary.reliability->ignored_files) : 0;
  if (ignored > 0) {
    const auto first = std::find_if(run.errors.begin(), run.errors.end(), is_ignored);
    facts.push_back(fact(
        "ignored",
        fmt::format("{:.0f} files under the dataset are neither samples nor captions{}", ignored,
                    first == run.errors.end()
                        ? ""
                        : fmt::format(" (first: {}: {})", first->value("file", "?"),
                                      first->value("message", "?"))),
        "reliability.ignored_files", ignored, "files"));
  }
  // errors.count is events (a sample can fail in every epoch); errors.samples is distinct keys.
  const auto events = static_cast<double>(run.summary.errors.count);
  if (events <= 0) return;
  std::string first;
  const auto e = std::find_if_not(run.errors.begin(), run.errors.end(), is_ignored);
  if (e != run.errors.end()) {
    first = fmt::format(" (first: {} at {}: {})", e->value("key", "?"), e->value("stage", "?"),
                        e->value("message", "?"));
  }
  if (!run.summary.errors.samples) {  // a run from before errors.samples: only the events are known
    facts.push_back(fact("errors", fmt::format("{:.0f} bad-sample events{}", events, first),
                         "errors.count", events, "events"));
    return;
  }
  const auto samples = static_cast<double>(*run.summary.errors.samples);
  facts.push_back(fact(
      "errors",
      fmt::format("{:.0f} bad sample{} skipped ({:.0f} error event{} in "
                  "errors.jsonl){}",
                  samples, samples == 1 ? " was" : "s were", events, events == 1 ? "" : "s", first),
      "errors.samples", samples, "samples"));
}

// A job's summary gives the figures of one rank (job.primary_pid's): its rows of stages.csv and
// steps.csv, which hold every rank's. All rows when the rank is not recorded (one process).
template <class Row>
std::vector<Row> primary_rank_rows(const RunData& run, const std::vector<Row>& all) {
  const std::optional<JobFigures>& job = run.summary.job;
  const JobRank* primary = job && job->primary_pid ? job->rank_of(*job->primary_pid) : nullptr;
  if (primary == nullptr || !primary->rank) return all;
  std::vector<Row> rows;
  for (const Row& r : all)
    if (!r.rank || *r.rank == *primary->rank) rows.push_back(r);
  return rows;
}

// Summary figures recomputed from the CSV files: two independent paths to the same number.
json cross_checks(const RunData& run) {
  json checks = json::array();
  auto add = [&](const std::string& what, std::optional<double> summary,
                 std::optional<double> recomputed) {
    if (!summary || !recomputed) return;
    const double tol = 1e-3 * std::max(1.0, std::fabs(*summary));
    checks.push_back({{"what", what},
                      {"summary", *summary},
                      {"recomputed", *recomputed},
                      {"ok", std::fabs(*summary - *recomputed) <= tol}});
  };
  add("stall_fraction vs steps.csv", run.summary.stall_fraction,
      stall_from_steps(primary_rank_rows(run, run.steps), "end_to_end"));
  // The per-sample stages of the run's stage phase: mmprof's read/decode/augment, or a job's
  // __getitem__ and, where the hook timed them inside it, its loader and transforms.
  const std::string phase = stages_phase(run.summary);
  const std::vector<std::pair<const char*, StageFigure>> stages =
      run.summary.external()
          ? std::vector<std::pair<const char*, StageFigure>>{{"getitem", StageFigure::getitem},
                                                             {"decode", StageFigure::decode},
                                                             {"augment", StageFigure::augment}}
          : std::vector<std::pair<const char*, StageFigure>>{{"read", StageFigure::read},
                                                             {"decode", StageFigure::decode},
                                                             {"augment", StageFigure::augment}};
  const std::vector<StageRow> rows =
      run.summary.external() ? primary_rank_rows(run, run.stages) : run.stages;
  for (const auto& [stage, figure] : stages) {
    add(fmt::format("latency_ms.stages.{}.mean vs stages.csv", stage),
        run.summary.latency.stage(stage).mean, stage_mean(rows, phase, figure));
  }
  for (const CsvCheck& c : loader_cross_checks(run.summary, run.stages, run.steps, phase))
    add(c.what, c.summary, c.recomputed);
  return checks;
}

json charts(const RunData& run) {
  json c;
  json cdfs = json::array();
  const std::vector<StepRow> steps = primary_rank_rows(run, run.steps);  // the summary's rank
  for (const char* p : {"pipeline", "end_to_end"}) {
    for (const StepFigure figure : {StepFigure::wait, StepFigure::step}) {
      json points = latency_cdf(steps, p, figure);
      if (!points.empty()) {
        cdfs.push_back({{"phase", p}, {"column", column_name(figure)}, {"points", points}});
      }
    }
  }
  c["latency_cdf"] = cdfs;
  // The phase the summary's latency is of: end to end where it ran.
  c["step_breakdown"] = step_breakdown(steps, "end_to_end");
  if (c["step_breakdown"].is_null()) c["step_breakdown"] = step_breakdown(steps, "pipeline");
  c["memory"] = run.resources ? memory_series(*run.resources) : json::array();
  return c;
}

}  // namespace

json analyze_run(const RunData& run) {
  const Summary& s = run.summary;
  json a;
  a["dir"] = std::filesystem::absolute(run.dir).lexically_normal().string();
  a["name"] = run.dir.string();  // as given on the command line, for the Markdown and HTML
  a["status"] = s.status.empty() ? "unknown" : s.status;
  // A job's run that completed but measured too little to stand on (job.steps.short_why).
  a["short_why"] = s.job ? rundir::text_or_null(s.job->short_why) : json(nullptr);
  a["config"] = value_at(run.manifest, "/config");
  a["classification"] = classify(s);
  a["prediction"] = prediction(s);
  a["caveats"] = ordering_caveats(s);
  a["stages"] = attribute_stages(s, run.manifest);
  a["resources"] = attribute_resources(s, run.manifest, a["stages"]);
  a["epoch_boundary"] = s.epoch_boundary ? rundir::to_json(*s.epoch_boundary) : json(nullptr);
  json facts = json::array();
  const json& c = a["classification"];
  if (c["stall_fraction"].is_number()) {
    facts.push_back(fact("stall", c["why"].get<std::string>(), "stall_fraction",
                         c["stall_fraction"], "fraction of step time"));
  }
  throughput_facts(s, a["prediction"], facts);
  stage_facts(a["stages"], facts);
  resource_facts(a["resources"], facts);
  error_facts(run, facts);
  add_loader_facts(s, facts);
  add_job_facts(s, facts);
  a["facts"] = facts;
  a["cross_checks"] = cross_checks(run);
  a["slowest_samples"] = slowest_samples(run.stages, stages_phase(s), 5);
  json errors = json::array();
  for (size_t i = 0; i < run.errors.size() && i < 10; ++i)
    errors.push_back(run.errors[i]);
  a["errors"] = errors;
  a["charts"] = charts(run);
  // Only runs of a user's job, and stand-ins of one, have these: other reports keep their keys.
  if (json job = job_view(s); !job.is_null()) a["job"] = std::move(job);
  // Only runs of mmprof's loader since they were added have these.
  if (s.stage_breakdown) a["stage_breakdown"] = rundir::to_json(*s.stage_breakdown);
  if (s.workers_balance) a["workers_balance"] = rundir::to_json(*s.workers_balance);
  if (json cmp = stand_in_comparison(s, run.manifest); !cmp.is_null())
    a["stand_in"] = std::move(cmp);
  return a;
}

}  // namespace mmprof::report
