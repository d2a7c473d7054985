#pragma once
// The run directory: the only interface between mmprof's subcommands, and a stable format for
// anyone reading a run from C++ (link mmprof::rundir; docs/architecture.md, "The run directory").
//
//   RUN/manifest.json  "mmprof.manifest/2"  what ran, with which configuration, on what machine
//   RUN/summary.json   "mmprof.summary/2"   the aggregate figures
//   RUN/steps.csv      one row per step     RUN/stages.csv     one row per sample
//   RUN/resources.csv  process samples      RUN/host.csv       host samples
//   RUN/errors.jsonl   one bad sample per line, RUN/digests.csv batch content digests,
//   RUN/checkpoint.json, RUN/steady.json, RUN/trace.json (mmprof trace only)
//
// CSV cells that are empty mean "not measured", never 0: those fields are std::optional.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mmprof/summary.hpp"

namespace mmprof {

// The names of the files of a run directory (and of an experiment directory of `mmprof ab`).
namespace run_file {
inline constexpr const char* manifest = "manifest.json";
inline constexpr const char* summary = "summary.json";
inline constexpr const char* steps = "steps.csv";
inline constexpr const char* stages = "stages.csv";
inline constexpr const char* resources = "resources.csv";
inline constexpr const char* host = "host.csv";
inline constexpr const char* errors = "errors.jsonl";
inline constexpr const char* digests = "digests.csv";
inline constexpr const char* checkpoint = "checkpoint.json";
inline constexpr const char* steady = "steady.json";
inline constexpr const char* trace = "trace.json";
// Room kept while a run writes, so that a full disk still leaves it its summary (run_writer.hpp).
inline constexpr const char* reserve = ".mmprof-reserve";
// A user's own job: the hook's records and the CUPTI injection's events (folders).
inline constexpr const char* hook = "hook";
inline constexpr const char* gpu = "gpu";
// ...and what it printed (stdout and stderr as one stream), never on mmprof's stdout.
inline constexpr const char* job_log = "job.log";
// mmprof report's output, by default into the one run or experiment directory it reports on.
inline constexpr const char* report_md = "report.md";
inline constexpr const char* report_html = "report.html";
inline constexpr const char* report_json = "report.json";
// An experiment directory: experiment.json, matrix.csv, matrix.md and trials/<run directories>.
inline constexpr const char* experiment = "experiment.json";
inline constexpr const char* matrix_csv = "matrix.csv";
inline constexpr const char* matrix_md = "matrix.md";
inline constexpr const char* trials = "trials";
// A job directory (several ranks): job.json and rank-K/<run directories>.
inline constexpr const char* job = "job.json";
}  // namespace run_file

// Schema ids of the JSON files (bumped when a named key changes meaning or is removed).
namespace run_schema {
inline constexpr const char* manifest = "mmprof.manifest/2";
inline constexpr const char* summary = "mmprof.summary/2";
inline constexpr const char* experiment = "mmprof.experiment/2";
inline constexpr const char* job = "mmprof.job/1";
inline constexpr int checkpoint_version = 1;
}  // namespace run_schema

// steps.csv: one measured (or warm-up) step of a phase.
struct StepRow {
  int64_t step = 0;
  std::string phase;  // compute | pipeline | end_to_end
  int64_t t_start_ns = 0;
  double wait_ms = 0;            // the consumer blocked on the next batch
  std::optional<double> h2d_ms;  // empty when the step made no host-to-device copy
  double compute_ms = 0, step_ms = 0;
  int64_t samples = 0;
  uint64_t bytes = 0;  // media + caption bytes read
  // A multi-rank run's dist.sync (barrier or allreduce) after the step, part of step_ms: the wait
  // for the slowest rank plus the transfer. Empty on one rank or with dist.sync=none.
  std::optional<double> sync_ms;
  // The rank whose loop the step is (a job under torchrun, whose steps.csv holds every rank's;
  // empty for one process): a column only in runs of a user's own job.
  std::optional<int> rank;
};

// stages.csv: one sample of a measured step. mmprof's own loader times each stage (read, decode,
// augment) and the faults; a user's own job (the external hook) knows only the whole
// `__getitem__` (getitem_ms), so the stage cells are empty there, never 0 ("not measured").
struct StageRow {
  std::string key;
  int worker = -1;
  std::optional<double> read_ms, decode_ms, augment_ms;
  uint64_t bytes = 0;
  std::optional<int64_t> faults;  // minor page faults of the worker while handling the sample
  std::string phase;
  int64_t step = 0;
  std::string modality;  // image | video
  std::optional<int64_t> majflt;
  int64_t t_start_ns = 0;
  // The whole `dataset[index]` (the user's transforms included): only the external hook's rows.
  // A column of stages.csv only in runs of a user's own job (RunWriter's `getitem_column`), so
  // mmprof's own runs keep their columns.
  std::optional<double> getitem_ms;
  // The rank whose DataLoader fetched it (a job under torchrun; empty for one process): also a
  // column only in runs of a user's own job.
  std::optional<int> rank;
  // mmprof's own loader: the image format ("jpeg", "webp") or video codec ("h264") and the
  // source's size in pixels, as the worker's probe found them; empty in older runs and in a
  // user's job.
  std::string format;
  std::optional<int> source_width_px, source_height_px;
  // Which process decoded it: "worker", or "main" when decode was placed on the device
  // (decode.device); empty in older runs and in a user's job.
  std::string decoded_in;
};

// resources.csv: one process at one sample of the resource sampler.
struct ResourceRow {
  int64_t t_ns = 0;
  int pid = 0;
  std::string role;  // main | worker | external; a user's job also: agent | observer (mmprof)
  std::optional<int64_t> rss_kb, pss_kb, uss_kb;
  double cpu_s = 0;
  std::optional<uint64_t> read_bytes;
  int64_t minflt = 0, majflt = 0;
  std::optional<int> worker;  // the loader's worker index for role worker
  std::optional<int64_t> swap_kb, pss_anon_kb, pss_file_kb, pss_shmem_kb;
  std::optional<uint64_t> write_bytes, rchar, wchar, syscr, syscw;
  double utime_s = 0, stime_s = 0;
  uint64_t starttime_ticks = 0;
  std::string phase, label;
  std::optional<int> rank;  // a user's job: the rank the process belongs to
  // Cumulative time its threads waited on a run queue while runnable (/proc/PID/task/*/schedstat).
  std::optional<uint64_t> run_queue_delay_ns;
};

// host.csv: the host at one sample.
struct HostRow {
  int64_t t_ns = 0;
  std::optional<int64_t> mem_total_kb, mem_available_kb, used_kb, cached_kb, shmem_kb;
  std::optional<int64_t> cgroup_memory_current_kb, cgroup_memory_peak_kb, shm_used_kb;
  std::string phase, label;
  // /proc/stat over the CPUs the run may use (`cpus` of them): cumulative CPU-seconds, everyone's.
  std::optional<int> cpus;
  std::optional<double> cpu_busy_s, cpu_idle_s, cpu_iowait_s, cpu_steal_s;
  // /proc/pressure/cpu: cumulative microseconds with some (all) runnable tasks waiting for a CPU.
  std::optional<uint64_t> cpu_pressure_some_us, cpu_pressure_full_us;
};

// digests.csv: the content digest of one delivered batch.
struct DigestRow {
  std::string phase;
  uint64_t batch_id = 0;
  int64_t epoch = 0;
  uint64_t digest = 0;
};
// (phase, batch id) -> digest.
using DigestMap = std::map<std::pair<std::string, uint64_t>, uint64_t>;

// A run directory read back. Every reader throws InputError (mmprof/error.hpp) naming the file,
// and for CSV files the row and column, when a file is unreadable or malformed. A CSV row cut
// short by an interrupted run (the last line) is left out, not an error.
// clang-tidy 14 reports its implicit destructor as throwing (through nlohmann::json and
// std::filesystem::path); nothing in it throws.
class RunDir {  // NOLINT(bugprone-exception-escape)
 public:
  // Whether `dir` holds a run (its manifest.json).
  static bool is_run(const std::filesystem::path& dir);
  // Opens `dir` and reads its manifest (schema-checked); summary.json when present (a run killed
  // outright has none).
  static RunDir open(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const noexcept { return dir_; }
  std::filesystem::path file(const char* name) const { return dir_ / name; }
  const nlohmann::json& manifest() const noexcept { return manifest_; }
  bool has_summary() const noexcept { return summary_.has_value(); }
  // Throws InputError when the run has no summary.json.
  const Summary& summary() const;

  std::vector<StepRow> steps() const;
  std::vector<StageRow> stages() const;
  // stages.csv row by row, none of them kept: what a merge of thousands of ranks reads.
  void for_each_stage(const std::function<void(const StageRow&)>& fn) const;
  // Empty optional for runs made before the resource sampler existed.
  std::optional<std::vector<ResourceRow>> resources() const;
  std::optional<std::vector<HostRow>> host() const;
  std::vector<nlohmann::json> errors() const;  // errors.jsonl, one object per line
  DigestMap digests() const;                   // empty without digests.csv
  std::optional<nlohmann::json> steady() const;
  std::optional<nlohmann::json> checkpoint() const;

 private:
  std::filesystem::path dir_;
  nlohmann::json manifest_;
  std::optional<Summary> summary_;
};

}  // namespace mmprof
