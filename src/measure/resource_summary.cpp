#include "measure/resource_summary.hpp"

#include <algorithm>
#include <map>

#include "rundir/json_values.hpp"

namespace mmprof {
namespace {

using nlohmann::json;
using rundir::nullable;

json mb_from_kb(const std::optional<int64_t>& kb) {
  return kb ? json(static_cast<double>(*kb) / 1024.0) : json(nullptr);
}

json mb_from_bytes(const std::optional<int64_t>& bytes) {
  return bytes ? json(static_cast<double>(*bytes) / (1024.0 * 1024.0)) : json(nullptr);
}

json process_memory(const ProcessPeaks& p) {
  json j = {{"pid", p.pid},
            {"rss_peak_mib", mb_from_kb(p.rss_kb)},
            {"pss_peak_mib", mb_from_kb(p.pss_kb)},
            {"uss_peak_mib", mb_from_kb(p.uss_kb)},
            {"swap_peak_mib", mb_from_kb(p.swap_kb)}};
  if (p.role == "worker") {
    j["index"] = p.worker;
    j["phase"] = p.first_phase;
  } else if (p.role != "main") {
    j["comm"] = p.comm;
    j["phase"] = p.first_phase;
    if (p.role != "external") j["role"] = p.role;  // a job's agent, or mmprof observing it
  }
  if (p.rank) j["rank"] = *p.rank;
  return j;
}

// Memory peaks cover the whole run (every sample, warm-up and phase boundaries included): a peak
// is a peak whenever it happens. Sampled peaks can miss spikes shorter than the interval.
// `main` is the main process; a user's job with several ranks has one per rank: `main` is
// rank 0's (the lowest), and `mains` lists them all.
json memory_json(const ResourceUsage& r) {
  json main = nullptr, mains = json::array(), workers = json::array(), external = json::array();
  std::optional<int> main_rank;
  for (const auto& p : r.processes()) {
    if (p.role == "main") {
      mains.push_back(process_memory(p));
      if (main.is_null() || (p.rank && (!main_rank || *p.rank < *main_rank))) {
        main = mains.back();
        main_rank = p.rank;
      }
    } else {
      (p.role == "worker" ? workers : external).push_back(process_memory(p));
    }
  }
  const HostPeaks& h = r.host();
  json host_peak = nullptr, source = nullptr;
  if (h.cgroup_peak_bytes) {
    host_peak = mb_from_bytes(h.cgroup_peak_bytes);
    source = "cgroup memory.peak (since the cgroup was created)";
  } else if (h.used_peak_kb) {
    host_peak = mb_from_kb(h.used_peak_kb);
    source = "meminfo MemTotal - MemAvailable, sampled";
  }
  return {{"window", "run"},
          {"samples", r.snapshots()},
          {"interval_ms", r.facts.interval_ms},
          {"main", main},
          {"mains", mains.size() > 1 ? mains : json(nullptr)},
          {"workers", workers},
          {"external", external},
          {"total_pss_peak_mib", mb_from_kb(r.total_pss_peak_kb())},
          {"host_peak_mib", host_peak},
          {"host_peak_source", source},
          {"host_used_peak_mib", mb_from_kb(h.used_peak_kb)},
          {"host_total_mib", mb_from_kb(h.mem_total_kb)},
          {"page_cache_peak_mib", mb_from_kb(h.cached_peak_kb)},
          {"cgroup_memory_current_peak_mib", mb_from_bytes(h.cgroup_current_peak_bytes)},
          {"cgroup_memory_peak_mib", mb_from_bytes(h.cgroup_peak_bytes)},
          {"shm_used_peak_mib", h.shm_used_peak_bytes
                                    ? json(static_cast<double>(*h.shm_used_peak_bytes) / 1048576.0)
                                    : json(nullptr)},
          {"sampler_error", r.error.empty() ? json(nullptr) : json(r.error)}};
}

json per_second(const std::optional<uint64_t>& v, double wall_s, double scale) {
  return v && wall_s > 0 ? json(static_cast<double>(*v) / scale / wall_s) : json(nullptr);
}

// The CPUs the run may use, over the window: everyone's time on them, mmprof's included.
json host_cpu_json(const WindowUse& w, const SamplerFacts& f) {
  if (!w.host_cpu || w.host_cpu->total_s() <= 0) return nullptr;
  const HostCpu& h = *w.host_cpu;
  const double total = h.total_s();
  const auto share = [&](const std::optional<double>& v) {
    return v ? json(*v / total) : json(nullptr);
  };
  const double busy_cores = h.busy_s / total * h.cpus;
  return {{"cpus", h.cpus},
          {"cpu_ids", f.host_cpu_ids},
          {"busy_fraction", h.busy_s / total},
          {"steal_fraction", share(h.steal_s)},
          {"iowait_fraction", share(h.iowait_s)},
          {"idle_fraction", h.idle_s / total},
          {"busy_cores", busy_cores},
          {"others_busy_cores", std::max(0.0, busy_cores - w.cpu_s() / std::max(w.wall_s(), 1e-9))},
          {"source", "/proc/stat, the CPUs of sched_getaffinity"}};
}

// PSI is host-wide: the share of the window in which some (all) runnable tasks waited for a CPU.
json pressure_json(const WindowUse& w) {
  const double wall = w.wall_s();
  if (!w.pressure_read || wall <= 0) {
    return {{"available", false},
            {"reason",
             "/proc/pressure/cpu is absent: a kernel without PSI (before Linux 4.20, or booted "
             "with psi=0)"}};
  }
  const auto share = [&](const std::optional<double>& s) {
    return s ? json(std::min(1.0, *s / wall)) : json(nullptr);
  };
  return {{"available", true},
          {"some_fraction", share(w.pressure_some_s)},
          {"full_fraction", share(w.pressure_full_s)},
          {"source", "/proc/pressure/cpu total"}};
}

// Run-queue delay per worker slot (a replaced worker's successor adds to its index) and of the
// main process(es), as fractions of the window's wall time.
json run_queue_json(const WindowUse& w) {
  const double wall = w.wall_s();
  std::map<int, double> slots;
  std::optional<double> main;
  for (const auto& p : w.processes) {
    if (!p.run_queue_delay_s) continue;
    if (p.role == "worker") slots[p.worker] += *p.run_queue_delay_s;
    if (p.role == "main") main = std::max(main.value_or(0.0), *p.run_queue_delay_s);
  }
  if (wall <= 0 || (slots.empty() && !main)) return nullptr;
  json workers = nullptr, worst = nullptr;
  if (!slots.empty()) {
    double sum = 0, max = 0;
    for (const auto& [index, delay] : slots) {
      sum += delay / wall;
      max = std::max(max, delay / wall);
    }
    workers = sum / static_cast<double>(slots.size());
    worst = max;
  }
  return {{"workers_mean_fraction", workers},
          {"workers_max_fraction", worst},
          {"main_fraction", main ? json(*main / wall) : json(nullptr)},
          {"source", "/proc/PID/task/*/schedstat run_delay, summed over threads"}};
}

json cpu_window_json(const WindowUse& w, const SamplerFacts& f) {
  const double wall = w.wall_s();
  json per_process = json::array();
  for (const auto& p : w.processes) {
    const auto fraction = [&](const std::optional<double>& v) {
      return v && wall > 0 ? json(*v / wall) : json(nullptr);
    };
    json j = {
        {"pid", p.pid},
        {"role", p.role},
        {"cpu_s", p.cpu_s},
        {"cores", wall > 0 ? json(p.cpu_s / wall) : json(nullptr)},
        {"run_queue_delay_s", p.run_queue_delay_s ? json(*p.run_queue_delay_s) : json(nullptr)},
        {"run_queue_delay_fraction", fraction(p.run_queue_delay_s)},
        {"observed_fraction", fraction(p.observed_s)}};
    if (p.role == "worker") j["index"] = p.worker;
    per_process.push_back(std::move(j));
  }
  return {{"window", w.name},
          {"complete", w.closed},
          {"wall_s", wall},
          {"cpu_s", w.cpu_s()},
          {"utilization_cores", wall > 0 ? json(w.cpu_s() / wall) : json(nullptr)},
          {"per_process", per_process},
          {"host", host_cpu_json(w, f)},
          {"pressure", pressure_json(w)},
          {"run_queue_delay", run_queue_json(w)}};
}

// `samples`: data samples delivered in the window (page faults per sample); 0 when not counted.
json io_window_json(const WindowUse& w, int64_t samples) {
  const procfs::ProcIo io = w.io();
  const double wall = w.wall_s();
  const auto per_sample = [&](int64_t n) {
    return samples > 0 ? json(static_cast<double>(n) / static_cast<double>(samples))
                       : json(nullptr);
  };
  return {{"window", w.name},
          {"complete", w.closed},
          {"wall_s", wall},
          {"read_bytes", nullable(io.read_bytes)},
          {"read_mb_per_s", per_second(io.read_bytes, wall, 1e6)},
          {"write_bytes", nullable(io.write_bytes)},
          {"rchar", nullable(io.rchar)},
          {"rchar_mb_per_s", per_second(io.rchar, wall, 1e6)},
          {"wchar", nullable(io.wchar)},
          {"syscr", nullable(io.syscr)},
          {"syscw", nullable(io.syscw)},
          {"minflt", w.minflt()},
          {"majflt", w.majflt()},
          {"minflt_per_sample", per_sample(w.minflt())},
          {"majflt_per_sample", per_sample(w.majflt())}};
}

}  // namespace

void add_resource_parts(Summary& s, const ResourceUsage& r,
                        const std::vector<std::pair<std::string, int64_t>>& windows,
                        const std::string& top_window) {
  json cpu_phases, io_phases;
  for (const auto& [name, samples] : windows) {
    const auto w = r.window(name);
    cpu_phases[name] = w ? cpu_window_json(*w, r.facts) : json(nullptr);
    io_phases[name] = w ? io_window_json(*w, samples) : json(nullptr);
  }
  const auto run = r.window("run");
  cpu_phases["run"] = run ? cpu_window_json(*run, r.facts) : json(nullptr);
  io_phases["run"] = run ? io_window_json(*run, 0) : json(nullptr);
  const std::string top =
      cpu_phases.contains(top_window) && !cpu_phases[top_window].is_null() ? top_window : "run";

  s.memory = memory_json(r);
  json cpu = cpu_phases[top].is_null() ? json::object() : cpu_phases[top];
  cpu["effective_cores"] =
      r.facts.cgroup_cpu_quota_cores
          ? std::min(*r.facts.cgroup_cpu_quota_cores, static_cast<double>(r.facts.affinity_cpus))
          : static_cast<double>(r.facts.affinity_cpus);
  cpu["effective_cores_source"] = r.facts.cgroup_cpu_quota_cores
                                      ? "cgroup cpu.max, capped by sched_getaffinity"
                                      : "sched_getaffinity";
  cpu["phases"] = cpu_phases;
  if (!cpu.contains("utilization_cores")) {
    cpu["utilization_cores"] = nullptr;
    cpu["per_process"] = json::array();
  }
  s.cpu = cpu;
  json io = io_phases[top].is_null() ? json{{"read_bytes", nullptr}, {"read_mb_per_s", nullptr}}
                                     : io_phases[top];
  io["phases"] = io_phases;
  s.io = io;
}

}  // namespace mmprof
