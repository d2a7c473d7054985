#include "trace/trace_writer.hpp"

#include <fmt/format.h>

#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "trace/trace_arena.hpp"
#include "trace/tracer.hpp"
#include "util/version.hpp"

namespace mmprof::trace {
namespace {

// GPU tracks get pids and tids no Linux process can have (pid_max is at most 2^22).
constexpr int64_t kGpuPidBase = int64_t{1} << 30;
constexpr size_t kChunkBytes = 1 << 20;

std::string json_string(std::string_view s) {
  // Keys come from file names: invalid UTF-8 is replaced, not allowed to break the document.
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The data path's spans (samples, batches, the consumer's waits and pin copies) share one
// category, as the two ends of an arrow must for DevTools.
constexpr const char* kLoaderCategory = "loader";

struct Track {
  int64_t pid = 0, tid = 0;
};

struct FlowEnd {
  int64_t t = 0;
  Track track;
};

// A batch's identity across the run: batch ids restart with every Loader (generation).
using BatchKey = std::pair<uint32_t, int64_t>;

BatchKey key_of(const TraceRecord& r) {
  return {r.generation, r.a};
}

uint64_t batch_flow_id(const TraceRecord& r) {
  return (static_cast<uint64_t>(r.generation) << 40) | static_cast<uint64_t>(r.a);
}

const char* stage_of_failure(int64_t failed) {
  static const char* const names[] = {"read", "decode", "augment", "collate"};
  return failed >= 1 && failed <= 4 ? names[failed - 1] : "unknown";
}

class Writer {
 public:
  Writer(const TraceSource& src, const ChunkSink& sink) : src_(src), sink_(sink) {}

  TraceCounts write() {
    index_batches();
    index_loader_phases();
    out_ += "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
    name_process(src_.main_pid, "mmprof main");
    name_thread(src_.main_pid, src_.main_tid, "main (consumer)");
    main_region();
    for (uint32_t r = kFirstWorkerRegion; r < src_.regions.size(); ++r)
      worker_region(static_cast<int>(r - kFirstWorkerRegion), src_.regions[r]);
    if (src_.regions.size() > kSamplerRegion) sampler_region(src_.regions[kSamplerRegion]);
    gpu_events();
    counts_.dropped = src_.dropped;
    fmt::format_to(std::back_inserter(out_),
                   "\n],\"otherData\":{{\"schema\":\"mmprof.trace/1\",\"mmprof_version\":{},"
                   "\"clock\":\"CLOCK_MONOTONIC\",\"origin_monotonic_ns\":{},"
                   "\"ts_unit\":\"microseconds since origin_monotonic_ns\",\"max_events\":{},"
                   "\"sample_every\":{},\"recorded_events\":{},\"dropped_events\":{},"
                   "\"flows\":{},\"gpu_events\":{}}}}}\n",
                   json_string(version()), src_.origin_ns, src_.max_events, src_.sample_every,
                   counts_.recorded, counts_.dropped, counts_.flows, counts_.gpu_events);
    sink_(out_);
    return counts_;
  }

 private:
  // The span of every batch the consumer took, on its worker's track: the batch -> consumer
  // arrows leave from it, so none is drawn without its other end (a capped trace, a batch never
  // consumed). A batch filled twice (retried after its worker was given up on) keeps its first.
  void index_batches() {
    if (src_.regions.empty()) return;
    std::set<BatchKey> consumed;
    for (const auto& rec : src_.regions[kMainRegion]) {
      if (TraceArena::published(rec) && rec.name == EventName::consumed)
        consumed.insert(key_of(rec));
    }
    for (uint32_t r = kFirstWorkerRegion; r < src_.regions.size(); ++r) {
      std::optional<Track> track;  // the worker's, between its start and stop records
      for (const auto& rec : src_.regions[r]) {
        if (!TraceArena::published(rec)) continue;
        if (rec.name == EventName::worker_start) track = Track{rec.a, rec.b};
        if (rec.name == EventName::worker_stop) track.reset();
        if (rec.name == EventName::batch && track && consumed.count(key_of(rec)) != 0)
          batch_spans_.emplace(key_of(rec), FlowEnd{rec.t_ns, *track});
      }
    }
  }

  // Which phase each loader (generation) served: the phase whose mark precedes the first batch the
  // consumer took from it. The loader's own start can precede its phase's mark (the end-to-end
  // loader forks before the compute phase runs), so the start does not tell.
  void index_loader_phases() {
    if (src_.regions.empty()) return;
    int64_t phase = -1;
    for (const auto& rec : src_.regions[kMainRegion]) {
      if (!TraceArena::published(rec)) continue;
      if (rec.name == EventName::phase) phase = rec.a;
      if (rec.name == EventName::consumed && phase >= 0)
        loader_phase_.emplace(rec.generation, phase_name(phase));
    }
  }

  // "pipeline · worker 0": every phase forks its own workers, so the worker number alone names
  // two tracks. A loader whose batches were never taken is named by its number; a worker started
  // again in the same loader (respawned after a crash) gets "#2", "#3", ...
  std::string worker_track_name(int worker, uint32_t generation) {
    const auto it = loader_phase_.find(generation);
    const std::string name = it != loader_phase_.end()
                                 ? fmt::format("{} \u00b7 worker {}", it->second, worker)
                                 : fmt::format("loader {} \u00b7 worker {}", generation, worker);
    const int n = ++worker_names_[name];
    return n == 1 ? name : fmt::format("{} #{}", name, n);
  }

  void begin_event() {
    if (counts_.events++ > 0) out_ += ",\n";
    if (out_.size() >= kChunkBytes) {
      sink_(out_);
      out_.clear();
    }
  }

  std::string ts(int64_t t_ns) const { return format_us(t_ns, src_.origin_ns); }

  void name_process(int64_t pid, const std::string& name) {
    if (!named_processes_.insert(pid).second) return;
    begin_event();
    fmt::format_to(std::back_inserter(out_),
                   "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":{},"
                   "\"args\":{{\"name\":{}}}}}",
                   pid, pid, json_string(name));
  }

  void name_thread(int64_t pid, int64_t tid, const std::string& name) {
    if (!named_threads_.insert(tid).second) return;
    begin_event();
    fmt::format_to(std::back_inserter(out_),
                   "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},"
                   "\"args\":{{\"name\":{}}}}}",
                   pid, tid, json_string(name));
  }

  // A complete event; `args` is the inside of the args object.
  void complete(const char* name, const char* cat, int64_t t0, int64_t dur, int64_t pid,
                int64_t tid, const std::string& args) {
    begin_event();
    fmt::format_to(std::back_inserter(out_),
                   "{{\"ph\":\"X\",\"name\":{},\"cat\":\"{}\",\"ts\":{},\"dur\":{},\"pid\":{},"
                   "\"tid\":{},\"args\":{{{}}}}}",
                   json_string(name), cat, ts(t0), format_us(dur, 0), pid, tid, args);
  }

  // A process-scoped instant (drawn on the process's own track, above its threads).
  void instant(const std::string& name, int64_t t, const std::string& args) {
    begin_event();
    fmt::format_to(std::back_inserter(out_),
                   "{{\"ph\":\"i\",\"s\":\"p\",\"name\":{},\"cat\":\"run\",\"ts\":{},\"pid\":{},"
                   "\"tid\":{},\"args\":{{{}}}}}",
                   json_string(name), ts(t), src_.main_pid, src_.main_tid, args);
  }

  void counter(const char* name, int64_t t, int64_t pid, const std::string& args) {
    begin_event();
    fmt::format_to(
        std::back_inserter(out_),
        "{{\"ph\":\"C\",\"name\":\"{}\",\"ts\":{},\"pid\":{},\"tid\":{},\"args\":{{{}}}}}", name,
        ts(t), pid, pid, args);
  }

  // An arrow between two spans (flow events "s" and "f", one id). Each end sits at the first
  // nanosecond of its span, in the span's category: Chrome DevTools binds a flow event to the
  // slice with the same ts, pid, tid and cat, and Perfetto to the innermost slice open at ts (it
  // opens the spans that start at ts before it reads the other events at ts; bp "e": the end binds
  // to that slice, not to the next one). Both viewers need the start first, in time and in the
  // file, so the earlier span gets the "s".
  void arrow(const char* name, uint64_t id, FlowEnd a, FlowEnd b) {
    if (b.t < a.t) std::swap(a, b);
    ++counts_.flows;
    flow_event('s', name, id, a);
    flow_event('f', name, id, b);
  }

  void flow_event(char ph, const char* name, uint64_t id, const FlowEnd& at) {
    begin_event();
    fmt::format_to(std::back_inserter(out_),
                   "{{\"ph\":\"{}\",\"name\":\"{}\",\"cat\":\"{}\",\"id\":{},\"ts\":{},"
                   "\"pid\":{},\"tid\":{},\"bp\":\"e\"}}",
                   ph, name, kLoaderCategory, id, ts(at.t), at.track.pid, at.track.tid);
  }

  void main_region() {
    if (src_.regions.empty()) return;
    const int64_t pid = src_.main_pid, tid = src_.main_tid;
    std::set<std::pair<uint32_t, int64_t>> epochs;
    for (const auto& r : src_.regions[kMainRegion]) {
      if (!TraceArena::published(r)) continue;
      ++counts_.recorded;
      const std::string batch_args = fmt::format("\"batch\":{},\"loader\":{}", r.a, r.generation);
      switch (r.name) {
        case EventName::loader_start:
          instant("loader start", r.t_ns,
                  fmt::format("\"workers\":{},\"loader\":{}", r.a, r.generation));
          break;
        case EventName::wait:
          complete("wait", kLoaderCategory, r.t_ns, r.dur_ns, pid, tid, batch_args);
          // From the batch's span on its worker to the wait that received it.
          if (const auto it = batch_spans_.find(key_of(r)); it != batch_spans_.end()) {
            arrow("batch", batch_flow_id(r), it->second, FlowEnd{r.t_ns, {pid, tid}});
            batch_spans_.erase(it);
          }
          break;
        case EventName::pin:
          complete("pin", kLoaderCategory, r.t_ns, r.dur_ns, pid, tid, batch_args);
          break;
        case EventName::consumed:
          if (epochs.insert({r.generation, r.b}).second) {
            instant(fmt::format("epoch {}", r.b), r.t_ns,
                    fmt::format("\"epoch\":{},\"loader\":{}", r.b, r.generation));
          }
          break;
        case EventName::queue:
          counter("queue", r.t_ns, pid, fmt::format("\"ready\":{},\"in_flight\":{}", r.a, r.b));
          break;
        case EventName::compute:
        case EventName::sync:
          complete(r.name == EventName::sync ? "sync" : "compute", "step", r.t_ns, r.dur_ns, pid,
                   tid, fmt::format("\"phase\":\"{}\"", phase_name(r.a)));
          break;
        case EventName::step:
          complete("step", "step", r.t_ns, r.dur_ns, pid, tid,
                   fmt::format("\"phase\":\"{}\",\"step\":{},\"warmup\":{},\"samples\":{}",
                               phase_name(r.a), r.b, r.c != 0, r.d));
          break;
        case EventName::phase:
        case EventName::window_begin:
        case EventName::window_end:
          instant(fmt::format("{} {}", event_name(r.name), phase_name(r.a)), r.t_ns,
                  fmt::format("\"phase\":\"{}\"", phase_name(r.a)));
          break;
        default:
          --counts_.recorded;  // not a main-thread event: nothing is written for it
          break;
      }
    }
  }

  // A worker's lifetime: from its start record to its stop record (or, when it was killed, to
  // the end of its last event), drawn as a span enclosing everything it did.
  struct Life {
    bool open = false;
    int64_t pid = 0, tid = 0, t0 = 0, last_end = 0;
  };

  void close_life(int worker, Life& life, bool exited) {
    if (!life.open) return;
    complete("worker", "lifetime", life.t0, life.last_end - life.t0, life.pid, life.tid,
             fmt::format("\"worker\":{},\"pid\":{},\"exited\":{}", worker, life.pid, exited));
    life.open = false;
  }

  void worker_region(int worker, std::span<const TraceRecord> records) {
    Life life;
    // The collate spans of the batch being filled: its arrows to them wait for the batch's
    // record, so none is written half.
    std::vector<std::pair<BatchKey, int64_t>> pending;
    for (const auto& r : records) {
      if (!TraceArena::published(r)) continue;
      ++counts_.recorded;
      if (r.name == EventName::worker_start) {
        close_life(worker, life, false);
        life = {true, r.a, r.b, r.t_ns, r.t_ns};
        const std::string name = worker_track_name(worker, r.generation);
        if (r.a != src_.main_pid) name_process(r.a, name);
        if (r.b != src_.main_tid) name_thread(r.a, r.b, name);
        pending.clear();
        continue;
      }
      if (!life.open) {
        --counts_.recorded;  // a record without its worker's start: no track to draw it on
        continue;
      }
      life.last_end = std::max(life.last_end, r.t_ns + r.dur_ns);
      if (r.name == EventName::worker_stop) {
        close_life(worker, life, true);
        continue;
      }
      worker_event(r, life, pending);
    }
    close_life(worker, life, false);
  }

  void worker_event(const TraceRecord& r, const Life& life,
                    std::vector<std::pair<BatchKey, int64_t>>& pending) {
    switch (r.name) {
      case EventName::read:
      case EventName::decode:
      case EventName::augment:
      case EventName::collate: {
        std::string args = fmt::format(
            "\"batch\":{},\"loader\":{},\"sample\":{},\"key\":{}", r.a, r.generation, r.b,
            json_string(src_.sample_key ? src_.sample_key(static_cast<uint32_t>(r.b)) : ""));
        if (r.c != 0) args += fmt::format(",\"failed\":\"{}\"", stage_of_failure(r.c));
        complete(event_name(r.name), kLoaderCategory, r.t_ns, r.dur_ns, life.pid, life.tid, args);
        if (r.name == EventName::collate) pending.emplace_back(key_of(r), r.t_ns);
        break;
      }
      case EventName::batch: {
        complete("batch", kLoaderCategory, r.t_ns, r.dur_ns, life.pid, life.tid,
                 fmt::format("\"batch\":{},\"loader\":{},\"epoch\":{},\"samples\":{},\"failed\":{}",
                             r.a, r.generation, r.b, r.c, r.d));
        // From the batch to each of its samples (their collate spans).
        const Track track{life.pid, life.tid};
        for (const auto& [key, t_collate] : pending) {
          if (key != key_of(r)) continue;  // its batch's record was lost
          arrow("sample", ++sample_arrows_, FlowEnd{r.t_ns, track}, FlowEnd{t_collate, track});
        }
        pending.clear();
        break;
      }
      default:
        --counts_.recorded;
        break;
    }
  }

  void sampler_region(std::span<const TraceRecord> records) {
    for (const auto& r : records) {
      if (!TraceArena::published(r) || r.name != EventName::memory) continue;
      ++counts_.recorded;
      std::string args = fmt::format("\"rss_mib\":{:.3f}", static_cast<double>(r.b) / 1024);
      if (r.c >= 0) args += fmt::format(",\"pss_mib\":{:.3f}", static_cast<double>(r.c) / 1024);
      counter("memory", r.t_ns, r.a, args);
    }
  }

  void gpu_events() {
    for (const auto& e : src_.gpu_events) {
      const int64_t pid = kGpuPidBase + e.device;
      const int64_t tid = pid + 1 + e.stream;
      name_process(pid, fmt::format("GPU {}", e.device));
      name_thread(pid, tid, fmt::format("GPU {} stream {}", e.device, e.stream));
      std::string args = fmt::format("\"correlation\":{}", e.correlation);
      if (e.kind == gpu::GpuEventKind::memcpy || e.kind == gpu::GpuEventKind::memset) {
        args += fmt::format(",\"bytes\":{}", e.bytes);
      }
      if (e.kind == gpu::GpuEventKind::memcpy) {
        args +=
            fmt::format(",\"copy\":\"{}\",\"pinned\":{}", gpu::to_string(e.copy), e.pinned_host);
      }
      complete(e.name.empty() ? gpu::to_string(e.kind) : e.name.c_str(), gpu::to_string(e.kind),
               e.start_ns, e.duration_ns(), pid, tid, args);
      ++counts_.gpu_events;
    }
  }

  const TraceSource& src_;
  const ChunkSink& sink_;
  std::string out_;
  TraceCounts counts_;
  std::map<BatchKey, FlowEnd> batch_spans_;  // batches consumed, not yet given their arrow
  uint64_t sample_arrows_ = 0;               // the ids of the batch -> sample arrows
  std::set<int64_t> named_processes_, named_threads_;
  std::map<uint32_t, std::string> loader_phase_;  // generation -> phase name
  std::map<std::string, int> worker_names_;       // track names given, with how often
};

}  // namespace

std::string format_us(int64_t t_ns, int64_t origin_ns) {
  const int64_t rel = t_ns - origin_ns;
  const uint64_t mag = rel < 0 ? static_cast<uint64_t>(-rel) : static_cast<uint64_t>(rel);
  return fmt::format("{}{}.{:03}", rel < 0 ? "-" : "", mag / 1000, mag % 1000);
}

TraceCounts write_chrome_trace(const TraceSource& source, const ChunkSink& sink) {
  return Writer(source, sink).write();
}

}  // namespace mmprof::trace
