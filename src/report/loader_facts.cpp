#include "report/loader_facts.hpp"

#include <fmt/format.h>

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
  const json& w = summary.workers_balance;
  if (value_at(w, "/imbalanced") == true) {
    worker_balance_fact(w, "mmprof's loader workers", "workers_balance.busy_spread_fraction",
                        facts);
    return;
  }
  const auto spread = number_at(w, "/busy_spread_fraction");
  if (!spread) return;
  double lo = 1e300, hi = -1e300;
  size_t n = 0;
  for (const auto& x : value_at(w, "/workers")) {
    const auto busy = number_at(x, "/busy_fraction");
    if (!busy || number_at(x, "/worker").value_or(-1) < 0) continue;
    lo = std::min(lo, *busy);
    hi = std::max(hi, *busy);
    ++n;
  }
  facts.push_back(
      fact("workers.balance",
           fmt::format("the {} loader workers are evenly loaded: busy {:.2f} to {:.2f} "
                       "of the window (spread {:.2f}, limit {})",
                       n, lo, hi, *spread, value_text(value_at(w, "/busy_spread_limit_fraction"))),
           "workers_balance.busy_spread_fraction", *spread, "fraction"));
}

void slowest_class_facts(const Summary& summary, json& facts) {
  const json& b = summary.stage_breakdown;
  if (!value_at(b, "/by_class").is_array() || b["by_class"].size() < 2) return;
  const json slow = value_at(b, "/slowest/by_mean_decode");
  if (const auto m = number_at(slow, "/decode_ms_mean")) {
    const auto times = number_at(slow, "/times_rest");
    facts.push_back(
        fact("stage.slowest_class",
             fmt::format("{} decode slowest: {:.1f} ms per sample over {} samples{}",
                         string_at(slow, "/class", "?"), *m, value_text(value_at(slow, "/samples")),
                         times ? fmt::format(", {:.1f}x the other samples' {:.1f} ms", *times,
                                             number_at(slow, "/rest_decode_ms_mean").value_or(0))
                               : ""),
             "stage_breakdown.slowest.by_mean_decode.decode_ms_mean", *m, "ms/sample"));
  }
  const json share = value_at(b, "/slowest/by_decode_share");
  if (const auto s = number_at(share, "/decode_share")) {
    facts.push_back(fact("stage.decode_share",
                         fmt::format("{} take the largest share of decode time: {:.0f} % ({:.0f} "
                                     "ms over {} samples)",
                                     string_at(share, "/class", "?"), 100 * *s,
                                     number_at(share, "/decode_ms_total").value_or(0),
                                     value_text(value_at(share, "/samples"))),
                         "stage_breakdown.slowest.by_decode_share.decode_share", *s, "fraction"));
  }
}

struct Tally {
  double rows = 0, bytes = 0, decode_ms = 0, stage_ms = 0;
};

}  // namespace

void worker_balance_fact(const json& balance, const std::string& subject, const std::string& metric,
                         json& facts) {
  if (value_at(balance, "/imbalanced") != true) return;
  std::string flags;
  const json flag_list = value_at(balance, "/flags");
  for (const auto& f : flag_list.is_array() ? flag_list : json::array())
    flags += (flags.empty() ? "" : "; ") + value_text(f);
  const std::string cause = string_at(balance, "/likely_cause", "");
  facts.push_back(fact(
      "workers.imbalance",
      fmt::format("{} are imbalanced ({}){}", subject, flags, cause.empty() ? "" : ": " + cause),
      metric, value_at(balance, "/busy_spread_fraction"), "fraction"));
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
  for (const auto& e : value_at(summary.stage_breakdown, "/by_format")) {
    const std::string name = string_at(e, "/class", "?");
    const auto f = formats.find(name);
    const bool seen = f != formats.end();
    out.push_back({fmt::format("stage_breakdown.by_format[{}].samples vs stages.csv", name),
                   number_at(e, "/samples"), seen ? f->second.rows : 0.0});
    if (seen) {
      out.push_back(
          {fmt::format("stage_breakdown.by_format[{}].decode_ms_mean vs stages.csv", name),
           number_at(e, "/decode_ms_mean"), f->second.decode_ms / f->second.rows});
    }
  }
  for (const auto& e : value_at(summary.workers_balance, "/workers")) {
    const auto id = number_at(e, "/worker");
    if (!id) continue;
    const auto w = workers.find(static_cast<int>(*id));
    const Tally t = w == workers.end() ? Tally{} : w->second;
    const std::string at = fmt::format("workers_balance.workers[{:.0f}]", *id);
    out.push_back({at + ".samples vs stages.csv", number_at(e, "/samples"), t.rows});
    out.push_back({at + ".bytes vs stages.csv", number_at(e, "/bytes"), t.bytes});
    out.push_back({at + ".stage_ms vs stages.csv", number_at(e, "/stage_ms"), t.stage_ms});
  }
  return out;
}

}  // namespace mmprof::report
