#include "report/loader_facts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>

#include "report/json_access.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

void balance_facts(const Summary& summary, json& facts) {
  if (!summary.workers_balance) return;
  const WorkerBalance& w = *summary.workers_balance;
  if (w.imbalanced) {
    worker_balance_fact(w, "mmprof's loader workers", "workers_balance.busy_spread_fraction",
                        facts);
    return;
  }
  if (!w.busy_spread) return;
  double lo = 1e300, hi = -1e300;
  size_t n = 0;
  for (const WorkerStats& x : w.workers) {
    if (!x.busy_fraction || x.worker < 0) continue;
    lo = std::min(lo, *x.busy_fraction);
    hi = std::max(hi, *x.busy_fraction);
    ++n;
  }
  facts.push_back(fact("workers.balance",
                       fmt::format("the {} loader workers are evenly loaded: busy {:.2f} to {:.2f} "
                                   "of the window (spread {:.2f}, limit {:g})",
                                   n, lo, hi, *w.busy_spread, w.busy_spread_limit),
                       "workers_balance.busy_spread_fraction", *w.busy_spread, "fraction"));
}

void slowest_class_facts(const Summary& summary, json& facts) {
  if (!summary.stage_breakdown || summary.stage_breakdown->by_class.size() < 2) return;
  const StageBreakdownFigures& b = *summary.stage_breakdown;
  facts.push_back(
      fact("stage.slowest_class",
           fmt::format("{} decode slowest: {:.1f} ms per sample over {} samples{}", b.slowest.label,
                       b.slowest.decode_ms_mean, b.slowest.samples,
                       b.times_rest ? fmt::format(", {:.1f}x the other samples' {:.1f} ms",
                                                  *b.times_rest, b.rest_decode_ms_mean.value_or(0))
                                    : ""),
           "stage_breakdown.slowest.by_mean_decode.decode_ms_mean", b.slowest.decode_ms_mean,
           "ms/sample"));
  const SampleClassFigures& share = b.largest_share;
  if (share.decode_share) {
    facts.push_back(fact(
        "stage.decode_share",
        fmt::format("{} take the largest share of decode time: {:.0f} % ({:.0f} "
                    "ms over {} samples)",
                    share.label, 100 * *share.decode_share, share.decode_ms_total, share.samples),
        "stage_breakdown.slowest.by_decode_share.decode_share", *share.decode_share, "fraction"));
  }
}

struct Tally {
  double rows = 0, bytes = 0, decode_ms = 0, stage_ms = 0;
};

}  // namespace

void worker_balance_fact(const WorkerBalance& balance, const std::string& subject,
                         const std::string& metric, json& facts) {
  if (!balance.imbalanced) return;
  const std::string flags = fmt::format("{}", fmt::join(balance.flags, "; "));
  const std::string& cause = balance.likely_cause;
  facts.push_back(fact(
      "workers.imbalance",
      fmt::format("{} are imbalanced ({}){}", subject, flags, cause.empty() ? "" : ": " + cause),
      metric, or_null(balance.busy_spread), "fraction"));
}

void add_loader_facts(const Summary& summary, json& facts) {
  balance_facts(summary, facts);
  slowest_class_facts(summary, facts);
}

std::vector<CsvCheck> loader_cross_checks(const Summary& summary,
                                          const std::vector<StageRow>& stages,
                                          const std::vector<StepRow>& steps,
                                          const std::string& phase) {
  int64_t from = INT64_MAX, to = INT64_MIN;
  for (const StepRow& s : steps) {
    if (s.phase != phase) continue;
    from = std::min(from, s.t_start_ns);
    to = std::max(to, s.t_start_ns + static_cast<int64_t>(std::llround(s.step_ms * 1e6)));
  }
  std::map<std::string, Tally> formats;
  std::map<int, Tally> workers;
  for (const StageRow& r : stages) {
    if (r.phase != phase) continue;
    Tally& f = formats[r.format.empty() ? "unknown" : r.format];
    f.rows++;
    f.decode_ms += r.decode_ms.value_or(0);
    Tally& w = workers[r.worker];
    w.rows++;
    w.bytes += static_cast<double>(r.bytes);
    const double item =
        r.read_ms.value_or(0) +
        (r.decoded_in == "main" ? 0 : r.decode_ms.value_or(0) + r.augment_ms.value_or(0));
    const int64_t end = r.t_start_ns + static_cast<int64_t>(std::llround(item * 1e6));
    const int64_t inside =
        from > to ? end - r.t_start_ns
                  : std::max<int64_t>(0, std::min(end, to) - std::max(r.t_start_ns, from));
    if (end > r.t_start_ns)
      w.stage_ms += item * static_cast<double>(inside) / static_cast<double>(end - r.t_start_ns);
  }
  std::vector<CsvCheck> out;
  if (summary.stage_breakdown) {
    for (const SampleClassFigures& e : summary.stage_breakdown->by_format) {
      const auto f = formats.find(e.label);
      const bool seen = f != formats.end();
      out.push_back({fmt::format("stage_breakdown.by_format[{}].samples vs stages.csv", e.label),
                     static_cast<double>(e.samples), seen ? f->second.rows : 0.0});
      if (seen) {
        out.push_back(
            {fmt::format("stage_breakdown.by_format[{}].decode_ms_mean vs stages.csv", e.label),
             e.decode_ms_mean, f->second.decode_ms / f->second.rows});
      }
    }
  }
  if (summary.workers_balance) {
    for (const WorkerStats& e : summary.workers_balance->workers) {
      const auto w = workers.find(e.worker);
      const Tally t = w == workers.end() ? Tally{} : w->second;
      const std::string at = fmt::format("workers_balance.workers[{}]", e.worker);
      out.push_back({at + ".samples vs stages.csv", static_cast<double>(e.samples), t.rows});
      out.push_back({at + ".bytes vs stages.csv",
                     e.bytes ? std::optional(static_cast<double>(*e.bytes)) : std::nullopt,
                     t.bytes});
      out.push_back({at + ".stage_ms vs stages.csv", e.stage_ms, t.stage_ms});
    }
  }
  return out;
}

}  // namespace mmprof::report
