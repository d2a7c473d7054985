#include "external/optimizer_steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <vector>

namespace mmprof::external {

using nlohmann::json;

json gradient_accumulation(const HookRecords& records, const RankTimeline& rank) {
  const auto batches = static_cast<int64_t>(rank.steps.size());
  json out = {{"accum_steps", nullptr},
              {"source", nullptr},
              {"optimizer_steps", 0},
              {"optimizers", 0},
              {"measured_batches", batches}};
  const OptimWatchRecord* watch = nullptr;
  for (const OptimWatchRecord& w : records.optim_watches)
    if (w.pid == rank.pid) watch = &w;  // the process's latest
  if (watch == nullptr || !watch->available) {
    out["source"] = fmt::format(
        "not detectable: {}",
        watch == nullptr ? "the hook recorded no optimizer steps for this process" : watch->why);
    return out;
  }
  // The measured batch each optimizer step fell in (a step: from its call for the batch to the
  // next call), by optimizer.
  std::map<int, std::vector<int64_t>> stepped_in;
  int64_t in_window = 0;
  for (const OptimStepRecord& o : records.optim_steps) {
    if (o.pid != rank.pid) continue;
    // The last step that began at or before it (the steps are in order).
    const auto after =
        std::upper_bound(rank.steps.begin(), rank.steps.end(), o.ns,
                         [](int64_t ns, const StepRow& s) { return ns < s.t_start_ns; });
    if (after == rank.steps.begin()) continue;
    const StepRow& s = *std::prev(after);
    if (o.ns >= s.t_start_ns + static_cast<int64_t>(s.step_ms * 1e6)) continue;
    stepped_in[o.opt].push_back(std::prev(after) - rank.steps.begin());
    ++in_window;
  }
  out["optimizer_steps"] = in_window;
  out["optimizers"] = stepped_in.size();
  if (stepped_in.empty()) {
    out["source"] = fmt::format(
        "not detectable: no torch.optim optimizer stepped in the {} measured batches (the job "
        "has none there, or steps its own way)",
        batches);
    return out;
  }
  const auto most = std::max_element(
      stepped_in.begin(), stepped_in.end(),
      [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  std::vector<int64_t> gaps;
  const std::vector<int64_t>& at = most->second;
  for (size_t i = 1; i < at.size(); ++i)
    if (at[i] != at[i - 1]) gaps.push_back(at[i] - at[i - 1]);
  if (gaps.empty()) {
    out["source"] = fmt::format(
        "not detectable: optimizer {} stepped in 1 of the {} measured batches (measure more "
        "steps to see the next)",
        most->first, batches);
    return out;
  }
  std::sort(gaps.begin(), gaps.end());
  const int64_t median = gaps[gaps.size() / 2];
  out["accum_steps"] = median;
  out["source"] = fmt::format(
      "torch.optim's step hook: optimizer {} stepped {} times in the {} measured batches, every "
      "{} batch{}{}",
      most->first, at.size(), batches, median, median == 1 ? "" : "es",
      gaps.front() == gaps.back()
          ? ""
          : fmt::format(" (the median; from {} to {} between steps)", gaps.front(), gaps.back()));
  return out;
}

}  // namespace mmprof::external
