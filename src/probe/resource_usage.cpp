#include "probe/resource_usage.hpp"

#include <algorithm>

namespace mmprof {
namespace {

template <typename T>
void raise(std::optional<T>& peak, const std::optional<T>& value) {
  if (value && (!peak || *value > *peak)) peak = value;
}

// Keeps the last readable value of each counter: a process that exits between reading its stat
// and its io file keeps what was read before.
void keep_readable(procfs::ProcIo& last, const procfs::ProcIo& now) {
  for (auto field :
       {&procfs::ProcIo::rchar, &procfs::ProcIo::wchar, &procfs::ProcIo::syscr,
        &procfs::ProcIo::syscw, &procfs::ProcIo::read_bytes, &procfs::ProcIo::write_bytes}) {
    if (now.*field) last.*field = now.*field;
  }
}

std::optional<uint64_t> delta(const std::optional<uint64_t>& a, const std::optional<uint64_t>& b) {
  if (!a || !b) return std::nullopt;
  return *b >= *a ? *b - *a : 0;
}

std::optional<double> delta(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b) return std::nullopt;
  return std::max(0.0, *b - *a);
}

std::optional<HostCpu> cpu_delta(const std::optional<HostCpu>& a, const std::optional<HostCpu>& b) {
  if (!a || !b || a->cpus != b->cpus) return std::nullopt;
  HostCpu d;
  d.cpus = b->cpus;
  d.busy_s = std::max(0.0, b->busy_s - a->busy_s);
  d.idle_s = std::max(0.0, b->idle_s - a->idle_s);
  d.iowait_s = delta(a->iowait_s, b->iowait_s);
  d.steal_s = delta(a->steal_s, b->steal_s);
  return d;
}

// PSI totals are in microseconds.
std::optional<double> pressure_s(const std::optional<uint64_t>& a,
                                 const std::optional<uint64_t>& b) {
  const auto d = delta(a, b);
  return d ? std::optional(static_cast<double>(*d) / 1e6) : std::nullopt;
}

}  // namespace

std::optional<HostCpu> sum_cpus(const std::map<int, procfs::CpuTimes>& times,
                                const std::vector<int>& cpu_ids, double ticks_per_s) {
  procfs::CpuTimes sum;
  int cpus = 0;
  for (const int id : cpu_ids) {
    if (const auto it = times.find(id); it != times.end()) {
      sum += it->second;
      ++cpus;
    }
  }
  if (cpus == 0) {
    const auto all = times.find(-1);
    if (all == times.end()) return std::nullopt;
    sum = all->second;
    cpus = static_cast<int>(
        std::count_if(times.begin(), times.end(), [](const auto& t) { return t.first >= 0; }));
  }
  const auto s = [&](uint64_t ticks) { return static_cast<double>(ticks) / ticks_per_s; };
  HostCpu h;
  h.cpus = std::max(cpus, 1);
  h.busy_s = s(sum.busy());
  h.idle_s = s(sum.idle);
  if (sum.has_iowait()) h.iowait_s = s(sum.iowait);
  if (sum.has_steal()) h.steal_s = s(sum.steal);
  return h;
}

double WindowUse::cpu_s() const {
  double s = 0;
  for (const auto& p : processes)
    s += p.cpu_s;
  return s;
}

int64_t WindowUse::minflt() const {
  int64_t n = 0;
  for (const auto& p : processes)
    n += p.minflt;
  return n;
}

int64_t WindowUse::majflt() const {
  int64_t n = 0;
  for (const auto& p : processes)
    n += p.majflt;
  return n;
}

procfs::ProcIo WindowUse::io() const {
  procfs::ProcIo sum;
  for (const auto& p : processes) {
    for (auto field :
         {&procfs::ProcIo::rchar, &procfs::ProcIo::wchar, &procfs::ProcIo::syscr,
          &procfs::ProcIo::syscw, &procfs::ProcIo::read_bytes, &procfs::ProcIo::write_bytes}) {
      if (p.io.*field) sum.*field = (sum.*field).value_or(0) + *(p.io.*field);
    }
  }
  return sum;
}

void ResourceUsage::begin_window(const std::string& name) {
  windows_[name] = Window{};
}

void ResourceUsage::end_window(const std::string& name) {
  const auto it = windows_.find(name);
  if (it != windows_.end() && !it->second.pending) it->second.closed = true;
}

void ResourceUsage::add(const Snapshot& s) {
  ++snapshots_;
  add_peaks(s);
  for (auto& [name, w] : windows_) {
    if (!w.closed) add_to_window(w, s);
  }
}

void ResourceUsage::add_peaks(const Snapshot& s) {
  std::optional<int64_t> total_pss;
  for (const auto& p : s.processes) {
    const ProcessKey key{p.pid, p.starttime_ticks};
    auto [it, inserted] = peak_index_.emplace(key, peaks_.size());
    if (inserted) {
      peaks_.push_back(
          ProcessPeaks{p.pid, p.role, p.comm, p.worker, p.rank, s.phase, {}, {}, {}, {}});
    }
    ProcessPeaks& peak = peaks_[it->second];
    // The role map may learn of a worker after its first sample: the latest role wins.
    peak.role = p.role;
    peak.worker = p.worker;
    peak.rank = p.rank;
    raise(peak.rss_kb, p.mem.rss_kb);
    raise(peak.pss_kb, p.mem.pss_kb);
    raise(peak.uss_kb, p.mem.uss_kb());
    raise(peak.swap_kb, p.mem.swap_kb);
    // mmprof observing a user's job is not part of what the job holds.
    if (p.mem.pss_kb && p.role != kObserverRole) total_pss = total_pss.value_or(0) + *p.mem.pss_kb;
  }
  raise(total_pss_peak_kb_, total_pss);
  const auto& m = s.host.mem;
  if (m.mem_total_kb) host_.mem_total_kb = m.mem_total_kb;
  if (m.mem_total_kb && m.mem_available_kb) {
    raise(host_.used_peak_kb, std::optional<int64_t>(*m.mem_total_kb - *m.mem_available_kb));
  }
  raise(host_.cached_peak_kb, m.cached_kb);
  raise(host_.cgroup_current_peak_bytes, s.host.cgroup_current_bytes);
  if (s.host.cgroup_peak_bytes) host_.cgroup_peak_bytes = s.host.cgroup_peak_bytes;
  raise(host_.shm_used_peak_bytes, s.host.shm_used_bytes);
}

void ResourceUsage::add_to_window(Window& w, const Snapshot& s) {
  const bool first = w.pending;
  if (first) {
    w.t_begin_ns = s.t_ns;
    w.host_first = s.host;
  }
  w.host_last = s.host;
  w.pending = false;
  w.t_end_ns = s.t_ns;
  w.snapshots++;
  for (const auto& p : s.processes) {
    const ProcessKey key{p.pid, p.starttime_ticks};
    auto it = w.tracks.find(key);
    if (it == w.tracks.end()) {
      Track t{p, p, s.t_ns, s.t_ns};
      if (!first) {
        // Born inside the window: the kernel starts a new process's counters at zero (fork
        // resets utime, faults and I/O accounting), so all it has used belongs to the window.
        t.first.utime_s = t.first.stime_s = 0;
        t.first.minflt = t.first.majflt = 0;
        t.first.io = procfs::ProcIo{0, 0, 0, 0, 0, 0};
        if (t.first.sched) t.first.sched = procfs::SchedStat{};
      }
      it = w.tracks.emplace(key, std::move(t)).first;
      w.order.push_back(key);
    }
    it->second.last_ns = s.t_ns;
    ProcessSample& last = it->second.last;
    procfs::ProcIo io = last.io;
    keep_readable(io, p.io);
    const auto sched = p.sched ? p.sched : last.sched;
    last = p;
    last.io = io;
    last.sched = sched;
  }
}

std::optional<WindowUse> ResourceUsage::window(const std::string& name) const {
  const auto it = windows_.find(name);
  if (it == windows_.end() || it->second.pending) return std::nullopt;
  const Window& w = it->second;
  WindowUse use;
  use.name = name;
  use.closed = w.closed;
  use.t_begin_ns = w.t_begin_ns;
  use.t_end_ns = w.t_end_ns;
  use.snapshots = w.snapshots;
  use.host_cpu = cpu_delta(w.host_first.cpu, w.host_last.cpu);
  const auto& p0 = w.host_first.cpu_pressure;
  const auto& p1 = w.host_last.cpu_pressure;
  use.pressure_read = p0 && p1;
  if (use.pressure_read) {
    use.pressure_some_s = pressure_s(p0->some_total_us, p1->some_total_us);
    use.pressure_full_s = pressure_s(p0->full_total_us, p1->full_total_us);
  }
  for (const auto& key : w.order) {
    const Track& t = w.tracks.at(key);
    ProcessUse u;
    u.pid = t.last.pid;
    u.role = t.last.role;
    u.worker = t.last.worker;
    u.cpu_s = std::max(0.0, t.last.cpu_s() - t.first.cpu_s());
    u.observed_s = static_cast<double>(t.last_ns - t.first_ns) / 1e9;
    u.minflt = std::max<int64_t>(0, t.last.minflt - t.first.minflt);
    u.majflt = std::max<int64_t>(0, t.last.majflt - t.first.majflt);
    u.io.rchar = delta(t.first.io.rchar, t.last.io.rchar);
    u.io.wchar = delta(t.first.io.wchar, t.last.io.wchar);
    u.io.syscr = delta(t.first.io.syscr, t.last.io.syscr);
    u.io.syscw = delta(t.first.io.syscw, t.last.io.syscw);
    u.io.read_bytes = delta(t.first.io.read_bytes, t.last.io.read_bytes);
    u.io.write_bytes = delta(t.first.io.write_bytes, t.last.io.write_bytes);
    if (t.first.sched && t.last.sched) {
      // A thread that ended inside the window takes its delay out of the sum: never below 0.
      const uint64_t a = t.first.sched->wait_ns, b = t.last.sched->wait_ns;
      u.run_queue_delay_s = b >= a ? static_cast<double>(b - a) / 1e9 : 0.0;
    }
    use.processes.push_back(std::move(u));
  }
  return use;
}

}  // namespace mmprof
