#include "rundir/tables.hpp"

namespace mmprof::rundir {
namespace {

// Milliseconds with four decimals (0.1 us), seconds of CPU with three.
constexpr int kMs = 4;
constexpr int kCpuS = 3;

}  // namespace

const Schema<StepRow>& steps_schema() {
  static const Schema<StepRow> s = {
      column<&StepRow::step>("step", true),
      column<&StepRow::phase>("phase", true),
      column<&StepRow::t_start_ns>("t_start_ns", true),
      column<&StepRow::wait_ms, kMs>("wait_ms", true),
      column<&StepRow::h2d_ms, kMs>("h2d_ms", true),
      column<&StepRow::compute_ms, kMs>("compute_ms", true),
      column<&StepRow::step_ms, kMs>("step_ms", true),
      column<&StepRow::samples>("samples", true),
      column<&StepRow::bytes>("bytes", true),
      column<&StepRow::sync_ms, kMs>("sync_ms"),
  };
  return s;
}

const Schema<StepRow>& steps_schema_with_rank() {
  static const Schema<StepRow> s = [] {
    Schema<StepRow> columns = steps_schema();
    columns.push_back(column<&StepRow::rank>("rank"));
    return columns;
  }();
  return s;
}

namespace {

// DESIGN.md's columns and the additions every run's stages.csv has.
Schema<StageRow> common_stage_columns() {
  return {
      column<&StageRow::key>("key", true),
      column<&StageRow::worker>("worker", true),
      column<&StageRow::read_ms, kMs>("read_ms", true),
      column<&StageRow::decode_ms, kMs>("decode_ms", true),
      column<&StageRow::augment_ms, kMs>("augment_ms", true),
      column<&StageRow::bytes>("bytes", true),
      column<&StageRow::faults>("faults", true),
      column<&StageRow::phase>("phase"),
      column<&StageRow::step>("step"),
      column<&StageRow::modality>("modality"),
      column<&StageRow::majflt>("majflt"),
      column<&StageRow::t_start_ns>("t_start_ns"),
  };
}

Schema<StageRow> with(Schema<StageRow> columns, const Schema<StageRow>& more) {
  columns.insert(columns.end(), more.begin(), more.end());
  return columns;
}

// What the worker's probe found (mmprof's own loader only).
const Schema<StageRow>& source_columns() {
  static const Schema<StageRow> s = {
      column<&StageRow::format>("format"),
      column<&StageRow::source_width_px>("source_width_px"),
      column<&StageRow::source_height_px>("source_height_px"),
      column<&StageRow::decoded_in>("decoded_in"),
  };
  return s;
}

const Schema<StageRow>& getitem_columns() {
  static const Schema<StageRow> s = {column<&StageRow::getitem_ms, kMs>("getitem_ms"),
                                     column<&StageRow::rank>("rank")};
  return s;
}

}  // namespace

const Schema<StageRow>& stages_schema() {
  static const Schema<StageRow> s = with(common_stage_columns(), source_columns());
  return s;
}

const Schema<StageRow>& stages_schema_with_getitem() {
  static const Schema<StageRow> s = with(common_stage_columns(), getitem_columns());
  return s;
}

const Schema<StageRow>& stages_read_schema() {
  static const Schema<StageRow> s =
      with(with(common_stage_columns(), source_columns()), getitem_columns());
  return s;
}

const Schema<ResourceRow>& resources_schema() {
  static const Schema<ResourceRow> s = {
      column<&ResourceRow::t_ns>("t_ns", true),
      column<&ResourceRow::pid>("pid", true),
      column<&ResourceRow::role>("role", true),
      column<&ResourceRow::rss_kb>("rss_kb", true),
      column<&ResourceRow::pss_kb>("pss_kb", true),
      column<&ResourceRow::uss_kb>("uss_kb", true),
      column<&ResourceRow::cpu_s, kCpuS>("cpu_s", true),
      column<&ResourceRow::read_bytes>("read_bytes", true),
      column<&ResourceRow::minflt>("minflt", true),
      column<&ResourceRow::majflt>("majflt", true),
      column<&ResourceRow::worker>("worker"),
      column<&ResourceRow::swap_kb>("swap_kb"),
      column<&ResourceRow::pss_anon_kb>("pss_anon_kb"),
      column<&ResourceRow::pss_file_kb>("pss_file_kb"),
      column<&ResourceRow::pss_shmem_kb>("pss_shmem_kb"),
      column<&ResourceRow::write_bytes>("write_bytes"),
      column<&ResourceRow::rchar>("rchar"),
      column<&ResourceRow::wchar>("wchar"),
      column<&ResourceRow::syscr>("syscr"),
      column<&ResourceRow::syscw>("syscw"),
      column<&ResourceRow::utime_s, kCpuS>("utime_s"),
      column<&ResourceRow::stime_s, kCpuS>("stime_s"),
      column<&ResourceRow::starttime_ticks>("starttime_ticks"),
      column<&ResourceRow::phase>("phase"),
      column<&ResourceRow::label>("label"),
      column<&ResourceRow::rank>("rank"),
      column<&ResourceRow::run_queue_delay_ns>("run_queue_delay_ns"),
  };
  return s;
}

const Schema<HostRow>& host_schema() {
  static const Schema<HostRow> s = {
      column<&HostRow::t_ns>("t_ns", true),
      column<&HostRow::mem_total_kb>("mem_total_kb"),
      column<&HostRow::mem_available_kb>("mem_available_kb"),
      column<&HostRow::used_kb>("used_kb"),
      column<&HostRow::cached_kb>("cached_kb"),
      column<&HostRow::shmem_kb>("shmem_kb"),
      column<&HostRow::cgroup_memory_current_kb>("cgroup_memory_current_kb"),
      column<&HostRow::cgroup_memory_peak_kb>("cgroup_memory_peak_kb"),
      column<&HostRow::shm_used_kb>("shm_used_kb"),
      column<&HostRow::phase>("phase"),
      column<&HostRow::label>("label"),
      column<&HostRow::cpus>("cpus"),
      column<&HostRow::cpu_busy_s, kCpuS>("cpu_busy_s"),
      column<&HostRow::cpu_idle_s, kCpuS>("cpu_idle_s"),
      column<&HostRow::cpu_iowait_s, kCpuS>("cpu_iowait_s"),
      column<&HostRow::cpu_steal_s, kCpuS>("cpu_steal_s"),
      column<&HostRow::cpu_pressure_some_us>("cpu_pressure_some_us"),
      column<&HostRow::cpu_pressure_full_us>("cpu_pressure_full_us"),
  };
  return s;
}

const Schema<DigestRow>& digests_schema() {
  // The digest is 16 hex digits, as content digests are printed everywhere else.
  static const Column<DigestRow> digest = {
      "digest", true,
      [](const DigestRow& r, std::string& out) {
        fmt::format_to(std::back_inserter(out), "{:016x}", r.digest);
      },
      [](std::string_view cell, DigestRow& r) {
        const auto [end, ec] =
            std::from_chars(cell.data(), cell.data() + cell.size(), r.digest, 16);
        if (cell.empty() || ec != std::errc() || end != cell.data() + cell.size())
          throw std::invalid_argument("not a hex digest");
      }};
  static const Schema<DigestRow> s = {
      column<&DigestRow::phase>("phase", true),
      column<&DigestRow::batch_id>("batch_id", true),
      column<&DigestRow::epoch>("epoch", true),
      digest,
  };
  return s;
}

}  // namespace mmprof::rundir
