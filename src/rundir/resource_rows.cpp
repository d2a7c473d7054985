#include "rundir/resource_rows.hpp"

#include "rundir/tables.hpp"

namespace mmprof {
namespace {

std::optional<int64_t> kb(const std::optional<int64_t>& bytes) {
  if (!bytes) return std::nullopt;
  return *bytes / 1024;
}

}  // namespace

std::vector<ResourceRow> resource_rows(const Snapshot& s) {
  std::vector<ResourceRow> rows;
  rows.reserve(s.processes.size());
  for (const auto& p : s.processes) {
    const auto& m = p.mem;
    ResourceRow r;
    r.t_ns = s.t_ns;
    r.pid = p.pid;
    r.role = p.role;
    r.rss_kb = m.rss_kb;
    r.pss_kb = m.pss_kb;
    r.uss_kb = m.uss_kb();
    r.cpu_s = p.cpu_s();
    r.read_bytes = p.io.read_bytes;
    r.minflt = p.minflt;
    r.majflt = p.majflt;
    if (p.worker >= 0) r.worker = p.worker;
    r.swap_kb = m.swap_kb;
    r.pss_anon_kb = m.pss_anon_kb;
    r.pss_file_kb = m.pss_file_kb;
    r.pss_shmem_kb = m.pss_shmem_kb;
    r.write_bytes = p.io.write_bytes;
    r.rchar = p.io.rchar;
    r.wchar = p.io.wchar;
    r.syscr = p.io.syscr;
    r.syscw = p.io.syscw;
    r.utime_s = p.utime_s;
    r.stime_s = p.stime_s;
    r.starttime_ticks = p.starttime_ticks;
    r.phase = s.phase;
    r.label = s.label;
    r.rank = p.rank;
    if (p.sched) r.run_queue_delay_ns = p.sched->wait_ns;
    rows.push_back(std::move(r));
  }
  return rows;
}

HostRow host_row(const Snapshot& s) {
  const auto& m = s.host.mem;
  HostRow h;
  h.t_ns = s.t_ns;
  h.mem_total_kb = m.mem_total_kb;
  h.mem_available_kb = m.mem_available_kb;
  if (m.mem_total_kb && m.mem_available_kb) h.used_kb = *m.mem_total_kb - *m.mem_available_kb;
  h.cached_kb = m.cached_kb;
  h.shmem_kb = m.shmem_kb;
  h.cgroup_memory_current_kb = kb(s.host.cgroup_current_bytes);
  h.cgroup_memory_peak_kb = kb(s.host.cgroup_peak_bytes);
  if (s.host.shm_used_bytes) h.shm_used_kb = static_cast<int64_t>(*s.host.shm_used_bytes / 1024);
  h.phase = s.phase;
  h.label = s.label;
  if (const auto& c = s.host.cpu) {
    h.cpus = c->cpus;
    h.cpu_busy_s = c->busy_s;
    h.cpu_idle_s = c->idle_s;
    h.cpu_iowait_s = c->iowait_s;
    h.cpu_steal_s = c->steal_s;
  }
  if (const auto& p = s.host.cpu_pressure) {
    h.cpu_pressure_some_us = p->some_total_us;
    h.cpu_pressure_full_us = p->full_total_us;
  }
  return h;
}

std::string resources_csv_header() {
  return rundir::csv_header(rundir::resources_schema());
}

std::string resources_csv_rows(const Snapshot& s) {
  std::string out;
  for (const ResourceRow& r : resource_rows(s))
    rundir::append_csv_row(rundir::resources_schema(), r, out);
  return out;
}

std::string host_csv_header() {
  return rundir::csv_header(rundir::host_schema());
}

std::string host_csv_row(const Snapshot& s) {
  std::string out;
  rundir::append_csv_row(rundir::host_schema(), host_row(s), out);
  return out;
}

}  // namespace mmprof
