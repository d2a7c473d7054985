#include "measure/job_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <system_error>

#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "rundir/json_file.hpp"
#include "rundir/json_read.hpp"
#include "rundir/json_values.hpp"
#include "stats/descriptive.hpp"
#include "stats/inference.hpp"
#include "util/files.hpp"
#include "util/shell_quote.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The time a rank spent before its sync: its own work, which the others wait for.
std::vector<double> local_ms(const RankSteps& r, size_t n) {
  std::vector<double> local(n);
  for (size_t i = 0; i < n; ++i)
    local[i] = r.step_ms[i] - (i < r.sync_ms.size() ? r.sync_ms[i] : 0.0);
  return local;
}

// The median of `v` over the ranks other than `skip` (one odd rank does not move it).
double median_of_others(const std::vector<double>& v, size_t skip) {
  std::vector<double> others;
  for (size_t i = 0; i < v.size(); ++i)
    if (i != skip) others.push_back(v[i]);
  return others.empty() ? std::nan("") : median(others);
}

// Why the slowest rank is slow, split the way its step is (wait for data, compute, the rest).
json cause_of(const std::vector<RankSteps>& ranks, size_t slow, const std::vector<double>& local,
              size_t n) {
  std::vector<double> waits, computes;
  for (const RankSteps& r : ranks) {
    waits.push_back(
        mean(std::vector<double>(r.wait_ms.begin(), r.wait_ms.begin() + static_cast<long>(n))));
    computes.push_back(r.compute_ms.size() >= n
                           ? mean(std::vector<double>(r.compute_ms.begin(),
                                                      r.compute_ms.begin() + static_cast<long>(n)))
                           : 0.0);
  }
  const double extra = local[slow] - median_of_others(local, slow);
  const double extra_wait = waits[slow] - median_of_others(waits, slow);
  const double extra_compute = computes[slow] - median_of_others(computes, slow);
  // The wait or the compute names the cause only when it explains at least half of the rank's
  // extra time before the sync: a 0.7 ms longer wait in a 5 ms lead is not a data straggler.
  const auto explains = [&](double part) {
    return std::isfinite(part) && part > 0 && part >= 0.5 * extra;
  };
  const bool wait_larger = extra_wait >= extra_compute;
  const std::string kind = wait_larger ? (explains(extra_wait) ? "data" : "other")
                                       : (explains(extra_compute) ? "compute" : "other");
  json c = {{"extra_ms_per_step", finite_or_null(extra)},
            {"extra_wait_ms_per_step", finite_or_null(extra_wait)},
            {"extra_compute_ms_per_step", finite_or_null(extra_compute)},
            {"kind", kind}};
  const int rank = ranks[slow].rank;
  if (kind == "data") {
    c["text"] = fmt::format(
        "Rank {} waits {:.1f} ms more per step for its batches than the median rank: its data "
        "pipeline is the straggler",
        rank, extra_wait);
  } else if (kind == "compute") {
    c["text"] = fmt::format(
        "Rank {}'s step computes {:.1f} ms longer than the median rank's: its own compute, not "
        "its data, is the straggler",
        rank, extra_compute);
  } else {
    c["text"] = fmt::format(
        "Rank {} spends {:.1f} ms more per step before the sync than the median rank, and neither "
        "its wait for batches ({:+.1f} ms) nor its compute ({:+.1f} ms) explains half of it: the "
        "rest of its step is the straggler (its loop's own work, or a CPU it waited for)",
        rank, extra, extra_wait, extra_compute);
  }
  return c;
}

// A straggler is named only on evidence: the slowest rank's time before the sync exceeds the
// other ranks' median in a one-sided Wilcoxon signed-rank test over the common steps, the p value
// multiplied by the number of ranks (the slowest was picked among them), below kStragglerAlpha,
// and its mean is at least kStragglerSpread x the median rank's (a smaller gap costs the job
// too little to act on). Otherwise the slowest rank is noise: "not established" and why.
constexpr double kStragglerAlpha = 0.05;
constexpr double kStragglerSpread = 1.05;

json straggler_test(const std::vector<std::vector<double>>& locals, size_t slow, double spread) {
  const size_t n = locals[slow].size();
  std::vector<double> d(n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> at(locals.size());
    for (size_t k = 0; k < locals.size(); ++k)
      at[k] = locals[k][i];
    d[i] = locals[slow][i] - median_of_others(at, slow);
  }
  const stats::WilcoxonResult w = stats::wilcoxon_signed_rank(d);
  const double expected = static_cast<double>(w.n * (w.n + 1)) / 4;
  const double one_sided = w.n == 0 ? 1.0 : (w.w_plus > expected ? w.p / 2 : 1 - w.p / 2);
  const double adjusted = std::min(1.0, one_sided * static_cast<double>(locals.size()));
  const bool significant = adjusted < kStragglerAlpha;
  const bool large = std::isfinite(spread) && spread >= kStragglerSpread;
  std::string why;
  if (!significant) {
    why = fmt::format(
        "slower than the others' median in a test p = {:.3g} (one-sided, x {} ranks; "
        "need < {:g}): its lead is within the steps' noise",
        adjusted, locals.size(), kStragglerAlpha);
  } else if (!large) {
    why = fmt::format(
        "its mean is only {:.3f}x the median rank's (need >= {:g}x): too small a "
        "gap to act on",
        spread, kStragglerSpread);
  }
  return {{"established", significant && large},
          {"method",
           "one-sided Wilcoxon signed-rank of the slowest rank's time before the sync minus the "
           "other ranks' median, per step; p x ranks (Bonferroni: the slowest was picked)"},
          {"p_adjusted", adjusted},
          {"alpha", kStragglerAlpha},
          {"spread_floor", kStragglerSpread},
          {"why_not", why.empty() ? json(nullptr) : json(why)}};
}

}  // namespace

fs::path rank_dir(const fs::path& job, int rank) {
  return job / fmt::format("rank-{}", rank);
}

bool is_job_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / run_file::job, ec) || RunDir::is_run(rank_dir(dir, 0));
}

json straggler_analysis(const std::vector<RankSteps>& ranks) {
  size_t n = ranks.empty() ? 0 : ranks.front().step_ms.size();
  for (const RankSteps& r : ranks)
    n = std::min({n, r.step_ms.size(), r.wait_ms.size()});
  if (ranks.size() < 2 || n == 0) return nullptr;
  std::vector<std::vector<double>> locals;
  locals.reserve(ranks.size());
  for (const RankSteps& r : ranks)
    locals.push_back(local_ms(r, n));
  json per_step = json::array();
  std::vector<int64_t> slowest_count(ranks.size(), 0);
  std::vector<double> job_step(n, 0);
  for (size_t i = 0; i < n; ++i) {
    size_t slow = 0;
    for (size_t k = 0; k < ranks.size(); ++k) {
      if (locals[k][i] > locals[slow][i]) slow = k;
      job_step[i] = std::max(job_step[i], ranks[k].step_ms[i]);
    }
    ++slowest_count[slow];
    per_step.push_back(ranks[slow].rank);
  }
  std::vector<double> local_mean;
  local_mean.reserve(locals.size());
  for (const auto& l : locals)
    local_mean.push_back(mean(l));
  const auto slow = static_cast<size_t>(std::max_element(local_mean.begin(), local_mean.end()) -
                                        local_mean.begin());
  json by_rank = json::array();
  for (size_t k = 0; k < ranks.size(); ++k) {
    by_rank.push_back({{"rank", ranks[k].rank},
                       {"local_ms_mean", local_mean[k]},
                       {"slowest_steps", slowest_count[k]},
                       {"local_ms", locals[k]}});
  }
  const double med = median(local_mean);
  const double spread = med > 0 ? local_mean[slow] / med : NAN;
  const json test = straggler_test(locals, slow, spread);
  json cause = cause_of(ranks, slow, local_mean, n);
  if (test["established"] != true) {
    cause["text"] =
        fmt::format("No straggler established: rank {} is the slowest on average, but {}",
                    ranks[slow].rank, test["why_not"].get<std::string>());
  }
  return {{"steps", n},
          {"established", test["established"]},
          {"test", test},
          {"slowest_rank", ranks[slow].rank},
          {"slowest_rank_share", static_cast<double>(slowest_count[slow]) / static_cast<double>(n)},
          {"spread", finite_or_null(spread)},
          {"job_step_ms", to_json(describe(job_step))},
          {"by_rank", by_rank},
          {"slowest_per_step", per_step},
          {"cause", cause}};
}

namespace {

// The phase whose steps the job is judged by: end to end when the ranks had a step, else the
// loader alone.
std::string job_phase(const std::vector<StepRow>& rows) {
  for (const StepRow& r : rows)
    if (r.phase == "end_to_end") return "end_to_end";
  return "pipeline";
}

json stage_means(const Summary& summary) {
  json out = json::object();
  for (const char* stage : {"read", "decode", "augment"}) {
    out[stage] = rundir::nullable(summary.latency.stage(stage).mean);
  }
  return out;
}

// The rank's stage with the longest mean per sample.
json limiting_stage(const json& stages) {
  json best = nullptr;
  double longest = -1;
  for (const auto& [stage, ms] : stages.items()) {
    if (ms.is_number() && ms.get<double>() > longest) {
      longest = ms.get<double>();
      best = stage;
    }
  }
  return best;
}

// The rank's three slowest samples of the phase (read + decode + augment).
json slowest_samples(const RunDir& run) {
  constexpr size_t kSlowest = 3;
  // The slowest so far, slowest first; stages.csv is read row by row (a rank has many).
  std::vector<std::pair<double, std::string>> top;
  const auto slower = [](const auto& a, const auto& b) { return a.first > b.first; };
  run.for_each_stage([&](const StageRow& s) {
    const double t = s.read_ms.value_or(0) + s.decode_ms.value_or(0) + s.augment_ms.value_or(0);
    if (top.size() == kSlowest && t <= top.back().first) return;
    if (top.size() == kSlowest) top.pop_back();
    top.insert(std::upper_bound(top.begin(), top.end(), std::pair{t, std::string()}, slower),
               {t, s.key});
  });
  json out = json::array();
  for (const auto& [ms, key] : top)
    out.push_back({{"key", key}, {"ms", ms}});
  return out;
}

// What the merge reads of one rank's run directory.
struct RankFiles {
  bool has_summary = false;
  Summary summary;  // empty for a rank killed outright (no summary.json)
  json data;        // its manifest's config.data
  std::vector<StepRow> steps;
  json slowest_samples;
};

// Rank `dir`'s files; nullopt with `why` (the file and what is wrong with it) when one of them is
// damaged: the rank is named, the other ranks are merged.
std::optional<RankFiles> read_rank(const fs::path& dir, std::string& why) {
  try {
    const RunDir run = RunDir::open(dir);
    RankFiles f;
    f.has_summary = run.has_summary();
    if (f.has_summary) f.summary = run.summary();
    f.data = run.manifest().value("config", json::object()).value("data", json());
    f.steps = run.steps();
    f.slowest_samples = slowest_samples(run);
    return f;
  } catch (const InputError& e) {
    why = e.what();
    return std::nullopt;
  }
}

}  // namespace

json reshard_advice(const json& ranks, int slow, const json& data, const json& shards) {
  const auto per_sample = [](const json& r) {
    const auto samples = r.value("samples", int64_t{0});
    return samples > 0
               ? static_cast<double>(r.value("bytes", uint64_t{0})) / static_cast<double>(samples)
               : std::nan("");
  };
  std::vector<double> others;
  for (const json& r : ranks) {
    if (r["rank"] != slow && std::isfinite(per_sample(r))) others.push_back(per_sample(r));
  }
  const double mine = per_sample(ranks[static_cast<size_t>(slow)]);
  if (others.empty() || !std::isfinite(mine)) return nullptr;
  const double ratio = mine / median(others);
  const std::string path =
      data.is_object() && data["path"].is_string() ? data["path"].get<std::string>() : "DATA";
  const std::string layout =
      data.is_object() && data["layout"].is_string() ? data["layout"].get<std::string>() : "auto";
  json advice = {{"bytes_per_sample_ratio", ratio}};
  if (ratio < 1.1) {
    advice["text"] = fmt::format(
        "its samples are {:.2f}x the median rank's in bytes: not a matter of shard sizes; look at "
        "its limiting stage and slowest samples",
        ratio);
    return advice;
  }
  if (layout != "tar_stream") {
    advice["text"] = fmt::format(
        "its samples are {:.2f}x the median rank's in bytes, but in the data.layout={} layout "
        "every rank draws its samples from one permutation of the whole dataset, so no shard is "
        "its own and re-sharding changes nothing: the big samples fell to it in this window; look "
        "at its limiting stage and slowest samples",
        ratio, layout);
    return advice;
  }
  const json spread = shards.is_object() ? shards.value("largest_over_smallest", json()) : json();
  if (spread.is_number() && spread.get<double>() <= 1.1) {
    advice["text"] = fmt::format(
        "its samples are {:.2f}x the median rank's in bytes, but the shards are balanced by bytes "
        "already (largest/smallest {:.2f}x), so --by-size changes nothing: they hold its big "
        "samples together, fewer to a shard, and each step takes as many samples on every rank; "
        "shards that mix big and small samples would even the steps",
        ratio, spread.get<double>());
    return advice;
  }
  const std::string balanced = path + "-balanced";
  advice["text"] = fmt::format(
      "its samples are {:.2f}x the median rank's in bytes: its shards hold the big ones. Re-shard "
      "balanced by bytes and measure the change",
      ratio);
  advice["commands"] = {
      fmt::format("mmprof shard {} --out {} --by-size", shell_word(path), shell_word(balanced)),
      fmt::format("mmprof ab --set data.layout={} --factor data.path={},{}", layout, path,
                  balanced)};
  return advice;
}

json epoch_balance(const std::map<int, std::vector<PlannedEpoch>>& by_rank) {
  // The epochs every rank lists, and each rank's (samples, batches) in each.
  std::map<int64_t, std::map<int, std::pair<int64_t, int64_t>>> epochs;
  size_t listing = 0;
  for (const auto& [rank, list] : by_rank) {
    if (list.empty()) continue;
    ++listing;
    for (const PlannedEpoch& p : list)
      epochs[p.epoch][rank] = {p.samples, p.batches};
  }
  if (listing == 0) return nullptr;
  json unequal = json::array();
  int64_t checked = 0;
  std::set<int64_t> steps;
  for (const auto& [epoch, ranks] : epochs) {
    if (ranks.size() != by_rank.size()) continue;  // not every rank planned it
    ++checked;
    const auto by_batches = [](const auto& a, const auto& b) {
      return a.second.second < b.second.second;
    };
    const auto fewest = std::min_element(ranks.begin(), ranks.end(), by_batches);
    const auto most = std::max_element(ranks.begin(), ranks.end(), by_batches);
    steps.insert(fewest->second.second);
    if (fewest->second.second == most->second.second) continue;
    unequal.push_back({{"epoch", epoch},
                       {"fewest",
                        {{"rank", fewest->first},
                         {"samples", fewest->second.first},
                         {"batches", fewest->second.second}}},
                       {"most",
                        {{"rank", most->first},
                         {"samples", most->second.first},
                         {"batches", most->second.second}}}});
  }
  std::string text;
  if (checked == 0) {
    text = "not compared: the ranks list no epoch in common";
  } else if (unequal.empty()) {
    text = steps.size() == 1
               ? fmt::format("every rank takes {} steps per epoch ({} epoch{} checked)",
                             *steps.begin(), checked, checked == 1 ? "" : "s")
               : fmt::format(
                     "the ranks take equal steps in each of the {} epochs "
                     "checked (from {} to {})",
                     checked, *steps.begin(), *steps.rbegin());
  } else {
    const json& u = unequal[0];
    text = fmt::format(
        "the ranks take unequal steps per epoch ({} of the {} epoch{} checked): in epoch {} rank "
        "{} has {} batches ({} samples) and rank {} has {} ({} samples). Under DDP the rank that "
        "runs out first starts its next epoch early, or leaves its peers waiting in a collective "
        "(a hang, or an epoch cut short): give every rank as many samples (shards of equal "
        "sample counts, a multiple of ranks x workers of them, or a sampler that pads or drops "
        "the remainder as DistributedSampler does)",
        unequal.size(), checked, checked == 1 ? "" : "s", u["epoch"].get<int64_t>(),
        u["fewest"]["rank"].get<int>(), u["fewest"]["batches"].get<int64_t>(),
        u["fewest"]["samples"].get<int64_t>(), u["most"]["rank"].get<int>(),
        u["most"]["batches"].get<int64_t>(), u["most"]["samples"].get<int64_t>());
  }
  return {{"checked", checked},
          {"equal", checked > 0 && unequal.empty()},
          {"unequal", unequal},
          {"text", text}};
}

namespace {

// The data's shards.json (mmprof shard writes one), or null: none there, unreadable, or the data
// is not a local folder. It only refines the re-shard advice, so it never fails the merge.
json shards_manifest(const json& data) {
  if (!data.is_object() || !data["path"].is_string()) return nullptr;
  try {
    return rundir::read_json_if_present(fs::path(data["path"].get<std::string>()) / "shards.json")
        .value_or(json());
  } catch (const Error&) {
    return nullptr;
  }
}

// How the ranks ended as an earlier merge recorded it (the launcher's view), for a re-merge.
std::map<int, RankExit> recorded_exits(const fs::path& job) {
  std::map<int, RankExit> exits;
  const std::optional<json> j = rundir::read_json_if_present(job / run_file::job);
  if (!j) return exits;
  const json first = j->value("first_failed_rank", json());
  for (const json& r : j->value("ranks", json::array())) {
    if (!r.contains("exit")) continue;
    const int k = r["rank"].get<int>();
    exits[k] = RankExit{r["exit"].value("code", 0), r["exit"].value("how", ""),
                        first.is_number() && first.get<int>() == k};
  }
  return exits;
}

// One rank's steps of the job's phase `p`, with the samples and bytes they delivered.
RankSteps phase_steps(const std::vector<StepRow>& rows, const std::string& p, int rank,
                      uint64_t& bytes, int64_t& samples) {
  RankSteps s;
  s.rank = rank;
  for (const StepRow& row : rows) {
    if (row.phase != p) continue;
    s.step_ms.push_back(row.step_ms);
    s.wait_ms.push_back(row.wait_ms);
    s.compute_ms.push_back(row.compute_ms);
    if (row.sync_ms) s.sync_ms.push_back(*row.sync_ms);
    bytes += row.bytes;
    samples += row.samples;
  }
  return s;
}

// A rank's planned epochs (its summary's dist.epochs): the samples and steps of each.
void add_planned_epochs(const std::vector<PlannedEpoch>& epochs, json& r) {
  r["samples_per_epoch"] = json::array();
  r["steps_per_epoch"] = json::array();
  for (const PlannedEpoch& e : epochs) {
    r["samples_per_epoch"].push_back(e.samples);
    r["steps_per_epoch"].push_back(e.batches);
  }
}

// The straggler's cause from its rank's figures; an established data straggler gets the
// reshard advice.
void add_straggler_cause(json& stragglers, const json& ranks, const json& data) {
  const int slow = stragglers["slowest_rank"].get<int>();
  json& cause = stragglers["cause"];
  const json& r = ranks[static_cast<size_t>(slow)];
  cause["limiting_stage"] = r["limiting_stage"];
  cause["slowest_samples"] = r["slowest_samples"];
  cause["samples"] = r["samples"];
  cause["bytes"] = r["bytes"];
  if (cause["kind"] == "data" && stragglers["established"] == true)
    cause["reshard"] = reshard_advice(ranks, slow, data, shards_manifest(data));
}

}  // namespace

json merge_job(const fs::path& job, int world_size, const std::map<int, RankExit>& given) {
  const std::map<int, RankExit> exits = given.empty() ? recorded_exits(job) : given;
  json ranks = json::array();
  json failed = json::array();
  json missing = json::array();
  std::vector<RankSteps> steps;
  json sync = nullptr, group = nullptr, phase = nullptr, first_failed = nullptr, data = nullptr;
  double global_rate = 0;
  bool any_rate = false;
  std::map<int, std::vector<PlannedEpoch>> planned;  // rank -> its dist.epochs
  for (int k = 0; k < world_size; ++k) {
    json r = {{"rank", k}, {"dir", rank_dir(job, k).filename().string()}};
    const auto exit = exits.find(k);
    if (exit != exits.end()) {
      r["exit"] = {{"code", exit->second.code}, {"how", exit->second.how}};
      if (exit->second.first) first_failed = k;
    }
    if (!RunDir::is_run(rank_dir(job, k))) {
      r["status"] = "missing";
      missing.push_back(k);
      if (exit != exits.end() && exit->second.code != 0)
        failed.push_back({{"rank", k}, {"how", exit->second.how}, {"message", nullptr}});
      ranks.push_back(r);
      continue;
    }
    std::string why;
    const std::optional<RankFiles> files = read_rank(rank_dir(job, k), why);
    if (!files) {
      r["status"] = "unreadable";
      r["message"] = why;
      failed.push_back({{"rank", k}, {"how", "unreadable"}, {"message", why}});
      ranks.push_back(r);
      continue;
    }
    // A rank killed outright left no summary.json: its steps are there, its figures are not.
    const Summary& summary = files->summary;
    if (data.is_null()) data = files->data;
    r["status"] = files->has_summary ? summary.status : "killed (no summary.json)";
    r["message"] = summary.message.empty() ? json(nullptr) : json(summary.message);
    const bool ok = r["status"] == "complete" && (exit == exits.end() || exit->second.code == 0);
    if (!ok) {
      failed.push_back({{"rank", k},
                        {"how", exit != exits.end() ? json(exit->second.how) : json(r["status"])},
                        {"message", r["message"]}});
    }
    const std::optional<DistRank>& dist = summary.dist;
    if (sync.is_null() && dist) sync = dist->sync;
    if (group.is_null() && dist) group = dist->group;
    const std::vector<StepRow>& rows = files->steps;
    const std::string p = job_phase(rows);
    if (phase.is_null()) phase = p;
    uint64_t bytes = 0;
    int64_t samples = 0;
    RankSteps s = phase_steps(rows, p, k, bytes, samples);
    const PhaseRates* rates = summary.throughput.phase(p);
    const std::optional<double> rate = rates != nullptr ? rates->samples_per_s : std::nullopt;
    if (rate) {
      global_rate += *rate;
      any_rate = true;
    }
    const Distribution step = describe(s.step_ms);
    r["samples_per_s"] = rundir::nullable(rate);
    r["stall_fraction"] = rundir::nullable(summary.stall_fraction);
    r["step_ms"] = {{"p50", step.count ? json(step.p50) : json(nullptr)},
                    {"p99", step.count ? json(step.p99) : json(nullptr)}};
    r["wait_ms_mean"] = s.wait_ms.empty() ? json(nullptr) : json(mean(s.wait_ms));
    r["sync_ms_mean"] = s.sync_ms.empty() ? json(nullptr) : json(mean(s.sync_ms));
    r["sync_fraction"] = dist ? rundir::nullable(dist->sync_fraction) : json(nullptr);
    r["samples"] = samples;
    r["bytes"] = bytes;
    if (dist) {
      add_planned_epochs(dist->epochs, r);
      planned[k] = dist->epochs;
    }
    r["stages_ms_mean"] = stage_means(summary);
    r["limiting_stage"] = limiting_stage(r["stages_ms_mean"]);
    r["slowest_samples"] = files->slowest_samples;
    steps.push_back(std::move(s));
    ranks.push_back(r);
  }
  json stragglers = straggler_analysis(steps);
  if (stragglers.is_object()) add_straggler_cause(stragglers, ranks, data);
  json j = {{"schema", run_schema::job},
            {"world_size", world_size},
            {"sync", sync},
            {"group", group},
            {"phase", phase},
            {"status", failed.empty() && missing.empty() ? "complete" : "failed"},
            {"failed_ranks", failed},
            {"first_failed_rank", first_failed},
            {"missing_ranks", missing},
            {"global", {{"samples_per_s", any_rate ? json(global_rate) : json(nullptr)}}},
            {"ranks", ranks},
            {"epochs", epoch_balance(planned)},
            {"stragglers", stragglers}};
  write_json_atomic(job / run_file::job, j);
  return j;
}

int job_world_size(const fs::path& dir) {
  const std::optional<json> j = rundir::read_json_if_present(dir / run_file::job);
  if (j && j->value("world_size", 0) > 0) return (*j)["world_size"].get<int>();
  std::error_code ec;
  int n = 0;
  while (fs::exists(rank_dir(dir, n), ec))
    ++n;
  return n;
}

}  // namespace mmprof
