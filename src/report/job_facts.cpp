#include "report/job_facts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <string>
#include <vector>

#include "mmprof/run_dir.hpp"
#include "report/json_access.hpp"
#include "report/loader_facts.hpp"
#include "rundir/summary_parts.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

std::string rank_name(std::optional<int> rank, int pid) {
  return rank ? fmt::format("rank {}", *rank) : fmt::format("pid {}", pid);
}

// What the rank's loader spends, to name where its time goes: "__getitem__ p50 30.3 ms, a
// worker's batch (fetch) p50 121.7 ms, its loop's wait p50 120.1 ms".
std::string rank_stages(const JobRank& r) {
  std::string out;
  const auto add = [&](const char* what, const std::optional<double>& p50) {
    if (p50) out += fmt::format("{}{} p50 {:.1f} ms", out.empty() ? "" : ", ", what, *p50);
  };
  add("__getitem__", r.stages.getitem.p50);
  add("a worker's batch (fetch)", r.stages.fetch.p50);
  add("its loop's wait", r.wait.p50);
  return out;
}

void rank_facts(const JobFigures& job, json& facts) {
  const RankComparison& cmp = job.rank_comparison;
  if (cmp.ranks.size() < 2) return;
  if (cmp.slowest && cmp.slowest_total_ms) {
    const RankComparison::Rank& slowest = cmp.ranks[*cmp.slowest];
    const JobRank* r = job.rank_of(slowest.pid);
    const std::string stages = r != nullptr ? rank_stages(*r) : "";
    facts.push_back(
        fact("rank.slowest",
             fmt::format("{} is the slowest: {:.0f} ms of step time over the {} steps every rank "
                         "measured{}",
                         rank_name(slowest.rank, slowest.pid), *cmp.slowest_total_ms,
                         cmp.common_steps, stages.empty() ? "" : " (" + stages + ")"),
             "job.rank_comparison.slowest_step_ms_total", *cmp.slowest_total_ms, "ms"));
  }
  if (cmp.most_waiting && cmp.most_waiting_wait_ms) {
    const RankComparison::Rank& waiting = cmp.ranks[*cmp.most_waiting];
    facts.push_back(
        fact("rank.most_waiting",
             fmt::format("{} waits longest for data: {:.0f} ms over the common steps",
                         rank_name(waiting.rank, waiting.pid), *cmp.most_waiting_wait_ms),
             "job.rank_comparison.most_waiting_wait_ms_total", *cmp.most_waiting_wait_ms, "ms"));
  }
  // Whose figures the run's headline is (issue 32, case 12): an established straggler's.
  if (!job.primary_why.empty()) {
    facts.push_back(fact("rank.figures", "the run's figures are " + job.primary_why,
                         "job.primary_rank", rundir::nullable(job.primary_rank), ""));
  }
  if (cmp.step_p50_spread) {
    facts.push_back(fact("rank.spread",
                         fmt::format("the slowest rank's median step is {:.2f}x the median rank's",
                                     *cmp.step_p50_spread),
                         "job.rank_comparison.step_p50_spread", *cmp.step_p50_spread, "ratio"));
  }
}

// Each rank's DataLoader workers, judged as mmprof's loader's are.
void worker_facts(const JobFigures& job, json& facts) {
  for (const JobRank& r : job.ranks) {
    worker_balance_fact(r.workers, rank_name(r.rank, r.pid) + ": DataLoader workers",
                        "job.ranks.workers.busy_spread_fraction", facts);
  }
}

void cow_facts(const JobFigures& job, json& facts) {
  for (const CowGrowth& c : job.cow) {
    if (!c.growing) continue;
    facts.push_back(fact(
        "workers.cow",
        fmt::format("{}: USS grows {:.1f} MiB/min through the run (copy-on-write, "
                    "PyTorch issue #13246)",
                    c.process.empty() ? "a worker" : c.process, c.slope_mib_per_min.value_or(0)),
        "job.cow.slope_mib_per_min", or_null(c.slope_mib_per_min), "MiB/min"));
  }
}

void hook_facts(const JobFigures& job, json& facts) {
  const std::string& status = job.hook.status;
  if (status.starts_with("partial")) {
    facts.push_back(fact("hook", "the DataLoader hook measured only part of the job: " + status,
                         "job.hook.status", status, ""));
  } else if (!status.empty() && status != "ok") {
    facts.push_back(
        fact("hook", "the DataLoader hook saw nothing: " + status, "job.hook.status", status, ""));
  }
  for (const JobLoader& l : job.dataloader.loaders) {
    const json rejected = value_at(l.overrides, "/rejected");
    if (!rejected.is_object()) continue;
    for (const auto& [key, why] : rejected.items()) {
      facts.push_back(fact("override.rejected",
                           fmt::format("--set loader.{} was not applied: {}", key, value_text(why)),
                           "job.dataloader.overrides.rejected", key, ""));
    }
  }
  for (const std::string& k : job.killed_at_end) {
    facts.push_back(fact("leftover", "left running by the job and killed at the end: " + k,
                         "job.killed_at_end", k, ""));
  }
}

// Mean peak PSS of the DataLoader workers (MiB).
std::optional<double> worker_pss(const Summary& s) {
  double sum = 0;
  int n = 0;
  for (const ProcessMemory& w : s.memory.workers) {
    if (w.pss_peak_mib) {
      sum += *w.pss_peak_mib;
      ++n;
    }
  }
  return n > 0 ? std::optional(sum / n) : std::nullopt;
}

// What one sample costs to load: the job's __getitem__, or mmprof's read + decode + augment.
std::optional<double> per_sample_ms(const Summary& s) {
  if (const auto g = s.latency.stage("getitem").mean) return g;
  double sum = 0;
  bool any = false;
  for (const char* stage : {"read", "decode", "augment"}) {
    if (const auto v = s.latency.stage(stage).mean) {
      sum += *v;
      any = true;
    }
  }
  return any ? std::optional(sum) : std::nullopt;
}

}  // namespace

json stand_in_comparison(const Summary& summary, const json& manifest) {
  const std::string job_dir = string_at(manifest, "/like/run", "");
  if (job_dir.empty() || !RunDir::is_run(job_dir)) return nullptr;
  Summary job;
  try {
    job = RunDir::open(job_dir).summary();
  } catch (const std::exception&) {
    return nullptr;  // the job's run is gone or damaged: nothing to compare with
  }
  json rows = json::array();
  const auto row = [&](const char* name, std::optional<double> j, std::optional<double> s) {
    rows.push_back({{"metric", name},
                    {"job", or_null(j)},
                    {"stand_in", or_null(s)},
                    {"ratio", j && s && *j > 0 ? json(*s / *j) : json(nullptr)}});
  };
  row("stall_fraction", job.stall_fraction, summary.stall_fraction);
  row("wait p50 ms", job.latency.wait.p50, summary.latency.wait.p50);
  row("step p50 ms", job.latency.step.p50, summary.latency.step.p50);
  row("per-sample load ms (job: __getitem__; stand-in: read + decode + augment)",
      per_sample_ms(job), per_sample_ms(summary));
  row("worker PSS peak MiB (mean)", worker_pss(job), worker_pss(summary));
  row("samples/s end to end", job.throughput.end_to_end.samples_per_s,
      summary.throughput.end_to_end.samples_per_s);
  return {{"job", job_dir}, {"rows", rows}};
}

void add_job_facts(const Summary& summary, json& facts) {
  if (!summary.external() || !summary.job) return;
  const JobFigures& job = *summary.job;
  rank_facts(job, facts);
  worker_facts(job, facts);
  cow_facts(job, facts);
  hook_facts(job, facts);
}

json job_view(const Summary& summary) {
  if (!summary.external() || !summary.job) return nullptr;
  const JobFigures& job = *summary.job;
  const RankComparison& cmp = job.rank_comparison;
  json ranks = rundir::to_json(cmp)["ranks"];
  for (size_t i = 0; i < ranks.size(); ++i)
    ranks[i]["slowest"] = cmp.slowest == i;
  return {{"command", fmt::format("{}", fmt::join(job.command, " "))},
          {"exit", job.exit},
          {"stopped_by", job.stopped_by},
          {"ended", job.ended},
          {"short_why", rundir::text_or_null(job.short_why)},
          {"hook", job.hook.status},
          {"exception", job.exception},
          {"ranks", ranks}};
}

}  // namespace mmprof::report
