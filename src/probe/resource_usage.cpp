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

}  // namespace

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
  if (first) w.t_begin_ns = s.t_ns;
  w.pending = false;
  w.t_end_ns = s.t_ns;
  w.snapshots++;
  for (const auto& p : s.processes) {
    const ProcessKey key{p.pid, p.starttime_ticks};
    auto it = w.tracks.find(key);
    if (it == w.tracks.end()) {
      Track t{p, p};
      if (!first) {
        // Born inside the window: the kernel starts a new process's counters at zero (fork
        // resets utime, faults and I/O accounting), so all it has used belongs to the window.
        t.first.utime_s = t.first.stime_s = 0;
        t.first.minflt = t.first.majflt = 0;
        t.first.io = procfs::ProcIo{0, 0, 0, 0, 0, 0};
      }
      it = w.tracks.emplace(key, std::move(t)).first;
      w.order.push_back(key);
    }
    ProcessSample& last = it->second.last;
    procfs::ProcIo io = last.io;
    keep_readable(io, p.io);
    last = p;
    last.io = io;
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
  for (const auto& key : w.order) {
    const Track& t = w.tracks.at(key);
    ProcessUse u;
    u.pid = t.last.pid;
    u.role = t.last.role;
    u.worker = t.last.worker;
    u.cpu_s = std::max(0.0, t.last.cpu_s() - t.first.cpu_s());
    u.minflt = std::max<int64_t>(0, t.last.minflt - t.first.minflt);
    u.majflt = std::max<int64_t>(0, t.last.majflt - t.first.majflt);
    u.io.rchar = delta(t.first.io.rchar, t.last.io.rchar);
    u.io.wchar = delta(t.first.io.wchar, t.last.io.wchar);
    u.io.syscr = delta(t.first.io.syscr, t.last.io.syscr);
    u.io.syscw = delta(t.first.io.syscw, t.last.io.syscw);
    u.io.read_bytes = delta(t.first.io.read_bytes, t.last.io.read_bytes);
    u.io.write_bytes = delta(t.first.io.write_bytes, t.last.io.write_bytes);
    use.processes.push_back(std::move(u));
  }
  return use;
}

}  // namespace mmprof
