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

// A rank's pid; none where its process was never identified (the field is null then).
std::optional<double> pid_of(const json& r) {
  return number_at(r, "/pid");
}

bool same_process(const json& a, const json& b) {
  return pid_of(a) && pid_of(a) == pid_of(b);
}

std::string rank_name(const json& r) {
  return r.is_object() && r.contains("rank") && r["rank"].is_number()
             ? fmt::format("rank {}", r["rank"].get<int>())
             : fmt::format("pid {}", pid_of(r) ? fmt::format("{:.0f}", *pid_of(r)) : "unknown");
}

// What the rank's loader spends, to name where its time goes: "__getitem__ p50 30.3 ms, a
// worker's batch (fetch) p50 121.7 ms, its loop's wait p50 120.1 ms".
std::string rank_stages(const json& ranks, const json& which) {
  for (const auto& r : ranks.is_array() ? ranks : json::array()) {
    if (!same_process(r, which)) continue;
    std::string out;
    const auto add = [&](const char* what, const char* pointer) {
      if (const auto v = number_at(r, pointer))
        out += fmt::format("{}{} p50 {:.1f} ms", out.empty() ? "" : ", ", what, *v);
    };
    add("__getitem__", "/latency_ms/stages/getitem/p50");
    add("a worker's batch (fetch)", "/latency_ms/stages/fetch/p50");
    add("its loop's wait", "/latency_ms/wait/p50");
    return out;
  }
  return "";
}

void rank_facts(const json& job, json& facts) {
  const json cmp = value_at(job, "/rank_comparison");
  const json ranks = value_at(cmp, "/ranks");
  if (!ranks.is_array() || ranks.size() < 2) return;
  const json slowest = value_at(cmp, "/slowest_rank");
  const auto total = number_at(cmp, "/slowest_step_ms_total");
  if (slowest.is_object() && total) {
    const std::string stages = rank_stages(value_at(job, "/ranks"), slowest);
    facts.push_back(
        fact("rank.slowest",
             fmt::format("{} is the slowest: {:.0f} ms of step time over the {} steps every rank "
                         "measured{}",
                         rank_name(slowest), *total, number_at(cmp, "/common_steps").value_or(0),
                         stages.empty() ? "" : " (" + stages + ")"),
             "job.rank_comparison.slowest_step_ms_total", *total, "ms"));
  }
  const json waiting = value_at(cmp, "/most_waiting_rank");
  if (const auto w = number_at(cmp, "/most_waiting_wait_ms_total"); waiting.is_object() && w) {
    facts.push_back(fact("rank.most_waiting",
                         fmt::format("{} waits longest for data: {:.0f} ms over the common steps",
                                     rank_name(waiting), *w),
                         "job.rank_comparison.most_waiting_wait_ms_total", *w, "ms"));
  }
  // Whose figures the run's headline is (issue 32, case 12): an established straggler's.
  if (const json why = value_at(job, "/primary_why"); why.is_string() && !why.empty()) {
    facts.push_back(fact("rank.figures", "the run's figures are " + why.get<std::string>(),
                         "job.primary_rank", value_at(job, "/primary_rank"), ""));
  }
  if (const auto spread = number_at(cmp, "/step_p50_spread")) {
    facts.push_back(
        fact("rank.spread",
             fmt::format("the slowest rank's median step is {:.2f}x the median rank's", *spread),
             "job.rank_comparison.step_p50_spread", *spread, "ratio"));
  }
}

// Each rank's DataLoader workers, judged as mmprof's loader's are.
void worker_facts(const json& ranks, json& facts) {
  if (!ranks.is_array()) return;
  const rundir::FigureReader reader(run_file::summary);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const json& r = ranks[i];
    const json workers = value_at(r, "/workers");
    if (!workers.is_object()) continue;
    worker_balance_fact(
        rundir::worker_balance_from_json(reader, workers, fmt::format("/job/ranks/{}/workers", i)),
        rank_name(r) + ": DataLoader workers", "job.ranks.workers.busy_spread_fraction", facts);
  }
}

void cow_facts(const json& cow, json& facts) {
  if (!cow.is_array()) return;
  for (const auto& c : cow) {
    if (c.value("growing", false) != true) continue;
    facts.push_back(fact("workers.cow",
                         fmt::format("{}: USS grows {:.1f} MiB/min through the run (copy-on-write, "
                                     "PyTorch issue #13246)",
                                     string_at(c, "/process", "a worker"),
                                     number_at(c, "/slope_mib_per_min").value_or(0)),
                         "job.cow.slope_mib_per_min", value_at(c, "/slope_mib_per_min"),
                         "MiB/min"));
  }
}

void hook_facts(const json& job, json& facts) {
  const std::string status = string_at(job, "/hook/status", "");
  if (status.starts_with("partial")) {
    facts.push_back(fact("hook", "the DataLoader hook measured only part of the job: " + status,
                         "job.hook.status", status, ""));
  } else if (!status.empty() && status != "ok") {
    facts.push_back(
        fact("hook", "the DataLoader hook saw nothing: " + status, "job.hook.status", status, ""));
  }
  const json loaders = value_at(job, "/dataloader/loaders");
  if (loaders.is_array()) {
    for (const auto& l : loaders) {
      const json rejected = value_at(l, "/overrides/rejected");
      if (!rejected.is_object()) continue;
      for (const auto& [key, why] : rejected.items()) {
        facts.push_back(
            fact("override.rejected",
                 fmt::format("--set loader.{} was not applied: {}", key, value_text(why)),
                 "job.dataloader.overrides.rejected", key, ""));
      }
    }
  }
  const json killed = value_at(job, "/killed_at_end");
  for (const auto& k : killed.is_array() ? killed : json::array()) {
    facts.push_back(fact("leftover",
                         "left running by the job and killed at the end: " + value_text(k),
                         "job.killed_at_end", value_text(k), ""));
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
  if (!summary.external()) return;
  const json& job = summary.job;
  rank_facts(job, facts);
  worker_facts(value_at(job, "/ranks"), facts);
  cow_facts(value_at(job, "/cow"), facts);
  hook_facts(job, facts);
}

json job_view(const Summary& summary) {
  if (!summary.external()) return nullptr;
  const json& job = summary.job;
  std::vector<std::string> command;
  const json words = value_at(job, "/command");
  for (const auto& w : words.is_array() ? words : json::array())
    command.push_back(value_text(w));
  json ranks = json::array();
  const json slowest = value_at(job, "/rank_comparison/slowest_rank");
  const json rows = value_at(job, "/rank_comparison/ranks");
  for (const auto& r : rows.is_array() ? rows : json::array()) {
    json row = r;
    row["slowest"] = slowest.is_object() && same_process(slowest, r);
    ranks.push_back(row);
  }
  return {{"command", fmt::format("{}", fmt::join(command, " "))},
          {"exit", value_at(job, "/exit")},
          {"stopped_by", value_at(job, "/stopped_by")},
          {"ended", value_at(job, "/ended")},
          {"short_why", value_at(job, "/steps/short_why")},
          {"hook", value_at(job, "/hook/status")},
          {"exception", value_at(job, "/exception")},
          {"ranks", ranks}};
}

}  // namespace mmprof::report
