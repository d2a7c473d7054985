#include "external/loader_choice.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace mmprof::external {
namespace {

// An integer --loader: optional sign and digits, as Python's int() reads MMPROF_HOOK_LOADER.
std::optional<int64_t> integer_select(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size() || s.size() - i > 9) return std::nullopt;
  for (size_t k = i; k < s.size(); ++k)
    if (s[k] < '0' || s[k] > '9') return std::nullopt;
  return std::stoll(s);
}

}  // namespace

std::vector<MainProcess> main_processes(const HookRecords& records) {
  std::map<int, int> last_worker_section;
  for (size_t i = 0; i < records.procs.size(); ++i) {
    if (records.procs[i].is_worker())
      last_worker_section[records.procs[i].pid] = static_cast<int>(i);
  }
  std::vector<MainProcess> out;
  for (size_t i = 0; i < records.procs.size(); ++i) {
    const ProcRecord& p = records.procs[i];
    if (p.is_worker()) continue;
    const auto w = last_worker_section.find(p.pid);
    if (w != last_worker_section.end() && w->second > static_cast<int>(i)) continue;
    out.push_back({p.pid, static_cast<int>(i), p.rank});
  }
  std::sort(out.begin(), out.end(), [](const MainProcess& a, const MainProcess& b) {
    if (a.rank.has_value() != b.rank.has_value()) return a.rank.has_value();
    if (a.rank && *a.rank != *b.rank) return *a.rank < *b.rank;
    if (a.pid != b.pid) return a.pid < b.pid;
    return a.section < b.section;
  });
  return out;
}

LoaderChoice choose_loader(const HookRecords& records, const MainProcess& process,
                           const std::string& select) {
  LoaderChoice c;
  c.pid = process.pid;
  c.rank = process.rank;
  std::map<int, LoaderSummary> by_id;
  for (const LoaderRecord& l : records.loaders) {
    if (l.section != process.section) continue;
    LoaderSummary& s = by_id[l.loader];
    s.origin = l.origin;
    s.dataset = l.config.dataset;
    s.num_workers = l.config.num_workers;
    s.batch_size = l.config.batch_size;
    s.follow = l.follow;
  }
  for (const BatchRecord& b : records.batches)
    if (b.section == process.section) by_id[b.loader].batches++;
  for (const EpochRecord& e : records.epochs)
    if (e.section == process.section) by_id[e.loader].epochs++;
  for (auto& [id, s] : by_id) {
    s.loader = id;
    c.loaders.push_back(s);
  }
  if (c.loaders.empty()) {
    c.reason = "no DataLoader in this process";
    return c;
  }
  // The loader with the most batches among `pick` (ties: the first constructed).
  auto most = [&](auto&& pick) -> const LoaderSummary* {
    const LoaderSummary* best = nullptr;
    for (const LoaderSummary& s : c.loaders)
      if (pick(s) && (best == nullptr || s.batches > best->batches)) best = &s;
    return best;
  };
  if (select.empty()) {
    const LoaderSummary* best = most([](const LoaderSummary&) { return true; });
    if (best->batches == 0) {
      c.reason = "no loader returned a batch";
      return c;
    }
    c.chosen = best->loader;
    if (c.loaders.size() == 1) {
      c.reason = "the only loader";
    } else {
      const LoaderSummary* next =
          most([&](const LoaderSummary& s) { return s.loader != best->loader; });
      c.reason = fmt::format("most batches: {} (next: loader {} with {})", best->batches,
                             next->loader, next->batches);
      if (next->batches == best->batches) c.reason += "; a tie goes to the first constructed";
    }
    return c;
  }
  if (const auto index = integer_select(select)) {
    for (const LoaderSummary& s : c.loaders) {
      if (s.loader == *index) {
        c.chosen = s.loader;
        c.reason = fmt::format("--loader {}: construction order in the process", select);
        return c;
      }
    }
    c.reason = fmt::format("--loader {}: this process has no loader {} (its loaders: 0..{})",
                           select, *index, c.loaders.back().loader);
    return c;
  }
  int matches = 0;
  for (const LoaderSummary& s : c.loaders)
    matches += s.dataset == select ? 1 : 0;
  if (matches == 0) {
    std::vector<std::string> classes;
    for (const LoaderSummary& s : c.loaders)
      classes.push_back(fmt::format("{} {}", s.loader, s.dataset.empty() ? "?" : s.dataset));
    c.reason = fmt::format("--loader {}: no loader with a dataset of that class (loaders: {})",
                           select, fmt::join(classes, ", "));
    return c;
  }
  c.chosen = most([&](const LoaderSummary& s) { return s.dataset == select; })->loader;
  c.reason = matches == 1 ? fmt::format("--loader {}: dataset class", select)
                          : fmt::format(
                                "--loader {}: dataset class ({} loaders of that class: "
                                "the one with the most batches)",
                                select, matches);
  return c;
}

}  // namespace mmprof::external
