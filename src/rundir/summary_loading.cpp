// summary.json's loading parts (mmprof/summary_loading.hpp): each written and read here, its keys
// spelled once.
#include <fmt/format.h>

#include <array>

#include "rundir/json_read.hpp"
#include "rundir/json_values.hpp"
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

constexpr std::array<Field<LocalityPhase, double>, 4> kResidency = {{
    {"resident_before", &LocalityPhase::resident_before},
    {"resident_at_window", &LocalityPhase::resident_at_window},
    {"resident_after", &LocalityPhase::resident_after},
    {"page_cache_fraction", &LocalityPhase::page_cache_fraction},
}};
constexpr std::array<Field<LocalityPhase, uint64_t>, 2> kPhaseBytes = {{
    {"loader_bytes", &LocalityPhase::loader_bytes},
    {"device_bytes", &LocalityPhase::device_bytes},
}};
// A remote dataset's phase only.
constexpr std::array<Field<LocalityPhase, double>, 2> kNetworkRates = {{
    {"read_span_s", &LocalityPhase::read_span_s},
    {"network_mb_per_s", &LocalityPhase::network_mb_per_s},
}};
constexpr std::array<Field<LocalityPhase, uint64_t>, 2> kNetworkCounts = {{
    {"network_bytes", &LocalityPhase::network_bytes},
    {"read_retries", &LocalityPhase::read_retries},
}};

constexpr std::array<Figure<Locality, uint64_t>, 3> kDatasetCounts = {{
    {"dataset_files", &Locality::dataset_files},
    {"dataset_bytes", &Locality::dataset_bytes},
    {"residency_files", &Locality::residency_files},
}};

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

constexpr std::array<Field<BoundaryJudgement, double>, 3> kBoundaryWaits = {{
    {"stall_ms", &BoundaryJudgement::stall_ms},
    {"steady_wait_ms", &BoundaryJudgement::steady_wait_ms},
    {"excess_ms", &BoundaryJudgement::excess_ms},
}};
// mmprof's loader's phases only.
constexpr std::array<Field<BoundaryJudgement, double>, 3> kBoundaryFill = {{
    {"fill_ms", &BoundaryJudgement::fill_ms},
    {"unexplained_ms", &BoundaryJudgement::unexplained_ms},
    {"noise_ms", &BoundaryJudgement::noise_ms},
}};

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

// ---- reliability ----

constexpr std::array<Figure<Reliability, int64_t>, 6> kReliability = {{
    {"skipped_samples", &Reliability::skipped_samples},
    {"rejected_members", &Reliability::rejected_members},
    {"ignored_files", &Reliability::ignored_files},
    {"respawns", &Reliability::respawns},
    {"retries", &Reliability::retries},
    {"hung_workers", &Reliability::hung_workers},
}};

// ---- trace ----

constexpr std::array<Figure<TraceFigures, uint64_t>, 5> kTraceCounts = {{
    {"events", &TraceFigures::events},
    {"recorded_events", &TraceFigures::recorded_events},
    {"dropped_events", &TraceFigures::dropped_events},
    {"max_events", &TraceFigures::max_events},
    {"gpu_events", &TraceFigures::gpu_events},
}};

constexpr std::array<Field<TraceFigures, uint64_t>, 2> kTraceSampling = {{
    {"sample_every", &TraceFigures::sample_every},
    {"flows", &TraceFigures::flows},
}};

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
  return {{"from", x.from},
          {"phase", x.phase},
          {"start_batch_id", x.start_batch_id},
          {"start_epoch", x.start_epoch},
          {"measured_steps_before", x.measured_steps_before},
          {"time_to_first_batch_ms", x.time_to_first_batch_ms},
          {"loader_time_to_first_batch_ms", x.loader_time_to_first_batch_ms}};
}

ResumeRecord resume_from_json(const FigureReader& r, const json& j, const std::string& at) {
  ResumeRecord x;
  x.from = r.text(j, "/from", at);
  x.phase = r.text(j, "/phase", at);
  x.start_batch_id = r.whole<uint64_t>(j, "/start_batch_id", at, 0);
  x.start_epoch = r.whole<int64_t>(j, "/start_epoch", at, 0);
  x.measured_steps_before = r.whole<int64_t>(j, "/measured_steps_before", at, 0);
  x.time_to_first_batch_ms = r.number(j, "/time_to_first_batch_ms", at).value_or(0);
  x.loader_time_to_first_batch_ms = r.number(j, "/loader_time_to_first_batch_ms", at).value_or(0);
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
