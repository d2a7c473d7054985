// summary.json's job part (mmprof/summary_job.hpp): written and read here, its keys spelled once.
#include <fmt/format.h>

#include "rundir/json_read.hpp"
#include "rundir/json_values.hpp"
#include "rundir/summary_keys.hpp"
#include "rundir/summary_parts.hpp"

namespace mmprof {

const JobLoader* JobDataLoaders::followed() const {
  for (const JobLoader& l : loaders)
    if (l.followed) return &l;
  return nullptr;
}

const JobRank* JobFigures::rank_of(int process) const {
  for (const JobRank& r : ranks)
    if (r.pid == process) return &r;
  return nullptr;
}

namespace rundir {
namespace {

using nlohmann::json;

// A JSON value the hook recorded, kept as it is (null when absent).
json recorded(const json& j, const char* key) {
  return value_at(j, std::string("/") + key);
}

// ---- the timeline: loaders chosen, ranks, their comparison ----

json loader_choice_json(const LoaderChoice& c) {
  return {{"pid", c.pid},
          {"rank", nullable(c.rank)},
          {"chosen", nullable(c.chosen)},
          {"reason", c.reason},
          {"loaders", json_array(c.loaders, [](const LoaderSummary& l) {
             return json{{"loader", l.loader},
                         {"origin", l.origin},
                         {"dataset", l.dataset},
                         {"num_workers", nullable(l.num_workers)},
                         {"batch_size", nullable(l.batch_size)},
                         {"batches", l.batches},
                         {"epochs", l.epochs},
                         {"follow", l.follow}};
           })}};
}

LoaderChoice loader_choice(const FigureReader& r, const json& j, const std::string& at) {
  LoaderChoice c;
  c.pid = r.whole<int>(j, "/pid", at, 0);
  c.rank = r.optional_whole<int>(j, "/rank", at);
  c.chosen = r.optional_whole<int>(j, "/chosen", at);
  c.reason = r.text(j, "/reason", at);
  c.loaders = read_objects(r, value_at(j, "/loaders"), at + "/loaders",
                           [&](const json& l, const std::string& l_at) {
                             LoaderSummary s;
                             s.loader = r.whole<int>(l, "/loader", l_at, 0);
                             s.origin = r.text(l, "/origin", l_at);
                             s.dataset = r.text(l, "/dataset", l_at);
                             s.num_workers = r.optional_whole<int>(l, "/num_workers", l_at);
                             s.batch_size = r.optional_whole<int64_t>(l, "/batch_size", l_at);
                             s.batches = r.whole<int64_t>(l, "/batches", l_at, 0);
                             s.epochs = r.whole<int64_t>(l, "/epochs", l_at, 0);
                             s.follow = FigureReader::flag(l, "/follow");
                             return s;
                           });
  return c;
}

json stages_json(const JobStageTimes& s) {
  return {{"fetch", spread_json(s.fetch, false)},     {"collate", spread_json(s.collate, false)},
          {"pin", spread_json(s.pin, false)},         {"getitem", spread_json(s.getitem, false)},
          {"decode", spread_json(s.decode, false)},   {"augment", spread_json(s.augment, false)},
          {"transforms", spreads_json(s.transforms)}, {"getitem_every", s.getitem_every},
          {"getitem_per_call", s.getitem_per_call}};
}

JobStageTimes stage_times(const FigureReader& r, const json& j, const std::string& at) {
  const auto spread = [&](const char* key) {
    return spread_from_json(r, value_at(j, std::string("/") + key), at + "/" + key);
  };
  JobStageTimes s;
  s.fetch = spread("fetch");
  s.collate = spread("collate");
  s.pin = spread("pin");
  s.getitem = spread("getitem");
  s.decode = spread("decode");
  s.augment = spread("augment");
  s.transforms = spreads_from_json(r, value_at(j, "/transforms"), at + "/transforms");
  s.getitem_every = read_wholes<int64_t>(r, j, at, "getitem_every");
  s.getitem_per_call = FigureReader::flag(j, "/getitem_per_call");
  return s;
}

json rank_json(const JobRank& x) {
  json steps = json::object(), window = json::object(), throughput = json::object();
  write_fields(steps, x, kRankSteps);
  write_fields(window, x, kRankWindow);
  window["window_ms"] = nullable(x.window_ms);
  write_fields(window, x, kRankWindowTimes);
  write_fields(throughput, x, kRankRates);
  const EpochGapFigures& g = x.epoch_gaps;
  json gaps = {{"count", g.count},
               {"iterator_start_ms",
                {{"count", g.iterator_starts},
                 {"mean", nullable(g.iterator_start_mean_ms)},
                 {"max", nullable(g.iterator_start_max_ms)}}}};
  write_fields(gaps, g, kEpochGaps);
  json j = {{"rank", nullable(x.rank)},
            {"pid", x.pid},
            {"loader", nullable(x.loader)},
            {"steps", steps},
            {"window", window},
            {"samples", x.samples},
            {"bytes", x.bytes},
            {"throughput", throughput},
            {"latency_ms",
             {{"step", spread_json(x.step, false)},
              {"wait", spread_json(x.wait, false)},
              {"compute", spread_json(x.compute, false)},
              {"stages", stages_json(x.stages)}}},
            {"epoch_gaps", gaps},
            {"epoch_boundary", to_json(x.epoch_boundary)},
            {"workers", to_json(x.workers)}};
  write_fields(j, x, kRankFractions);
  return j;
}

JobRank job_rank(const FigureReader& r, const json& j, const std::string& at) {
  JobRank x;
  x.rank = r.optional_whole<int>(j, "/rank", at);
  x.pid = r.whole<int>(j, "/pid", at, 0);
  x.loader = r.optional_whole<int>(j, "/loader", at);
  read_fields(r, value_at(j, "/steps"), at + "/steps", x, kRankSteps);
  const json window = value_at(j, "/window");
  read_fields(r, window, at + "/window", x, kRankWindow);
  x.window_ms = r.number(window, "/window_ms", at + "/window");
  read_fields(r, window, at + "/window", x, kRankWindowTimes);
  x.samples = r.whole<int64_t>(j, "/samples", at, 0);
  x.bytes = r.whole<uint64_t>(j, "/bytes", at, 0);
  read_fields(r, value_at(j, "/throughput"), at + "/throughput", x, kRankRates);
  read_fields(r, j, at, x, kRankFractions);
  const std::string latency_at = at + "/latency_ms";
  const json latency = value_at(j, "/latency_ms");
  x.step = spread_from_json(r, value_at(latency, "/step"), latency_at + "/step");
  x.wait = spread_from_json(r, value_at(latency, "/wait"), latency_at + "/wait");
  x.compute = spread_from_json(r, value_at(latency, "/compute"), latency_at + "/compute");
  x.stages = stage_times(r, value_at(latency, "/stages"), latency_at + "/stages");
  const std::string gaps_at = at + "/epoch_gaps";
  const json gaps = value_at(j, "/epoch_gaps");
  x.epoch_gaps.count = r.whole<int64_t>(gaps, "/count", gaps_at, 0);
  read_fields(r, gaps, gaps_at, x.epoch_gaps, kEpochGaps);
  x.epoch_gaps.iterator_starts = r.whole<int64_t>(gaps, "/iterator_start_ms/count", gaps_at, 0);
  x.epoch_gaps.iterator_start_mean_ms = r.number(gaps, "/iterator_start_ms/mean", gaps_at);
  x.epoch_gaps.iterator_start_max_ms = r.number(gaps, "/iterator_start_ms/max", gaps_at);
  if (const json b = value_at(j, "/epoch_boundary"); b.is_object())
    x.epoch_boundary = epoch_boundary_from_json(r, b, at + "/epoch_boundary");
  if (const json w = value_at(j, "/workers"); w.is_object())
    x.workers = worker_balance_from_json(r, w, at + "/workers");
  return x;
}

}  // namespace

json to_json(const RankComparison& c) {
  const auto who = [&](const std::optional<size_t>& i) -> json {
    if (!i || *i >= c.ranks.size()) return nullptr;
    return {{"rank", nullable(c.ranks[*i].rank)}, {"pid", c.ranks[*i].pid}};
  };
  return {{"ranks",
           json_array(c.ranks,
                      [](const RankComparison::Rank& r) {
                        json j = {{"rank", nullable(r.rank)}, {"pid", r.pid}, {"steps", r.steps}};
                        write_fields(j, r, kComparedRank);
                        return j;
                      })},
          {"common_steps", c.common_steps},
          {"slowest_rank", who(c.slowest)},
          {"slowest_by", "total step_ms over the common steps"},
          {"slowest_step_ms_total", nullable(c.slowest_total_ms)},
          {"most_waiting_rank", who(c.most_waiting)},
          {"most_waiting_wait_ms_total", nullable(c.most_waiting_wait_ms)},
          {"step_p50_spread", nullable(c.step_p50_spread)},
          {"straggler", c.straggler}};
}

namespace {

RankComparison comparison(const FigureReader& r, const json& j, const std::string& at) {
  RankComparison c;
  c.ranks = read_objects(r, value_at(j, "/ranks"), at + "/ranks",
                         [&](const json& x, const std::string& x_at) {
                           RankComparison::Rank rank;
                           rank.rank = r.optional_whole<int>(x, "/rank", x_at);
                           rank.pid = r.whole<int>(x, "/pid", x_at, 0);
                           rank.steps = r.whole<int64_t>(x, "/steps", x_at, 0);
                           read_fields(r, x, x_at, rank, kComparedRank);
                           return rank;
                         });
  c.common_steps = r.whole<int64_t>(j, "/common_steps", at, 0);
  // A rank named by its pid (and rank): its index in ranks.
  const auto index_of = [&](const char* key) -> std::optional<size_t> {
    const json who = value_at(j, std::string("/") + key);
    if (who.is_null()) return std::nullopt;
    const int pid = r.whole<int>(who, "/pid", at + "/" + key, 0);
    for (size_t i = 0; i < c.ranks.size(); ++i)
      if (c.ranks[i].pid == pid) return i;
    r.refuse(at + "/" + key, who, "a rank of /ranks");
  };
  c.slowest = index_of("slowest_rank");
  c.most_waiting = index_of("most_waiting_rank");
  c.slowest_total_ms = r.number(j, "/slowest_step_ms_total", at);
  c.most_waiting_wait_ms = r.number(j, "/most_waiting_wait_ms_total", at);
  c.step_p50_spread = r.number(j, "/step_p50_spread", at);
  c.straggler = recorded(j, "straggler");
  return c;
}

// ---- what the hook saw ----

json hook_json(const HookStatus& h) {
  json j = {
      {"status", h.status},
      {"errors",
       json_array(
           h.errors,
           [](const HookError& e) {
             return json{{"pid", e.pid}, {"where", e.where}, {"message", e.message}, {"ns", e.ns}};
           })},
      {"unpatched", json_array(h.partial, [](const HookGap& g) {
         return json{{"pid", g.pid}, {"what", g.what}, {"measures", g.measures}, {"why", g.why}};
       })}};
  write_fields(j, h, kHookCounts);
  return j;
}

HookStatus hook(const FigureReader& r, const json& j, const std::string& at) {
  HookStatus h;
  h.status = r.text(j, "/status", at);
  read_fields(r, j, at, h, kHookCounts);
  h.errors = read_objects(
      r, value_at(j, "/errors"), at + "/errors", [&](const json& e, const std::string& e_at) {
        return HookError{r.whole<int>(e, "/pid", e_at, 0), r.text(e, "/where", e_at),
                         r.text(e, "/message", e_at), r.whole<int64_t>(e, "/ns", e_at, 0)};
      });
  h.partial = read_objects(
      r, value_at(j, "/unpatched"), at + "/unpatched", [&](const json& g, const std::string& g_at) {
        return HookGap{r.whole<int>(g, "/pid", g_at, 0), r.text(g, "/what", g_at),
                       r.text(g, "/measures", g_at), r.text(g, "/why", g_at)};
      });
  return h;
}

json loader_json(const JobLoader& l) {
  return {{"pid", l.pid},
          {"rank", nullable(l.rank)},
          {"loader", l.loader},
          {"followed", l.followed},
          {"origin", l.origin},
          {"stack", l.stack},
          {"config", l.config},
          {"overrides", l.overrides},
          {"max_batches_follow", l.max_batches_follow}};
}

JobLoader job_loader(const FigureReader& r, const json& j, const std::string& at) {
  JobLoader l;
  l.pid = r.whole<int>(j, "/pid", at, 0);
  l.rank = r.optional_whole<int>(j, "/rank", at);
  l.loader = r.whole<int>(j, "/loader", at, 0);
  l.followed = FigureReader::flag(j, "/followed");
  l.origin = r.text(j, "/origin", at);
  l.stack = r.texts(j, "/stack", at);
  l.config = recorded(j, "config");
  l.overrides = recorded(j, "overrides");
  l.max_batches_follow = FigureReader::flag(j, "/max_batches_follow");
  return l;
}

json stuck_json(const StuckFetch& s) {
  return {{"loader", s.loader},   {"worker", s.worker},           {"pid", s.pid},
          {"indices", s.indices}, {"item", text_or_null(s.item)}, {"seconds", s.seconds},
          {"text", s.text}};
}

StuckFetch stuck_fetch(const FigureReader& r, const json& j, const std::string& at) {
  StuckFetch s;
  s.loader = r.whole<int>(j, "/loader", at, 0);
  s.worker = r.whole<int>(j, "/worker", at, -1);
  s.pid = r.whole<int>(j, "/pid", at, 0);
  s.indices = r.text(j, "/indices", at);
  s.item = r.text(j, "/item", at);
  s.seconds = r.number(j, "/seconds", at).value_or(0);
  s.text = r.text(j, "/text", at);
  return s;
}

json cow_json(const CowGrowth& c) {
  json j = {{"pid", c.pid},         {"points", c.points},
            {"span_s", c.span_s},   {"threshold_mib_per_min", c.threshold_mib_per_min},
            {"growing", c.growing}, {"verdict", c.verdict}};
  write_fields(j, c, kCowSlopes);
  if (!c.process.empty()) j["process"] = c.process;
  return j;
}

CowGrowth cow(const FigureReader& r, const json& j, const std::string& at) {
  CowGrowth c;
  c.pid = r.whole<int>(j, "/pid", at, 0);
  c.process = r.text(j, "/process", at);
  c.points = r.whole<int64_t>(j, "/points", at, 0);
  c.span_s = r.number(j, "/span_s", at).value_or(0);
  c.threshold_mib_per_min = r.number(j, "/threshold_mib_per_min", at).value_or(0);
  c.growing = FigureReader::flag(j, "/growing");
  c.verdict = r.text(j, "/verdict", at);
  read_fields(r, j, at, c, kCowSlopes);
  return c;
}

}  // namespace

json to_json(const JobDataLoaders& d) {
  return {{"hook", hook_json(d.hook)},
          {"versions", d.versions},
          {"versions_differ", d.versions_differ},
          {"loaders", json_array(d.loaders, loader_json)}};
}

JobDataLoaders dataloaders_from_json(const FigureReader& r, const json& j, const std::string& at) {
  JobDataLoaders d;
  d.hook = hook(r, value_at(j, "/hook"), at + "/hook");
  d.versions = recorded(j, "versions");
  d.versions_differ = FigureReader::flag(j, "/versions_differ");
  d.loaders =
      read_objects(r, value_at(j, "/loaders"), at + "/loaders",
                   [&](const json& l, const std::string& l_at) { return job_loader(r, l, l_at); });
  return d;
}

json to_json(const JobFigures& x) {
  return {{"command", x.command},
          {"pid", x.pid},
          {"exit_code", x.exit_code},
          {"exit_signal", nullable(x.exit_signal)},
          {"exit", x.exit},
          {"stopped_by", x.stopped_by},
          {"ended", x.ended},
          {"steps",
           {{"warmup_asked", x.warmup_asked},
            {"asked", nullable(x.steps_asked)},
            {"measured", x.steps_measured},
            {"short_why", text_or_null(x.short_why)}}},
          {"forced", x.forced},
          {"killed_at_end", x.killed_at_end},
          {"exception", x.exception},
          {"stuck", json_array(x.stuck, stuck_json)},
          {"hook", hook_json(x.hook)},
          {"digests",
           {{"batches", x.digests.batches},
            {"total_ms", x.digests.total_ms},
            {"max_ms", x.digests.max_ms},
            {"in_measured_steps", x.digests.in_measured_steps},
            {"text", x.digests.text}}},
          {"dataloader", to_json(x.dataloader)},
          {"cow", json_array(x.cow, cow_json)},
          {"unavailable", x.unavailable},
          {"loaders", json_array(x.loaders, loader_choice_json)},
          {"ranks", json_array(x.ranks, rank_json)},
          {"primary_pid", nullable(x.primary_pid)},
          {"primary_rank", nullable(x.primary_rank)},
          {"primary_why", x.primary_why},
          {"rank_comparison", to_json(x.rank_comparison)},
          {"warnings", x.warnings}};
}

JobFigures job_from_json(const FigureReader& r, const json& j, const std::string& at) {
  JobFigures x;
  x.command = r.texts(j, "/command", at);
  x.pid = r.whole<int>(j, "/pid", at, 0);
  x.exit_code = r.whole<int>(j, "/exit_code", at, 0);
  x.exit_signal = r.optional_whole<int>(j, "/exit_signal", at);
  x.exit = r.text(j, "/exit", at);
  x.stopped_by = r.text(j, "/stopped_by", at);
  x.ended = r.text(j, "/ended", at);
  x.warmup_asked = r.whole<int64_t>(j, "/steps/warmup_asked", at, 0);
  x.steps_asked = r.optional_whole<int64_t>(j, "/steps/asked", at);
  x.steps_measured = r.whole<int64_t>(j, "/steps/measured", at, 0);
  x.short_why = r.text(j, "/steps/short_why", at);
  x.forced = FigureReader::flag(j, "/forced");
  x.killed_at_end = r.texts(j, "/killed_at_end", at);
  x.exception = recorded(j, "exception");
  x.stuck =
      read_objects(r, value_at(j, "/stuck"), at + "/stuck",
                   [&](const json& s, const std::string& s_at) { return stuck_fetch(r, s, s_at); });
  x.hook = hook(r, value_at(j, "/hook"), at + "/hook");
  const std::string digests_at = at + "/digests";
  const json digests = value_at(j, "/digests");
  x.digests.batches = r.whole<int64_t>(digests, "/batches", digests_at, 0);
  x.digests.in_measured_steps = r.whole<int64_t>(digests, "/in_measured_steps", digests_at, 0);
  x.digests.total_ms = r.number(digests, "/total_ms", digests_at).value_or(0);
  x.digests.max_ms = r.number(digests, "/max_ms", digests_at).value_or(0);
  x.digests.text = r.text(digests, "/text", digests_at);
  x.dataloader = dataloaders_from_json(r, value_at(j, "/dataloader"), at + "/dataloader");
  x.cow = read_objects(r, value_at(j, "/cow"), at + "/cow",
                       [&](const json& c, const std::string& c_at) { return cow(r, c, c_at); });
  x.unavailable = r.texts(j, "/unavailable", at);
  x.loaders = read_objects(
      r, value_at(j, "/loaders"), at + "/loaders",
      [&](const json& c, const std::string& c_at) { return loader_choice(r, c, c_at); });
  x.ranks =
      read_objects(r, value_at(j, "/ranks"), at + "/ranks",
                   [&](const json& k, const std::string& k_at) { return job_rank(r, k, k_at); });
  x.primary_pid = r.optional_whole<int>(j, "/primary_pid", at);
  x.primary_rank = r.optional_whole<int>(j, "/primary_rank", at);
  x.primary_why = r.text(j, "/primary_why", at);
  x.rank_comparison = comparison(r, value_at(j, "/rank_comparison"), at + "/rank_comparison");
  x.warnings = r.texts(j, "/warnings", at);
  return x;
}

}  // namespace rundir
}  // namespace mmprof
