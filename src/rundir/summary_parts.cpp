#include "rundir/summary_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>

#include "rundir/json_read.hpp"
#include "rundir/json_values.hpp"
#include "rundir/summary_keys.hpp"

namespace mmprof {

double MemoryPeaks::swap_peak_mib() const {
  double swap = main ? main->swap_peak_mib.value_or(0) : 0;
  for (const ProcessMemory& w : workers)
    swap = std::max(swap, w.swap_peak_mib.value_or(0));
  return swap;
}

const CpuWindow* CpuUse::phase(std::string_view name) const {
  const auto it = phases.find(name);
  return it != phases.end() && it->second ? &*it->second : nullptr;
}

const HostCpuShare* CpuUse::host() const {
  return top && top->host ? &*top->host : nullptr;
}

const RunQueueDelay* CpuUse::run_queue_delay() const {
  return top && top->run_queue_delay ? &*top->run_queue_delay : nullptr;
}

namespace rundir {
namespace {

using nlohmann::json;

template <class T, class F>
json array_of(const std::vector<T>& items, F&& item_json) {
  json out = json::array();
  for (const T& item : items)
    out.push_back(item_json(item));
  return out;
}

// Each element of the array at `key` of `j`, read by `read(element, its pointer)`.
template <class T, class F>
std::vector<T> read_array(const json& j, const std::string& key, const std::string& at, F&& read) {
  std::vector<T> out;
  const json items = value_at(j, "/" + key);
  if (!items.is_array()) return out;
  for (size_t i = 0; i < items.size(); ++i)
    out.push_back(read(items[i], fmt::format("{}/{}/{}", at, key, i)));
  return out;
}

// Whether any of `pointers` holds something (not absent, not null).
bool has_any(const json& j, std::initializer_list<const char*> pointers) {
  return std::any_of(pointers.begin(), pointers.end(),
                     [&](const char* p) { return !value_at(j, p).is_null(); });
}

// ---- memory ----

json process_memory_json(const ProcessMemory& p) {
  json j = {{"pid", p.pid}};
  write_fields(j, p, kProcessPeaks);
  if (p.role == "worker") {
    j["index"] = p.index;
    j["phase"] = p.phase;
  } else if (p.role != "main") {
    j["comm"] = p.comm;
    j["phase"] = p.phase;
    if (p.role != "external") j["role"] = p.role;  // a job's agent, or mmprof observing it
  }
  if (p.rank) j["rank"] = *p.rank;
  if (p.loader) j["loader"] = *p.loader;
  if (p.main_pid) j["main_pid"] = *p.main_pid;
  return j;
}

// `role`: what the array it is in says (main, worker), or empty for the external array, where the
// process says it (external unless written).
ProcessMemory process_memory(const FigureReader& r, const json& j, const std::string& at,
                             const std::string& role) {
  ProcessMemory p;
  p.pid = r.whole(j, "/pid", at, 0);
  p.role = !role.empty() ? role : r.text(j, "/role", at);
  // In the external array a process's own role is anything but a main process or a worker.
  if (p.role.empty() || (role.empty() && (p.role == "main" || p.role == "worker")))
    p.role = "external";
  read_fields(r, j, at, p, kProcessPeaks);
  p.index = r.whole(j, "/index", at, -1);
  p.comm = r.text(j, "/comm", at);
  p.phase = r.text(j, "/phase", at);
  p.rank = r.optional_whole<int>(j, "/rank", at);
  p.loader = r.optional_whole<int>(j, "/loader", at);
  p.main_pid = r.optional_whole<int>(j, "/main_pid", at);
  return p;
}

// ---- cpu ----

json process_cpu_json(const ProcessCpu& p) {
  json j = {{"pid", p.pid}, {"role", p.role}, {"cpu_s", p.cpu_s}};
  write_fields(j, p, kProcessCpu);
  if (p.role == "worker") j["index"] = p.index;
  return j;
}

ProcessCpu process_cpu(const FigureReader& r, const json& j, const std::string& at) {
  ProcessCpu p;
  p.pid = r.whole(j, "/pid", at, 0);
  p.role = r.text(j, "/role", at);
  p.index = r.whole(j, "/index", at, -1);
  p.cpu_s = r.number(j, "/cpu_s", at).value_or(0);
  read_fields(r, j, at, p, kProcessCpu);
  return p;
}

json host_cpu_json(const HostCpuShare& h) {
  return {{"cpus", h.cpus},
          {"cpu_ids", h.cpu_ids},
          {"busy_fraction", h.busy_fraction},
          {"steal_fraction", nullable(h.steal_fraction)},
          {"iowait_fraction", nullable(h.iowait_fraction)},
          {"idle_fraction", h.idle_fraction},
          {"busy_cores", h.busy_cores},
          {"others_busy_cores", h.others_busy_cores},
          {"source", h.source}};
}

HostCpuShare host_cpu(const FigureReader& r, const json& j, const std::string& at) {
  HostCpuShare h;
  h.cpus = r.whole(j, "/cpus", at, 0);
  for (const json& id : value_at(j, "/cpu_ids"))
    if (id.is_number_integer()) h.cpu_ids.push_back(id.get<int>());
  h.busy_fraction = r.number(j, "/busy_fraction", at).value_or(0);
  h.steal_fraction = r.number(j, "/steal_fraction", at);
  h.iowait_fraction = r.number(j, "/iowait_fraction", at);
  h.idle_fraction = r.number(j, "/idle_fraction", at).value_or(0);
  h.busy_cores = r.number(j, "/busy_cores", at).value_or(0);
  h.others_busy_cores = r.number(j, "/others_busy_cores", at).value_or(0);
  h.source = r.text(j, "/source", at);
  return h;
}

json pressure_json(const CpuPressure& p) {
  if (!p.available) return {{"available", false}, {"reason", p.reason}};
  return {{"available", true},
          {"some_fraction", nullable(p.some_fraction)},
          {"full_fraction", nullable(p.full_fraction)},
          {"source", p.source}};
}

json run_queue_json(const RunQueueDelay& d) {
  json j = {{"source", d.source}};
  write_fields(j, d, kRunQueueDelay);
  return j;
}

json cpu_window_json(const CpuWindow& w) {
  return {
      {"window", w.window},
      {"complete", w.complete},
      {"wall_s", w.wall_s},
      {"cpu_s", w.cpu_s},
      {"utilization_cores", nullable(w.utilization_cores)},
      {"per_process", array_of(w.per_process, process_cpu_json)},
      {"host", w.host ? host_cpu_json(*w.host) : json(nullptr)},
      {"pressure", pressure_json(w.pressure)},
      {"run_queue_delay", w.run_queue_delay ? run_queue_json(*w.run_queue_delay) : json(nullptr)}};
}

CpuWindow cpu_window(const FigureReader& r, const json& j, const std::string& at) {
  CpuWindow w;
  w.window = r.text(j, "/window", at);
  w.complete = FigureReader::flag(j, "/complete");
  w.wall_s = r.number(j, "/wall_s", at).value_or(0);
  w.cpu_s = r.number(j, "/cpu_s", at).value_or(0);
  w.utilization_cores = r.number(j, "/utilization_cores", at);
  w.per_process = read_array<ProcessCpu>(
      j, "per_process", at, [&](const json& p, const auto& a) { return process_cpu(r, p, a); });
  if (const json h = value_at(j, "/host"); h.is_object()) w.host = host_cpu(r, h, at + "/host");
  w.pressure.available = FigureReader::flag(j, "/pressure/available");
  w.pressure.some_fraction = r.number(j, "/pressure/some_fraction", at);
  w.pressure.full_fraction = r.number(j, "/pressure/full_fraction", at);
  w.pressure.source = r.text(j, "/pressure/source", at);
  w.pressure.reason = r.text(j, "/pressure/reason", at);
  if (const json d = value_at(j, "/run_queue_delay"); d.is_object()) {
    RunQueueDelay& delay = w.run_queue_delay.emplace();
    read_fields(r, d, at + "/run_queue_delay", delay, kRunQueueDelay);
    delay.source = r.text(d, "/source", at + "/run_queue_delay");
  }
  return w;
}

// ---- io ----

json io_window_json(const IoWindow& w) {
  json j = {{"window", w.window},
            {"complete", w.complete},
            {"wall_s", w.wall_s},
            {"minflt", w.minflt},
            {"majflt", w.majflt}};
  write_fields(j, w, kIoCounts);
  write_fields(j, w, kIoRates);
  return j;
}

IoWindow io_window(const FigureReader& r, const json& j, const std::string& at) {
  IoWindow w;
  w.window = r.text(j, "/window", at);
  w.complete = FigureReader::flag(j, "/complete");
  w.wall_s = r.number(j, "/wall_s", at).value_or(0);
  w.minflt = r.whole<int64_t>(j, "/minflt", at, 0);
  w.majflt = r.whole<int64_t>(j, "/majflt", at, 0);
  read_fields(r, j, at, w, kIoCounts);
  read_fields(r, j, at, w, kIoRates);
  return w;
}

// Each window of `phases` (null: it never opened) read by `read`.
template <class W, class F>
std::map<std::string, std::optional<W>, std::less<>> windows(const json& phases,
                                                             const std::string& at, F&& read) {
  std::map<std::string, std::optional<W>, std::less<>> out;
  if (!phases.is_object()) return out;
  for (const auto& [name, w] : phases.items()) {
    out[name] = w.is_object() ? std::optional<W>(read(w, fmt::format("{}/phases/{}", at, name)))
                              : std::nullopt;
  }
  return out;
}

template <class W, class F>
json windows_json(const std::map<std::string, std::optional<W>, std::less<>>& phases,
                  F&& window_json) {
  json out = json::object();
  for (const auto& [name, w] : phases)
    out[name] = w ? window_json(*w) : json(nullptr);
  return out;
}

}  // namespace

json spread_json(const TimeSpread& d, bool with_p999) {
  json j = {{"count", d.count}};
  write_fields(j, d, kSpread);
  if (!with_p999) j.erase("p999");
  return j;
}

TimeSpread spread_from_json(const FigureReader& r, const json& j, const std::string& at) {
  TimeSpread s;
  s.count = r.whole<size_t>(j, "/count", at, 0);
  read_fields(r, j, at, s, kSpread);
  return s;
}

json spreads_json(const std::map<std::string, TimeSpread, std::less<>>& spreads) {
  json j = json::object();
  for (const auto& [name, d] : spreads)
    j[name] = spread_json(d, false);
  return j;
}

std::map<std::string, TimeSpread, std::less<>> spreads_from_json(const FigureReader& r,
                                                                 const json& j,
                                                                 const std::string& at) {
  std::map<std::string, TimeSpread, std::less<>> out;
  if (!j.is_object()) return out;
  for (const auto& [name, d] : j.items())
    out[name] = spread_from_json(r, d, fmt::format("{}/{}", at, name));
  return out;
}

json to_json(const MemoryPeaks& m) {
  const json main = m.main ? process_memory_json(*m.main) : json(nullptr);
  if (!m.sampled) {
    // Without a sampler the keys are there with nulls, never faked.
    json j = {{"main", main}, {"workers", array_of(m.workers, process_memory_json)}};
    write_fields(j, m, std::array{kHostPeaks[0], kHostPeaks[1]});
    return j;
  }
  const auto text = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  json j = {{"window", "run"},
            {"samples", m.samples},
            {"interval_ms", m.interval_ms},
            {"main", main},
            {"mains", m.mains.size() > 1 ? array_of(m.mains, process_memory_json) : json(nullptr)},
            {"workers", array_of(m.workers, process_memory_json)},
            {"external", array_of(m.external, process_memory_json)},
            {"host_peak_source", text(m.host_peak_source)},
            {"sampler_error", text(m.sampler_error)}};
  write_fields(j, m, kHostPeaks);
  return j;
}

MemoryPeaks memory_from_json(const FigureReader& r, const json& j, const std::string& at) {
  MemoryPeaks m;
  m.sampled = !value_at(j, "/samples").is_null();
  m.samples = r.whole(j, "/samples", at, 0);
  m.interval_ms = r.whole(j, "/interval_ms", at, 0);
  if (const json main = value_at(j, "/main"); main.is_object())
    m.main = process_memory(r, main, at + "/main", "main");
  const auto in = [&](const char* role) {
    return
        [&r, role](const json& p, const std::string& a) { return process_memory(r, p, a, role); };
  };
  m.mains = read_array<ProcessMemory>(j, "mains", at, in("main"));
  m.workers = read_array<ProcessMemory>(j, "workers", at, in("worker"));
  m.external = read_array<ProcessMemory>(j, "external", at, in(""));
  read_fields(r, j, at, m, kHostPeaks);
  m.host_peak_source = r.text(j, "/host_peak_source", at);
  m.sampler_error = r.text(j, "/sampler_error", at);
  return m;
}

json to_json(const CpuUse& c) {
  if (!c.sampled) return {{"utilization_cores", nullptr}, {"per_process", json::array()}};
  json j = c.top ? cpu_window_json(*c.top)
                 : json{{"utilization_cores", nullptr}, {"per_process", json::array()}};
  j["effective_cores"] = nullable(c.effective_cores);
  j["effective_cores_source"] = c.effective_cores_source;
  j["phases"] = windows_json(c.phases, cpu_window_json);
  return j;
}

CpuUse cpu_from_json(const FigureReader& r, const json& j, const std::string& at) {
  CpuUse c;
  c.sampled = has_any(j, {"/phases", "/effective_cores"});
  // An older run's part may have its figures without the window's name.
  if (has_any(j, {"/window", "/utilization_cores"})) c.top = cpu_window(r, j, at);
  c.effective_cores = r.number(j, "/effective_cores", at);
  c.effective_cores_source = r.text(j, "/effective_cores_source", at);
  c.phases =
      windows<CpuWindow>(value_at(j, "/phases"), at,
                         [&](const json& w, const std::string& a) { return cpu_window(r, w, a); });
  return c;
}

json to_json(const IoUse& io) {
  json j =
      io.top ? io_window_json(*io.top) : json{{"read_bytes", nullptr}, {"read_mb_per_s", nullptr}};
  if (io.sampled) j["phases"] = windows_json(io.phases, io_window_json);
  return j;
}

IoUse io_from_json(const FigureReader& r, const json& j, const std::string& at) {
  IoUse io;
  io.sampled = value_at(j, "/phases").is_object();
  if (has_any(j, {"/window", "/read_bytes", "/read_mb_per_s"})) io.top = io_window(r, j, at);
  io.phases =
      windows<IoWindow>(value_at(j, "/phases"), at,
                        [&](const json& w, const std::string& a) { return io_window(r, w, a); });
  return io;
}

json to_json(const ErrorTally& e) {
  return {{"count", e.count}, {"samples", nullable(e.samples)}};
}

ErrorTally errors_from_json(const FigureReader& r, const json& j, const std::string& at) {
  return {.count = r.whole<int64_t>(j, "/count", at, 0),
          .samples = r.optional_whole<int64_t>(j, "/samples", at)};
}

json to_json(const GpuFigures& g) {
  const H2DEventCopies& e = g.h2d.cuda_events;
  json b = {
      {"window",
       {{"phase", g.window.phase},
        {"steps", g.window.steps},
        {"ms", g.window.ms},
        {"what", g.window.what}}},
      {"h2d",
       {{"mb_per_s_pinned", nullable(g.h2d.mb_per_s_pinned)},
        {"mb_per_s_pageable", nullable(g.h2d.mb_per_s_pageable)},
        {"bytes", nullable(g.h2d.bytes)},
        {"copies", g.h2d.copies},
        {"cuda_events",
         {{"copies", e.copies},
          {"pinned_copies", e.pinned_copies},
          {"bytes", e.bytes},
          {"mb_per_s", nullable(e.mb_per_s)},
          {"per_copy_mb_per_s", spread_json(e.per_copy_mb_per_s, false)}}}}},
      {"cupti",
       {{"unavailable", g.cupti.unavailable.empty() ? json(nullptr) : json(g.cupti.unavailable)},
        {"dropped_records", g.cupti.dropped_records},
        {"incomplete_records", g.cupti.incomplete_records},
        {"clock_method", g.cupti.clock_method}}},
      {"events", nullptr}};
  write_fields(b, g, kGpuFractions);
  if (const auto& n = g.events) {
    b["events"] = {{"kernels", n->kernels},
                   {"memcpys", n->memcpys},
                   {"memsets", n->memsets},
                   {"synchronizations", n->synchronizations}};
    b["busy_ms"] = g.busy_ms;
    b["idle_ms"] = g.idle_ms;
  }
  return b;
}

GpuFigures gpu_from_json(const FigureReader& r, const json& j, const std::string& at) {
  GpuFigures g;
  g.window = {.phase = r.text(j, "/window/phase", at),
              .steps = r.whole<int64_t>(j, "/window/steps", at, 0),
              .ms = r.number(j, "/window/ms", at).value_or(0),
              .what = r.text(j, "/window/what", at)};
  g.h2d.mb_per_s_pinned = r.number(j, "/h2d/mb_per_s_pinned", at);
  g.h2d.mb_per_s_pageable = r.number(j, "/h2d/mb_per_s_pageable", at);
  g.h2d.bytes = r.optional_whole<uint64_t>(j, "/h2d/bytes", at);
  g.h2d.copies = r.whole<int64_t>(j, "/h2d/copies", at, 0);
  g.h2d.cuda_events = {
      .copies = r.whole<int64_t>(j, "/h2d/cuda_events/copies", at, 0),
      .pinned_copies = r.whole<int64_t>(j, "/h2d/cuda_events/pinned_copies", at, 0),
      .bytes = r.whole<uint64_t>(j, "/h2d/cuda_events/bytes", at, 0),
      .mb_per_s = r.number(j, "/h2d/cuda_events/mb_per_s", at),
      .per_copy_mb_per_s = spread_from_json(r, value_at(j, "/h2d/cuda_events/per_copy_mb_per_s"),
                                            at + "/h2d/cuda_events/per_copy_mb_per_s")};
  g.cupti = {.unavailable = r.text(j, "/cupti/unavailable", at),
             .dropped_records = r.whole<uint64_t>(j, "/cupti/dropped_records", at, 0),
             .incomplete_records = r.whole<uint64_t>(j, "/cupti/incomplete_records", at, 0),
             .clock_method = r.text(j, "/cupti/clock_method", at)};
  read_fields(r, j, at, g, kGpuFractions);
  if (value_at(j, "/events").is_object()) {
    g.events =
        GpuEventCounts{.kernels = r.whole<int64_t>(j, "/events/kernels", at, 0),
                       .memcpys = r.whole<int64_t>(j, "/events/memcpys", at, 0),
                       .memsets = r.whole<int64_t>(j, "/events/memsets", at, 0),
                       .synchronizations = r.whole<int64_t>(j, "/events/synchronizations", at, 0)};
    g.busy_ms = r.number(j, "/busy_ms", at).value_or(0);
    g.idle_ms = r.number(j, "/idle_ms", at).value_or(0);
  }
  return g;
}

}  // namespace rundir
}  // namespace mmprof
