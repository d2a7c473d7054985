#include "measure/resource_summary.hpp"

#include <algorithm>
#include <map>

namespace mmprof {
namespace {

std::optional<double> mb_from_kb(const std::optional<int64_t>& kb) {
  return kb ? std::optional<double>(static_cast<double>(*kb) / 1024.0) : std::nullopt;
}

std::optional<double> mb_from_bytes(const std::optional<int64_t>& bytes) {
  return bytes ? std::optional<double>(static_cast<double>(*bytes) / (1024.0 * 1024.0))
               : std::nullopt;
}

ProcessMemory process_memory(const ProcessPeaks& p) {
  return {.pid = p.pid,
          .role = p.role,
          .rss_peak_mib = mb_from_kb(p.rss_kb),
          .pss_peak_mib = mb_from_kb(p.pss_kb),
          .uss_peak_mib = mb_from_kb(p.uss_kb),
          .swap_peak_mib = mb_from_kb(p.swap_kb),
          .index = p.worker,
          .comm = p.comm,
          .phase = p.first_phase,
          .rank = p.rank,
          .loader = {},
          .main_pid = {}};
}

// Memory peaks cover the whole run (every sample, warm-up and phase boundaries included): a peak
// is a peak whenever it happens. Sampled peaks can miss spikes shorter than the interval.
// `main` is the main process; a user's job with several ranks has one per rank: `main` is
// rank 0's (the lowest), and `mains` lists them all.
MemoryPeaks memory_peaks(const ResourceUsage& r) {
  MemoryPeaks m;
  m.sampled = true;
  m.samples = r.snapshots();
  m.interval_ms = r.facts.interval_ms;
  for (const auto& p : r.processes()) {
    if (p.role == "main") {
      m.mains.push_back(process_memory(p));
      if (!m.main || (p.rank && (!m.main->rank || *p.rank < *m.main->rank)))
        m.main = m.mains.back();
    } else {
      (p.role == "worker" ? m.workers : m.external).push_back(process_memory(p));
    }
  }
  const HostPeaks& h = r.host();
  if (h.cgroup_peak_bytes) {
    m.host_peak_mib = mb_from_bytes(h.cgroup_peak_bytes);
    m.host_peak_source = "cgroup memory.peak (since the cgroup was created)";
  } else if (h.used_peak_kb) {
    m.host_peak_mib = mb_from_kb(h.used_peak_kb);
    m.host_peak_source = "meminfo MemTotal - MemAvailable, sampled";
  }
  m.total_pss_peak_mib = mb_from_kb(r.total_pss_peak_kb());
  m.host_used_peak_mib = mb_from_kb(h.used_peak_kb);
  m.host_total_mib = mb_from_kb(h.mem_total_kb);
  m.page_cache_peak_mib = mb_from_kb(h.cached_peak_kb);
  m.cgroup_memory_current_peak_mib = mb_from_bytes(h.cgroup_current_peak_bytes);
  m.cgroup_memory_peak_mib = mb_from_bytes(h.cgroup_peak_bytes);
  m.shm_used_peak_mib = mb_from_bytes(h.shm_used_peak_bytes);
  m.sampler_error = r.error;
  return m;
}

std::optional<double> per_second(const std::optional<uint64_t>& v, double wall_s, double scale) {
  return v && wall_s > 0 ? std::optional<double>(static_cast<double>(*v) / scale / wall_s)
                         : std::nullopt;
}

// The CPUs the run may use, over the window: everyone's time on them, mmprof's included.
std::optional<HostCpuShare> host_cpu_share(const WindowUse& w, const SamplerFacts& f) {
  if (!w.host_cpu || w.host_cpu->total_s() <= 0) return std::nullopt;
  const HostCpu& h = *w.host_cpu;
  const double total = h.total_s();
  const auto share = [&](const std::optional<double>& v) {
    return v ? std::optional<double>(*v / total) : std::nullopt;
  };
  const double busy_cores = h.busy_s / total * h.cpus;
  return HostCpuShare{
      .cpus = h.cpus,
      .cpu_ids = f.host_cpu_ids,
      .busy_fraction = h.busy_s / total,
      .idle_fraction = h.idle_s / total,
      .busy_cores = busy_cores,
      .others_busy_cores = std::max(0.0, busy_cores - w.cpu_s() / std::max(w.wall_s(), 1e-9)),
      .steal_fraction = share(h.steal_s),
      .iowait_fraction = share(h.iowait_s),
      .source = "/proc/stat, the CPUs of sched_getaffinity"};
}

// PSI is host-wide: the share of the window in which some (all) runnable tasks waited for a CPU.
CpuPressure cpu_pressure(const WindowUse& w) {
  const double wall = w.wall_s();
  CpuPressure p;
  if (!w.pressure_read || wall <= 0) {
    p.reason =
        "/proc/pressure/cpu is absent: a kernel without PSI (before Linux 4.20, or booted with "
        "psi=0)";
    return p;
  }
  const auto share = [&](const std::optional<double>& s) {
    return s ? std::optional<double>(std::min(1.0, *s / wall)) : std::nullopt;
  };
  p.available = true;
  p.some_fraction = share(w.pressure_some_s);
  p.full_fraction = share(w.pressure_full_s);
  p.source = "/proc/pressure/cpu total";
  return p;
}

// Run-queue delay per worker slot (a replaced worker's successor adds to its index) and of the
// main process(es), as fractions of the window's wall time.
std::optional<RunQueueDelay> run_queue_delay(const WindowUse& w) {
  const double wall = w.wall_s();
  std::map<int, double> slots;
  std::optional<double> main;
  for (const auto& p : w.processes) {
    if (!p.run_queue_delay_s) continue;
    if (p.role == "worker") slots[p.worker] += *p.run_queue_delay_s;
    if (p.role == "main") main = std::max(main.value_or(0.0), *p.run_queue_delay_s);
  }
  if (wall <= 0 || (slots.empty() && !main)) return std::nullopt;
  RunQueueDelay d;
  d.source = "/proc/PID/task/*/schedstat run_delay, summed over threads";
  if (!slots.empty()) {
    double sum = 0, max = 0;
    for (const auto& [index, delay] : slots) {
      sum += delay / wall;
      max = std::max(max, delay / wall);
    }
    d.workers_mean_fraction = sum / static_cast<double>(slots.size());
    d.workers_max_fraction = max;
  }
  if (main) d.main_fraction = *main / wall;
  return d;
}

CpuWindow cpu_window(const WindowUse& w, const SamplerFacts& f) {
  const double wall = w.wall_s();
  const auto fraction = [&](const std::optional<double>& v) {
    return v && wall > 0 ? std::optional<double>(*v / wall) : std::nullopt;
  };
  CpuWindow c{.window = w.name,
              .complete = w.closed,
              .wall_s = wall,
              .cpu_s = w.cpu_s(),
              .utilization_cores = fraction(w.cpu_s()),
              .per_process = {},
              .host = host_cpu_share(w, f),
              .pressure = cpu_pressure(w),
              .run_queue_delay = run_queue_delay(w)};
  for (const auto& p : w.processes) {
    c.per_process.push_back({.pid = p.pid,
                             .role = p.role,
                             .index = p.worker,
                             .cpu_s = p.cpu_s,
                             .cores = fraction(p.cpu_s),
                             .run_queue_delay_s = p.run_queue_delay_s,
                             .run_queue_delay_fraction = fraction(p.run_queue_delay_s),
                             .observed_fraction = fraction(p.observed_s)});
  }
  return c;
}

// `samples`: data samples delivered in the window (page faults per sample); 0 when not counted.
IoWindow io_window(const WindowUse& w, int64_t samples) {
  const procfs::ProcIo io = w.io();
  const double wall = w.wall_s();
  const auto per_sample = [&](int64_t n) {
    return samples > 0
               ? std::optional<double>(static_cast<double>(n) / static_cast<double>(samples))
               : std::nullopt;
  };
  return {.window = w.name,
          .complete = w.closed,
          .wall_s = wall,
          .read_bytes = io.read_bytes,
          .write_bytes = io.write_bytes,
          .rchar = io.rchar,
          .wchar = io.wchar,
          .syscr = io.syscr,
          .syscw = io.syscw,
          .read_mb_per_s = per_second(io.read_bytes, wall, 1e6),
          .rchar_mb_per_s = per_second(io.rchar, wall, 1e6),
          .minflt = w.minflt(),
          .majflt = w.majflt(),
          .minflt_per_sample = per_sample(w.minflt()),
          .majflt_per_sample = per_sample(w.majflt())};
}

}  // namespace

void add_resource_parts(Summary& s, const ResourceUsage& r,
                        const std::vector<std::pair<std::string, int64_t>>& windows,
                        const std::string& top_window) {
  CpuUse& cpu = s.cpu;
  IoUse& io = s.io;
  cpu.sampled = io.sampled = true;
  const auto add = [&](const std::string& name, int64_t samples) {
    const auto w = r.window(name);
    cpu.phases[name] = w ? std::optional<CpuWindow>(cpu_window(*w, r.facts)) : std::nullopt;
    io.phases[name] = w ? std::optional<IoWindow>(io_window(*w, samples)) : std::nullopt;
  };
  for (const auto& [name, samples] : windows)
    add(name, samples);
  add("run", 0);
  const std::string top = cpu.phase(top_window) != nullptr ? top_window : "run";
  cpu.top = cpu.phases[top];
  io.top = io.phases[top];
  cpu.effective_cores =
      r.facts.cgroup_cpu_quota_cores
          ? std::min(*r.facts.cgroup_cpu_quota_cores, static_cast<double>(r.facts.affinity_cpus))
          : static_cast<double>(r.facts.affinity_cpus);
  cpu.effective_cores_source = r.facts.cgroup_cpu_quota_cores
                                   ? "cgroup cpu.max, capped by sched_getaffinity"
                                   : "sched_getaffinity";
  s.memory = memory_peaks(r);
}

}  // namespace mmprof
