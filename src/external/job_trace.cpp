#include "external/job_trace.hpp"

#include <fmt/format.h>

#include <map>

#include "util/files.hpp"

namespace mmprof::external {
namespace {

using nlohmann::json;

// Trace Event times are microseconds.
double us(int64_t ns) {
  return static_cast<double>(ns) / 1e3;
}

constexpr int kLoopThread = 1, kPinThread = 2;
// The GPU's tracks: a process id no Linux pid reaches (pid_max is at most 2^22).
constexpr int64_t kGpuPid = 1 << 24;

json span(const std::string& name, const char* cat, int64_t pid, int tid, int64_t start_ns,
          int64_t dur_ns, json args = json::object()) {
  return {{"name", name}, {"cat", cat},         {"ph", "X"},         {"pid", pid},
          {"tid", tid},   {"ts", us(start_ns)}, {"dur", us(dur_ns)}, {"args", std::move(args)}};
}

json meta(const char* what, int64_t pid, int tid, const std::string& name) {
  return {{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

void process_names(const HookRecords& records, std::vector<json>& out) {
  std::map<int, std::string> names;
  for (const ProcRecord& p : records.procs) {
    if (const auto id = identify(records, p.pid)) names[p.pid] = id->label();
  }
  for (const auto& [pid, name] : names) {
    out.push_back(meta("process_name", pid, 0, fmt::format("{} (pid {})", name, pid)));
    out.push_back(meta("thread_name", pid, kLoopThread, "main thread"));
  }
  for (const PinRecord& p : records.pins)
    if (names.count(p.pid) != 0) out.push_back(meta("thread_name", p.pid, kPinThread, p.thread));
}

void loop_events(const HookRecords& records, const JobTimeline& timeline, std::vector<json>& out) {
  for (const RankTimeline& r : timeline.ranks) {
    for (const StepRow& s : r.steps) {
      const auto step_ns = static_cast<int64_t>(s.step_ms * 1e6);
      const auto wait_ns = static_cast<int64_t>(s.wait_ms * 1e6);
      out.push_back(span(fmt::format("step {}", s.step), "step", r.pid, kLoopThread, s.t_start_ns,
                         step_ns, {{"samples", s.samples}, {"wait_ms", s.wait_ms}}));
      out.push_back(span("wait for data", "wait", r.pid, kLoopThread, s.t_start_ns, wait_ns));
    }
  }
  for (const EpochRecord& e : records.epochs) {
    out.push_back(span(fmt::format("iter(loader {}) epoch {}", e.loader, e.epoch), "iterator",
                       e.pid, kLoopThread, e.ns, e.ready_ns - e.ns,
                       {{"workers", e.worker_pids}, {"reused", e.reused}}));
  }
  for (const PinRecord& p : records.pins) {
    out.push_back(span("pin", "pin", p.pid, kPinThread, p.start_ns, p.end_ns - p.start_ns,
                       {{"loader", p.loader}}));
  }
  for (const FetchRecord& f : records.fetches) {
    out.push_back(span("fetch", "fetch", f.process, kLoopThread, f.start_ns, f.end_ns - f.start_ns,
                       {{"loader", f.loader},
                        {"size", f.size ? json(*f.size) : json(nullptr)},
                        {"collate_ms", static_cast<double>(f.collate_ns) / 1e6}}));
  }
}

void memory_counters(const std::vector<ResourceRow>& resources, std::vector<json>& out) {
  for (const ResourceRow& r : resources) {
    const std::optional<int64_t> kb = r.pss_kb ? r.pss_kb : r.rss_kb;
    if (!kb) continue;
    out.push_back({{"name", r.pss_kb ? "PSS MiB" : "RSS MiB"},
                   {"ph", "C"},
                   {"pid", r.pid},
                   {"ts", us(r.t_ns)},
                   {"args", {{"MiB", static_cast<double>(*kb) / 1024.0}}}});
  }
}

void gpu_spans(const std::vector<gpu::GpuEvent>& events, std::vector<json>& out) {
  if (events.empty()) return;
  out.push_back(meta("process_name", kGpuPid, 0, "GPU (CUPTI)"));
  for (const gpu::GpuEvent& e : events) {
    out.push_back(span(e.name.empty() ? gpu::to_string(e.kind) : e.name, gpu::to_string(e.kind),
                       kGpuPid + e.device, static_cast<int>(e.stream), e.start_ns, e.duration_ns(),
                       {{"bytes", e.bytes}, {"copy", gpu::to_string(e.copy)}}));
  }
}

}  // namespace

JobTraceCounts write_job_trace(const std::filesystem::path& file, const HookRecords& records,
                               const JobTimeline& timeline,
                               const std::vector<ResourceRow>& resources,
                               const std::vector<gpu::GpuEvent>& gpu_events, int64_t max_events) {
  std::vector<json> events;
  process_names(records, events);
  loop_events(records, timeline, events);
  memory_counters(resources, events);
  gpu_spans(gpu_events, events);
  JobTraceCounts counts;
  // Per-sample events are the many: they are what the cap cuts.
  for (const GetitemRecord& g : records.getitems) {
    if (static_cast<int64_t>(events.size()) >= max_events) {
      ++counts.dropped;
      continue;
    }
    events.push_back(span(fmt::format("getitem {}", g.index), "getitem", g.pid, kLoopThread,
                          g.start_ns, g.dur_ns, {{"loader", g.loader}, {"every", g.every}}));
  }
  counts.events = events.size();
  const json doc = {{"traceEvents", events},
                    {"displayTimeUnit", "ms"},
                    {"otherData",
                     {{"source", "mmprof trace of a user's job (external hook records)"},
                      {"clock", "CLOCK_MONOTONIC"},
                      {"dropped_events", counts.dropped}}}};
  write_json_atomic(file, doc);
  return counts;
}

}  // namespace mmprof::external
