#include "external/job_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "measure/job_summary.hpp"
#include "stats/descriptive.hpp"

namespace mmprof::external {

using nlohmann::json;

RankComparison compare_ranks(const std::vector<RankTimeline>& ranks) {
  RankComparison c;
  std::vector<const RankTimeline*> measured;
  for (const RankTimeline& r : ranks) {
    if (r.steps.empty()) continue;
    measured.push_back(&r);
    RankComparison::Rank x;
    x.pid = r.pid;
    x.rank = r.rank;
    x.steps = static_cast<int64_t>(r.steps.size());
    x.stall_fraction = r.stall_fraction;
    x.step_p50_ms = r.step_ms.p50;
    x.step_p99_ms = r.step_ms.p99;
    x.samples_per_s = r.samples_per_s;
    c.ranks.push_back(x);
  }
  if (measured.empty()) return c;
  size_t common = measured.front()->steps.size();
  for (const RankTimeline* r : measured)
    common = std::min(common, r->steps.size());
  c.common_steps = static_cast<int64_t>(common);
  std::vector<double> p50;
  for (size_t i = 0; i < measured.size(); ++i) {
    double step = 0, wait = 0;
    for (size_t k = 0; k < common; ++k) {
      step += measured[i]->steps[k].step_ms;
      wait += measured[i]->steps[k].wait_ms;
    }
    if (!c.slowest || step > *c.slowest_total_ms) {
      c.slowest = i;
      c.slowest_total_ms = step;
    }
    if (!c.most_waiting || wait > *c.most_waiting_wait_ms) {
      c.most_waiting = i;
      c.most_waiting_wait_ms = wait;
    }
    p50.push_back(measured[i]->step_ms.p50);
  }
  const double typical = median(p50);
  if (typical > 0) c.step_p50_spread = *std::max_element(p50.begin(), p50.end()) / typical;
  std::vector<RankSteps> steps;
  for (const RankTimeline* r : measured) {
    RankSteps s;
    s.rank = r->rank.value_or(-1);
    for (size_t k = 0; k < common; ++k) {
      s.step_ms.push_back(r->steps[k].step_ms);
      s.wait_ms.push_back(r->steps[k].wait_ms);
      s.compute_ms.push_back(r->steps[k].compute_ms);
    }
    steps.push_back(std::move(s));
  }
  c.straggler = straggler_analysis(steps);
  return c;
}

const RankTimeline* JobTimeline::primary() const noexcept {
  if (straggler_rank) {
    for (const RankTimeline& r : ranks)
      if (r.rank == straggler_rank && !r.steps.empty()) return &r;
  }
  for (const RankTimeline& r : ranks)
    if (r.rank == 0) return &r;
  for (const RankTimeline& r : ranks)
    if (!r.steps.empty()) return &r;
  return ranks.empty() ? nullptr : &ranks.front();
}

std::string JobTimeline::primary_why() const {
  const RankTimeline* p = primary();
  if (p == nullptr || !p->rank || ranks.size() < 2) return "";
  const json& s = comparison.straggler;
  const json test =
      s.is_object() && s.contains("test") && s["test"].is_object() ? s["test"] : json::object();
  const auto number = [](const json& v) { return v.is_number() ? v.get<double>() : NAN; };
  if (p->rank != 0 && s.is_object() && s.value("established", false)) {
    return fmt::format(
        "rank {}'s: the established straggler (its step {:.2f}x the median rank's, p = {:.3g}); "
        "under synchronous data parallelism every rank steps at its pace",
        *p->rank, number(s.value("spread", json())), number(test.value("p_adjusted", json())));
  }
  const json why_not = test.value("why_not", json());
  const json slowest = s.is_object() ? s.value("slowest_rank", json()) : json();
  return fmt::format("rank {}'s: no straggler established{}", *p->rank,
                     why_not.is_string() && slowest.is_number()
                         ? fmt::format(" (rank {} is the slowest on average, but {})",
                                       slowest.get<int>(), why_not.get<std::string>())
                         : std::string());
}

void JobTimeline::figures(JobFigures& job) const {
  job.loaders = loaders;
  job.ranks.clear();
  for (const RankTimeline& t : ranks)
    job.ranks.push_back(t.figures());
  const RankTimeline* p = primary();
  job.primary_pid = p != nullptr ? std::optional(p->pid) : std::nullopt;
  job.primary_rank = p != nullptr ? p->rank : std::nullopt;
  job.primary_why = primary_why();
  job.rank_comparison = comparison;
  job.warnings = warnings;
}

JobTimeline job_timeline(const HookRecords& records, const TimelineOptions& options) {
  JobTimeline job;
  bool any_loader = false, any_chosen = false;
  for (const MainProcess& p : main_processes(records)) {
    job.loaders.push_back(choose_loader(records, p, options.loader));
    any_loader = any_loader || !job.loaders.back().loaders.empty();
    any_chosen = any_chosen || job.loaders.back().chosen.has_value();
    job.ranks.push_back(rank_timeline(records, p, job.loaders.back(), options));
  }
  if (!options.loader.empty() && any_loader && !any_chosen) {
    job.warnings.push_back(
        fmt::format("--loader {} matched no loader of any process of the job", options.loader));
  }
  for (const RankTimeline& r : job.ranks) {
    if (r.dropped_unfinished > 0) {
      job.warnings.push_back(fmt::format(
          "pid {}: {} batch(es) with no later call, epoch_end or stop (the job was killed, or "
          "is still running) are not steps",
          r.pid, r.dropped_unfinished));
    }
  }
  job.comparison = compare_ranks(job.ranks);
  const json& s = job.comparison.straggler;
  if (s.is_object() && s.value("established", false) && s.value("slowest_rank", json()).is_number())
    job.straggler_rank = s["slowest_rank"].get<int>();
  return job;
}

// ---------------------------------------------------------------------------------------------

namespace {

// "partial (torch 2.99): X (why): not measured: Y; ...": what the hook could not wrap,
// once per name, in the order the processes met them.
std::string partial_status(const HookRecords& records, std::vector<HookGap>& partial) {
  std::set<std::string> seen;
  std::string parts;
  for (const PartialRecord& p : records.partials) {
    if (!seen.insert(p.what).second) continue;
    partial.push_back({p.pid, p.what, p.measures, p.why});
    parts += fmt::format("{}{} ({}): not measured: {}", parts.empty() ? "" : "; ", p.what, p.why,
                         p.measures);
  }
  const std::string torch = !records.versions.empty() && records.versions.front().torch
                                ? " (torch " + *records.versions.front().torch + ")"
                                : "";
  return fmt::format("partial{}: {}", torch, parts);
}

}  // namespace

HookStatus hook_status(const HookRecords& records) {
  HookStatus s;
  s.files = static_cast<int64_t>(records.pids.size());
  s.lines = records.lines;
  s.cut_lines = records.cut_lines;
  s.unknown_records = records.unknown;
  for (const ErrorRecord& e : records.errors)
    s.errors.push_back({e.pid, e.where, e.message, e.ns});
  std::stable_sort(s.errors.begin(), s.errors.end(),
                   [](const HookError& a, const HookError& b) { return a.ns < b.ns; });
  const bool timing = !records.loaders.empty() || !records.epochs.empty() ||
                      !records.batches.empty() || !records.epoch_ends.empty() ||
                      !records.fetches.empty() || !records.getitems.empty() ||
                      !records.pins.empty() || !records.stops.empty();
  if (timing && !records.partials.empty()) {
    s.status = partial_status(records, s.partial);
  } else if (timing) {
    s.status = "ok";
  } else if (!s.errors.empty()) {
    s.status = fmt::format("unavailable: {} (hook point {})", s.errors.front().message,
                           s.errors.front().where);
  } else {
    s.status =
        "unavailable: no hook records: the job's Python never imported torch or built no "
        "DataLoader, or the hook was not loaded (PYTHONPATH not reaching the job, or python "
        "-I/-E/-S)";
  }
  return s;
}

JobDataLoaders JobDescription::figures() const {
  JobDataLoaders d;
  d.hook = hook;
  d.versions = versions ? versions->to_json() : json(nullptr);
  d.versions_differ = versions_differ;
  for (const Loader& x : loaders) {
    json overrides = {{"applied", x.record.applied}, {"rejected", x.record.rejected}};
    if (!x.record.original.is_null()) overrides["original"] = x.record.original;
    d.loaders.push_back({.pid = x.pid,
                         .rank = x.rank,
                         .loader = x.record.loader,
                         .followed = x.followed,
                         .origin = x.record.origin,
                         .stack = x.record.stack,
                         .config = x.record.config.raw,
                         .overrides = std::move(overrides),
                         .max_batches_follow = x.record.follow});
  }
  return d;
}

JobDescription describe_job(const HookRecords& records, const std::vector<LoaderChoice>& choices) {
  JobDescription d;
  d.hook = hook_status(records);
  std::map<int, int> section_of;  // main pid -> its section
  for (const MainProcess& p : main_processes(records))
    section_of.try_emplace(p.pid, p.section);
  for (const LoaderChoice& c : choices) {
    const auto s = section_of.find(c.pid);
    if (s == section_of.end()) continue;
    for (const VersionsRecord& v : records.versions) {
      if (v.section != s->second) continue;
      if (!d.versions) {
        d.versions = v;
      } else if (v.to_json() != d.versions->to_json()) {
        d.versions_differ = true;
      }
    }
    for (const LoaderRecord& l : records.loaders) {
      if (l.section != s->second) continue;
      d.loaders.push_back({c.pid, c.rank, c.chosen == l.loader, l});
    }
  }
  return d;
}

}  // namespace mmprof::external
