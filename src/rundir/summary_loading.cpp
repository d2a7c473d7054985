// summary.json's loading parts (mmprof/summary_loading.hpp): each written and read here, its keys
// spelled once.
#include <fmt/format.h>

#include <array>

#include "rundir/json_read.hpp"
#include "rundir/json_values.hpp"
#include "rundir/summary_keys.hpp"
#include "rundir/summary_parts.hpp"

namespace mmprof {

const LocalityPhase* Locality::phase(std::string_view name) const {
  const auto it = phases.find(name);
  return it != phases.end() ? &it->second : nullptr;
}

const BoundaryJudgement* EpochBoundaryFigures::headline() const {
  if (loop) return &*loop;
  const auto it = phases.find("pipeline");
  return it != phases.end() ? &it->second : nullptr;
}

namespace rundir {
namespace {

using nlohmann::json;

std::string at_key(const std::string& at, std::string_view key) {
  return fmt::format("{}/{}", at, key);
}

// ---- locality ----

json locality_phase_json(const LocalityPhase& p, const Locality& l) {
  json j = {{"prepared", p.prepared}, {"prepare_s", p.prepare_s}};
  write_fields(j, p, kResidency);
  write_fields(j, p, kPhaseBytes);
  if (l.network()) {
    write_fields(j, p, kNetworkRates);
    write_fields(j, p, kNetworkCounts);
  }
  if (l.cold()) j["pages_left_resident"] = p.pages_left_resident;
  return j;
}

LocalityPhase locality_phase(const FigureReader& r, const json& j, const std::string& at) {
  LocalityPhase p;
  p.prepared = r.text(j, "/prepared", at);
  p.prepare_s = r.number(j, "/prepare_s", at).value_or(0);
  read_fields(r, j, at, p, kResidency);
  read_fields(r, j, at, p, kPhaseBytes);
  read_fields(r, j, at, p, kNetworkRates);
  read_fields(r, j, at, p, kNetworkCounts);
  p.pages_left_resident = r.whole<uint64_t>(j, "/pages_left_resident", at, 0);
  return p;
}

// ---- epoch_boundary ----

json judgement_json(const BoundaryJudgement& b, bool loader_phase) {
  json j = {{"boundaries", b.boundaries},
            {"threshold_ms", b.threshold_ms},
            {"stall", nullable(b.stall)},
            {"verdict", b.verdict}};
  write_fields(j, b, kBoundaryWaits);
  if (loader_phase) {
    j["batch_size"] = nullable(b.batch_size);
    write_fields(j, b, kBoundaryFill);
  }
  return j;
}

BoundaryJudgement judgement(const FigureReader& r, const json& j, const std::string& at) {
  BoundaryJudgement b;
  b.boundaries = r.whole<int64_t>(j, "/boundaries", at, 0);
  b.threshold_ms = r.number(j, "/threshold_ms", at).value_or(0);
  b.stall = r.optional_flag(j, "/stall", at);
  b.verdict = r.text(j, "/verdict", at);
  read_fields(r, j, at, b, kBoundaryWaits);
  b.batch_size = r.optional_whole<int64_t>(j, "/batch_size", at);
  read_fields(r, j, at, b, kBoundaryFill);
  return b;
}

// ---- stage_breakdown and workers_balance ----

json class_json(const SampleClassFigures& c) {
  json j = {{"class", c.label},
            {"samples", c.samples},
            {"bytes", c.bytes},
            {"decode_share", nullable(c.decode_share)}};
  write_fields(j, c, kClassTimes);
  if (!c.modality.empty()) {
    j["modality"] = c.modality;
    j["format"] = c.format;
    j["resolution"] = c.resolution;
  }
  return j;
}

SampleClassFigures sample_class(const FigureReader& r, const json& j, const std::string& at) {
  SampleClassFigures c;
  c.label = r.text(j, "/class", at);
  c.samples = r.whole<int64_t>(j, "/samples", at, 0);
  c.bytes = r.whole<uint64_t>(j, "/bytes", at, 0);
  c.decode_share = r.number(j, "/decode_share", at);
  read_fields(r, j, at, c, kClassTimes);
  c.modality = r.text(j, "/modality", at);
  c.format = r.text(j, "/format", at);
  c.resolution = r.text(j, "/resolution", at);
  return c;
}

std::vector<SampleClassFigures> sample_classes(const FigureReader& r, const json& j,
                                               const std::string& at, const char* key) {
  return read_objects(
      r, value_at(j, std::string("/") + key), at_key(at, key),
      [&](const json& c, const std::string& c_at) { return sample_class(r, c, c_at); });
}

json worker_json(const WorkerStats& w) {
  json j = {{"worker", w.worker},
            {"pids", w.pids},
            {"bytes", nullable(w.bytes)},
            {"busy_ms", w.busy_ms},
            {"slowest_items", json_array(w.slowest_items, [](const auto& item) {
               return json{{"index", item.first}, {"getitem_ms", item.second}};
             })}};
  write_fields(j, w, kWorkerCounts);
  write_fields(j, w, kWorkerTimes);
  if (w.stage_ms || w.collate_ms) write_fields(j, w, kWorkerBusyParts);
  return j;
}

WorkerStats worker(const FigureReader& r, const json& j, const std::string& at) {
  WorkerStats w;
  w.worker = r.whole<int>(j, "/worker", at, -1);
  w.pids = read_wholes<int>(r, j, at, "pids");
  w.bytes = r.optional_whole<uint64_t>(j, "/bytes", at);
  w.busy_ms = r.number(j, "/busy_ms", at).value_or(0);
  w.slowest_items =
      read_objects(r, value_at(j, "/slowest_items"), at + "/slowest_items",
                   [&](const json& item, const std::string& item_at) {
                     return std::pair(r.text(item, "/index", item_at),
                                      r.number(item, "/getitem_ms", item_at).value_or(0));
                   });
  read_fields(r, j, at, w, kWorkerCounts);
  read_fields(r, j, at, w, kWorkerTimes);
  read_fields(r, j, at, w, kWorkerBusyParts);
  return w;
}

}  // namespace

json to_json(const Locality& l) {
  json phases = json::object();
  for (const auto& [name, p] : l.phases)
    phases[name] = locality_phase_json(p, l);
  json j = {{"source", l.source},
            {"cache", l.cache},
            {"host_memory_mib", nullable(l.host_memory_mib)},
            {"fits_in_ram", nullable(l.fits_in_ram)},
            {"phases", phases}};
  write_fields(j, l, kDatasetCounts);
  if (!l.url.empty()) j["url"] = l.url;
  if (!l.note.empty()) j["note"] = l.note;
  if (!l.ram_note.empty()) j["ram_note"] = l.ram_note;
  return j;
}

Locality locality_from_json(const FigureReader& r, const json& j, const std::string& at) {
  Locality l;
  l.source = r.text(j, "/source", at);
  l.cache = r.text(j, "/cache", at);
  read_fields(r, j, at, l, kDatasetCounts);
  l.host_memory_mib = r.number(j, "/host_memory_mib", at);
  l.fits_in_ram = r.optional_flag(j, "/fits_in_ram", at);
  l.url = r.text(j, "/url", at);
  l.note = r.text(j, "/note", at);
  l.ram_note = r.text(j, "/ram_note", at);
  if (const json phases = value_at(j, "/phases"); phases.is_object()) {
    for (const auto& [name, p] : phases.items())
      l.phases[name] = locality_phase(r, p, at_key(at + "/phases", name));
  }
  return l;
}

json to_json(const ShuffleFigures& s) {
  return {{"samples", s.samples},
          {"gap_ratio", nullable(s.gap_ratio)},
          {"order_correlation", nullable(s.order_correlation)}};
}

ShuffleFigures shuffle_from_json(const FigureReader& r, const json& j, const std::string& at) {
  ShuffleFigures s;
  s.samples = r.whole<uint64_t>(j, "/samples", at, 0);
  s.gap_ratio = r.number(j, "/gap_ratio", at);
  s.order_correlation = r.number(j, "/order_correlation", at);
  return s;
}

json to_json(const ReadPattern& p) {
  return {{"phase", p.phase},
          {"media_reads", p.media_reads},
          {"sequential_fraction", nullable(p.sequential_fraction)},
          {"kib_per_sample", nullable(p.kib_per_sample)}};
}

ReadPattern read_pattern_from_json(const FigureReader& r, const json& j, const std::string& at) {
  ReadPattern p;
  p.phase = r.text(j, "/phase", at);
  p.media_reads = r.whole<uint64_t>(j, "/media_reads", at, 0);
  p.sequential_fraction = r.number(j, "/sequential_fraction", at);
  p.kib_per_sample = r.number(j, "/kib_per_sample", at);
  return p;
}

json to_json(const Reliability& x) {
  json j = {{"worker_faults", x.worker_faults}};
  write_fields(j, x, kReliability);
  return j;
}

Reliability reliability_from_json(const FigureReader& r, const json& j, const std::string& at) {
  Reliability x;
  read_fields(r, j, at, x, kReliability);
  x.worker_faults = r.texts(j, "/worker_faults", at);
  return x;
}

json to_json(const ResumeRecord& x) {
  json j = json::object();
  write_fields(j, x, kResumeSteps);
  write_fields(j, x, kResumeTimes);
  j["from"] = x.from;
  j["phase"] = x.phase;
  j["start_batch_id"] = x.start_batch_id;
  return j;
}

ResumeRecord resume_from_json(const FigureReader& r, const json& j, const std::string& at) {
  ResumeRecord x;
  read_fields(r, j, at, x, kResumeSteps);
  read_fields(r, j, at, x, kResumeTimes);
  x.from = r.text(j, "/from", at);
  x.phase = r.text(j, "/phase", at);
  x.start_batch_id = r.whole<uint64_t>(j, "/start_batch_id", at, 0);
  return x;
}

json to_json(const EpochBoundaryFigures& e) {
  json j = {{"persistent_workers", nullable(e.persistent_workers)},
            {"batches_per_epoch", nullable(e.batches_per_epoch)}};
  if (e.loop) {
    j.update(judgement_json(*e.loop, false));
    return j;
  }
  for (const auto& [phase, b] : e.phases)
    j[phase] = judgement_json(b, true);
  // The run's own verdict is the pipeline phase's.
  const BoundaryJudgement* p = e.headline();
  j["stall_ms"] = p != nullptr ? nullable(p->stall_ms) : json(nullptr);
  j["stall"] = p != nullptr ? nullable(p->stall) : json(nullptr);
  j["verdict"] = p != nullptr ? json(p->verdict) : json(nullptr);
  return j;
}

EpochBoundaryFigures epoch_boundary_from_json(const FigureReader& r, const json& j,
                                              const std::string& at) {
  EpochBoundaryFigures e;
  e.persistent_workers = r.optional_flag(j, "/persistent_workers", at);
  e.batches_per_epoch = r.optional_whole<int64_t>(j, "/batches_per_epoch", at);
  // A job's loop is judged in the part itself; mmprof's loader's phases are objects in it.
  if (j.contains("boundaries")) {
    e.loop = judgement(r, j, at);
    return e;
  }
  for (const auto& [key, v] : j.items())
    if (v.is_object()) e.phases[key] = judgement(r, v, at_key(at, key));
  return e;
}

json to_json(const DecodePlacement& d) {
  json nvml = nullptr;
  if (d.nvml && !d.nvml->reason.empty()) {
    nvml = {{"reason", d.nvml->reason}};
  } else if (d.nvml) {
    nvml = {{"gpu", d.nvml->gpu}, {"readings", d.nvml->readings}, {"source", d.nvml->source}};
    write_fields(nvml, *d.nvml, kNvmlFigures);
  }
  json inflation = json::object();
  write_fields(inflation, d.compute_inflation, kComputeInflation);
  if (!d.compute_inflation.why_null.empty()) inflation["why_null"] = d.compute_inflation.why_null;
  return {{"where", d.where},
          {"phase", d.phase},
          {"device_decode_ms", spread_json(d.device_decode_ms, false)},
          {"cpu_fallbacks", d.cpu_fallbacks},
          {"cpu_fallback_reason", text_or_null(d.cpu_fallback_reason)},
          {"nvml", nvml},
          {"compute_inflation", inflation}};
}

DecodePlacement decode_placement_from_json(const FigureReader& r, const json& j,
                                           const std::string& at) {
  DecodePlacement d;
  d.where = r.text(j, "/where", at);
  d.phase = r.text(j, "/phase", at);
  d.device_decode_ms =
      spread_from_json(r, value_at(j, "/device_decode_ms"), at + "/device_decode_ms");
  d.cpu_fallbacks = r.whole<int64_t>(j, "/cpu_fallbacks", at, 0);
  d.cpu_fallback_reason = r.text(j, "/cpu_fallback_reason", at);
  if (const json n = value_at(j, "/nvml"); !n.is_null()) {
    const std::string nvml_at = at + "/nvml";
    NvmlFigures& nvml = d.nvml.emplace();
    nvml.reason = r.text(n, "/reason", nvml_at);
    nvml.gpu = r.text(n, "/gpu", nvml_at);
    nvml.source = r.text(n, "/source", nvml_at);
    nvml.readings = r.whole<int64_t>(n, "/readings", nvml_at, 0);
    read_fields(r, n, nvml_at, nvml, kNvmlFigures);
  }
  const json inflation = value_at(j, "/compute_inflation");
  read_fields(r, inflation, at + "/compute_inflation", d.compute_inflation, kComputeInflation);
  d.compute_inflation.why_null = r.text(inflation, "/why_null", at + "/compute_inflation");
  return d;
}

json to_json(const DistRank& d) {
  const json epochs = json_array(d.epochs, [](const PlannedEpoch& e) {
    json entry = json::object();
    write_fields(entry, e, kPlannedEpoch);
    return entry;
  });
  json j = {{"rank", d.rank},   {"world_size", d.world_size},     {"sync", d.sync},
            {"group", d.group}, {"phase", text_or_null(d.phase)}, {"epochs", epochs}};
  write_fields(j, d, kDistSync);
  return j;
}

DistRank dist_from_json(const FigureReader& r, const json& j, const std::string& at) {
  DistRank d;
  d.rank = r.whole<int64_t>(j, "/rank", at, 0);
  d.world_size = r.whole<int64_t>(j, "/world_size", at, 1);
  d.sync = r.text(j, "/sync", at);
  d.group = r.text(j, "/group", at);
  d.phase = r.text(j, "/phase", at);
  read_fields(r, j, at, d, kDistSync);
  d.epochs = read_objects(r, value_at(j, "/epochs"), at + "/epochs",
                          [&](const json& e, const std::string& epoch_at) {
                            PlannedEpoch p;
                            read_fields(r, e, epoch_at, p, kPlannedEpoch);
                            return p;
                          });
  return d;
}

json to_json(const StageBreakdownFigures& b) {
  json slowest = class_json(b.slowest);
  slowest["rest_decode_ms_mean"] = nullable(b.rest_decode_ms_mean);
  slowest["times_rest"] = nullable(b.times_rest);
  return {
      {"phase", b.phase},
      {"samples", b.samples},
      {"decode_ms_total", b.decode_ms_total},
      {"resolution_buckets_megapixels", b.resolution_buckets_megapixels},
      {"by_modality", json_array(b.by_modality, class_json)},
      {"by_format", json_array(b.by_format, class_json)},
      {"by_resolution", json_array(b.by_resolution, class_json)},
      {"by_class", json_array(b.by_class, class_json)},
      {"slowest", {{"by_mean_decode", slowest}, {"by_decode_share", class_json(b.largest_share)}}}};
}

StageBreakdownFigures stage_breakdown_from_json(const FigureReader& r, const json& j,
                                                const std::string& at) {
  StageBreakdownFigures b;
  b.phase = r.text(j, "/phase", at);
  b.samples = r.whole<int64_t>(j, "/samples", at, 0);
  b.decode_ms_total = r.number(j, "/decode_ms_total", at).value_or(0);
  const json buckets = value_at(j, "/resolution_buckets_megapixels");
  for (size_t i = 0; i < (buckets.is_array() ? buckets.size() : 0); ++i) {
    b.resolution_buckets_megapixels.push_back(
        r.number(buckets, fmt::format("/{}", i), at + "/resolution_buckets_megapixels")
            .value_or(0));
  }
  b.by_modality = sample_classes(r, j, at, "by_modality");
  b.by_format = sample_classes(r, j, at, "by_format");
  b.by_resolution = sample_classes(r, j, at, "by_resolution");
  b.by_class = sample_classes(r, j, at, "by_class");
  const std::string slowest_at = at + "/slowest/by_mean_decode";
  const json slowest = value_at(j, "/slowest/by_mean_decode");
  b.slowest = sample_class(r, slowest, slowest_at);
  b.rest_decode_ms_mean = r.number(slowest, "/rest_decode_ms_mean", slowest_at);
  b.times_rest = r.number(slowest, "/times_rest", slowest_at);
  b.largest_share =
      sample_class(r, value_at(j, "/slowest/by_decode_share"), at + "/slowest/by_decode_share");
  return b;
}

json to_json(const WorkerBalance& w) {
  return {{"workers", json_array(w.workers, worker_json)},
          {"busy_spread_fraction", nullable(w.busy_spread)},
          {"busy_spread_limit_fraction", w.busy_spread_limit},
          {"busy_max_over_median", nullable(w.busy_max_over_median)},
          {"imbalanced", w.imbalanced},
          {"flags", w.flags},
          {"likely_cause", text_or_null(w.likely_cause)},
          {"likely_cause_kind", text_or_null(w.cause_kind)}};
}

WorkerBalance worker_balance_from_json(const FigureReader& r, const json& j,
                                       const std::string& at) {
  WorkerBalance w;
  w.workers =
      read_objects(r, value_at(j, "/workers"), at + "/workers",
                   [&](const json& x, const std::string& x_at) { return worker(r, x, x_at); });
  w.busy_spread = r.number(j, "/busy_spread_fraction", at);
  w.busy_spread_limit = r.number(j, "/busy_spread_limit_fraction", at).value_or(0);
  w.busy_max_over_median = r.number(j, "/busy_max_over_median", at);
  w.imbalanced = FigureReader::flag(j, "/imbalanced");
  w.flags = r.texts(j, "/flags", at);
  w.likely_cause = r.text(j, "/likely_cause", at);
  w.cause_kind = r.text(j, "/likely_cause_kind", at);
  return w;
}

json to_json(const TraceFigures& t) {
  json j = {{"file", t.file}};
  write_fields(j, t, kTraceCounts);
  if (t.sample_every || t.flows) write_fields(j, t, kTraceSampling);
  if (!t.source.empty()) j["source"] = t.source;
  return j;
}

TraceFigures trace_from_json(const FigureReader& r, const json& j, const std::string& at) {
  TraceFigures t;
  t.file = r.text(j, "/file", at);
  read_fields(r, j, at, t, kTraceCounts);
  read_fields(r, j, at, t, kTraceSampling);
  t.source = r.text(j, "/source", at);
  return t;
}

}  // namespace rundir
}  // namespace mmprof
