#include "rundir/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "rundir/figure_reader.hpp"
#include "rundir/json_file.hpp"
#include "rundir/json_read.hpp"
#include "rundir/json_values.hpp"
#include "rundir/summary_keys.hpp"
#include "rundir/summary_parts.hpp"
#include "util/files.hpp"

namespace mmprof {
namespace {

using nlohmann::json;
using rundir::nullable;
using rundir::text_or_null;

// throughput.<phase>: compute has its two rates; pipeline and end_to_end add MB/s, and
// mmprof's loader the samples of a batch, a user's job its wall-clock rate (end_to_end).
json rates_json(const PhaseRates& r, std::string_view phase, bool external) {
  json j = {{"samples_per_s", nullable(r.samples_per_s)},
            {"batches_per_s", nullable(r.batches_per_s)}};
  if (phase != "compute") {
    j["mb_per_s"] = nullable(r.mb_per_s);
    if (!external) j["samples_per_batch"] = nullable(r.samples_per_batch);
    if (external && phase == "end_to_end") j["samples_per_s_wall"] = nullable(r.samples_per_s_wall);
  }
  if (!r.why_null.empty()) j["why_null"] = r.why_null;
  return j;
}

constexpr std::array<std::string_view, 3> kPhases = {"compute", "pipeline", "end_to_end"};

// latency_ms: a job's has its transforms and whether getitem is per call, mmprof's loader the sync.
json latency_json(const Latency& l, bool external) {
  json j = {{"phase", text_or_null(l.phase)},
            {"step", rundir::spread_json(l.step, true)},
            {"wait", rundir::spread_json(l.wait, true)},
            {"compute", rundir::spread_json(l.compute, true)},
            {"h2d", rundir::spread_json(l.h2d, true)},
            {"stages_phase", text_or_null(l.stages_phase)},
            {"stages", rundir::spreads_json(l.stages)}};
  if (external) {
    j["transforms"] = rundir::spreads_json(l.transforms);
    j["getitem_per_call"] = l.getitem_per_call;
  } else {
    j["sync"] = rundir::spread_json(l.sync, true);
  }
  return j;
}

json phase_counts_json(const std::optional<PhaseCounts>& c, bool external) {
  if (!c) return nullptr;
  json j = {{"bytes", c->bytes},
            {"window_s", c->window_s},
            {"time_to_first_batch_ms", nullable(c->time_to_first_batch_ms)}};
  rundir::write_fields(j, *c, rundir::kPhaseSteps);
  if (!external) {
    j["warmup_s"] = c->warmup_s;
    j["minflt_per_sample"] = nullable(c->minflt_per_sample);
    rundir::write_fields(j, *c, rundir::kLoaderCounts);
  }
  return j;
}

std::optional<PhaseCounts> phase_counts(const rundir::FigureReader& r, const json& j,
                                        const std::string& at) {
  if (j.is_null()) return std::nullopt;
  if (!j.is_object()) r.refuse(at, j, "an object");
  PhaseCounts c;
  c.bytes = r.whole<uint64_t>(j, "/bytes", at, 0);
  c.window_s = r.number(j, "/window_s", at).value_or(0);
  c.time_to_first_batch_ms = r.number(j, "/time_to_first_batch_ms", at);
  rundir::read_fields(r, j, at, c, rundir::kPhaseSteps);
  c.warmup_s = r.number(j, "/warmup_s", at).value_or(0);
  c.minflt_per_sample = r.number(j, "/minflt_per_sample", at);
  rundir::read_fields(r, j, at, c, rundir::kLoaderCounts);
  return c;
}

// An optional typed part: null when empty.
template <class T>
json part_json(const std::optional<T>& part) {
  return part ? rundir::to_json(*part) : json(nullptr);
}

// Reads the typed figures of a summary.json; a figure of the wrong type is a file mmprof did not
// write, named with its key.
class Reader {
 public:
  Reader(const json& j, const std::filesystem::path& file) : j_(j), figures_(file) {}

  const rundir::FigureReader& figures() const noexcept { return figures_; }
  std::optional<double> number(const std::string& pointer) const {
    return figures_.number(j_, pointer);
  }
  std::string text(const std::string& pointer) const { return figures_.text(j_, pointer); }
  json part(const char* key) const { return rundir::value_at(j_, std::string("/") + key); }
  // The part at `key` read by `read` (an object; else empty, or refused when it is neither an
  // object nor null).
  template <class T>
  std::optional<T> typed_part(const char* key, T (*read)(const rundir::FigureReader&, const json&,
                                                         const std::string&)) const {
    const std::string at = std::string("/") + key;
    const json j = rundir::value_at(j_, at);
    if (j.is_null()) return std::nullopt;
    if (!j.is_object()) figures_.refuse(at, j, "an object");
    return read(figures_, j, at);
  }

  // The distribution `d`, found at `at` (for the error naming a bad figure).
  TimeSpread spread(const json& d, const std::string& at) const {
    return rundir::spread_from_json(figures_, d, at);
  }
  TimeSpread spread(const std::string& at) const { return spread(rundir::value_at(j_, at), at); }
  // Each distribution of the object at `at` by its name (a name may hold any character).
  std::map<std::string, TimeSpread, std::less<>> spreads(const std::string& at) const {
    return rundir::spreads_from_json(figures_, rundir::value_at(j_, at), at);
  }
  Latency latency() const {
    Latency l;
    l.phase = text("/latency_ms/phase");
    l.step = spread("/latency_ms/step");
    l.wait = spread("/latency_ms/wait");
    l.compute = spread("/latency_ms/compute");
    l.h2d = spread("/latency_ms/h2d");
    l.sync = spread("/latency_ms/sync");
    l.stages_phase = text("/latency_ms/stages_phase");
    l.stages = spreads("/latency_ms/stages");
    l.transforms = spreads("/latency_ms/transforms");
    l.getitem_per_call = rundir::FigureReader::flag(j_, "/latency_ms/getitem_per_call");
    return l;
  }

 private:
  const json& j_;
  rundir::FigureReader figures_;
};

}  // namespace

const PhaseRates* Throughput::phase(std::string_view name) const noexcept {
  if (name == "compute") return &compute;
  if (name == "pipeline") return &pipeline;
  if (name == "end_to_end") return &end_to_end;
  return nullptr;
}

PhaseRates* Throughput::phase(std::string_view name) noexcept {
  return const_cast<PhaseRates*>(std::as_const(*this).phase(name));
}

const TimeSpread& Latency::stage(std::string_view name) const {
  static const TimeSpread kNone;
  const auto it = stages.find(name);
  return it != stages.end() ? it->second : kNone;
}

bool Summary::ran(std::string_view phase) const {
  const auto it = phases.find(phase);
  return it != phases.end() && it->second.has_value();
}

std::vector<std::pair<std::string, const json*>> Summary::parts() const {
  std::vector<std::pair<std::string, const json*>> out;
  if (!job) return out;
  for (size_t i = 0; i < job->dataloader.loaders.size(); ++i) {
    const JobLoader& l = job->dataloader.loaders[i];
    out.emplace_back(fmt::format("job/dataloader/loaders/{}/config", i), &l.config);
    out.emplace_back(fmt::format("job/dataloader/loaders/{}/overrides", i), &l.overrides);
  }
  return out;
}

json to_json(const Summary& p) {
  json throughput = {
      {"predicted_end_to_end", {{"samples_per_s", nullable(p.throughput.predicted_end_to_end)}}}};
  for (const std::string_view phase : kPhases)
    throughput[std::string(phase)] = rates_json(*p.throughput.phase(phase), phase, p.external());
  json s = {{"schema", run_schema::summary},
            {"source", p.source},
            {"status", p.status},
            {"message", p.message.empty() ? json(nullptr) : json(p.message)},
            {"throughput", throughput},
            {"stall_fraction", nullable(p.stall_fraction)},
            {"time_to_first_batch_ms", nullable(p.time_to_first_batch_ms)},
            {"latency_ms", latency_json(p.latency, p.external())},
            {"memory", rundir::to_json(p.memory)},
            {"cpu", rundir::to_json(p.cpu)},
            {"io", rundir::to_json(p.io)},
            {"errors", rundir::to_json(p.errors)},
            {"gpu", p.gpu ? rundir::to_json(*p.gpu) : json(nullptr)},
            {"gpu_unavailable", text_or_null(p.gpu_unavailable)}};
  json phases = json::object();
  for (const std::string_view phase : kPhases) {
    const auto it = p.phases.find(phase);
    phases[std::string(phase)] =
        phase_counts_json(it != p.phases.end() ? it->second : std::nullopt, p.external());
  }
  s["phases"] = phases;
  s["pin_mode"] = rundir::nullable(p.pin_mode);
  if (p.job) s["job"] = rundir::to_json(*p.job);
  s["reliability"] = part_json(p.reliability);
  if (p.resume) s["reliability"]["resume"] = rundir::to_json(*p.resume);
  s["epoch_boundary"] = part_json(p.epoch_boundary);
  if (p.trace) s["trace"] = rundir::to_json(*p.trace);
  if (p.locality) s["locality"] = rundir::to_json(*p.locality);
  if (p.shuffle) s["shuffle"] = rundir::to_json(*p.shuffle);
  if (p.read_pattern) s["read_pattern"] = rundir::to_json(*p.read_pattern);
  if (p.decode_placement) s["decode_placement"] = rundir::to_json(*p.decode_placement);
  if (p.dist) s["dist"] = rundir::to_json(*p.dist);
  if (p.stage_breakdown) s["stage_breakdown"] = rundir::to_json(*p.stage_breakdown);
  if (p.workers_balance) s["workers_balance"] = rundir::to_json(*p.workers_balance);
  if (!p.resumed_by.empty()) s["resumed_by"] = p.resumed_by;
  return s;
}

Summary summary_from_json(const json& j, const std::filesystem::path& file) {
  const Reader r(j, file);
  Summary s;
  s.source = r.text("/source");
  if (s.source.empty()) s.source = "mmprof";
  s.status = r.text("/status");
  s.message = r.text("/message");
  s.resumed_by = r.text("/resumed_by");
  for (const std::string_view phase : kPhases) {
    const std::string at = fmt::format("/throughput/{}/", phase);
    PhaseRates& rates = *s.throughput.phase(phase);
    rates.samples_per_s = r.number(at + "samples_per_s");
    rates.batches_per_s = r.number(at + "batches_per_s");
    rates.mb_per_s = r.number(at + "mb_per_s");
    rates.samples_per_batch = r.number(at + "samples_per_batch");
    rates.samples_per_s_wall = r.number(at + "samples_per_s_wall");
    const json why = rundir::value_at(j, at + "why_null");
    if (why.is_string()) rates.why_null = why.get<std::string>();
  }
  s.throughput.predicted_end_to_end = r.number("/throughput/predicted_end_to_end/samples_per_s");
  s.stall_fraction = r.number("/stall_fraction");
  s.time_to_first_batch_ms = r.number("/time_to_first_batch_ms");
  s.latency = r.latency();
  s.memory = rundir::memory_from_json(r.figures(), r.part("memory"), "/memory");
  s.cpu = rundir::cpu_from_json(r.figures(), r.part("cpu"), "/cpu");
  s.io = rundir::io_from_json(r.figures(), r.part("io"), "/io");
  s.errors = rundir::errors_from_json(r.figures(), r.part("errors"), "/errors");
  if (const json gpu = r.part("gpu"); gpu.is_object())
    s.gpu = rundir::gpu_from_json(r.figures(), gpu, "/gpu");
  s.gpu_unavailable = r.text("/gpu_unavailable");
  for (const std::string_view phase : kPhases) {
    const std::string at = fmt::format("/phases/{}", phase);
    s.phases[std::string(phase)] = phase_counts(r.figures(), rundir::value_at(j, at), at);
  }
  if (const json pin = r.part("pin_mode"); !pin.is_null()) s.pin_mode = r.text("/pin_mode");
  s.job = r.typed_part("job", rundir::job_from_json);
  s.reliability = r.typed_part("reliability", rundir::reliability_from_json);
  s.resume = r.typed_part("reliability/resume", rundir::resume_from_json);
  s.epoch_boundary = r.typed_part("epoch_boundary", rundir::epoch_boundary_from_json);
  s.trace = r.typed_part("trace", rundir::trace_from_json);
  s.locality = r.typed_part("locality", rundir::locality_from_json);
  s.shuffle = r.typed_part("shuffle", rundir::shuffle_from_json);
  s.read_pattern = r.typed_part("read_pattern", rundir::read_pattern_from_json);
  s.decode_placement = r.typed_part("decode_placement", rundir::decode_placement_from_json);
  s.dist = r.typed_part("dist", rundir::dist_from_json);
  s.stage_breakdown = r.typed_part("stage_breakdown", rundir::stage_breakdown_from_json);
  s.workers_balance = r.typed_part("workers_balance", rundir::worker_balance_from_json);
  return s;
}

namespace rundir {

TimeSpread spread_of(const Distribution& d) {
  if (d.count == 0) return {};
  return {.count = d.count,
          .mean = d.mean,
          .p50 = d.p50,
          .p90 = d.p90,
          .p99 = d.p99,
          .p999 = d.p999,
          .max = d.max};
}

void mark_summary_resumed(const std::filesystem::path& run, const std::string& resumed_by) {
  const std::filesystem::path file = run / run_file::summary;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return;
  json summary = json::parse(read_input_file(file, "run file", kMaxRunFileBytes), nullptr, false);
  if (summary.is_discarded() || !summary.is_object()) {
    throw InputError(file.string() + " is not valid JSON");
  }
  summary["status"] = "resumed";
  summary["resumed_by"] = resumed_by;
  write_json_atomic(file, summary);
}

}  // namespace rundir
}  // namespace mmprof
