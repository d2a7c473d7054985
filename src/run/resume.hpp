#pragma once
// Restart of an interrupted baseline run (`mmprof baseline --resume RUN`). The loader's state is
// its position in the batch sequence: the epoch plan is drawn from (seed, epoch) and every
// augmentation from (seed, epoch, sample), so the next batch id (with the run's resolved config)
// determines every batch that follows. checkpoint.json records, per loader phase, the next batch
// id the consumer would take and the measured steps done; a resumed run starts its loader there.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "mmprof/summary_loading.hpp"
#include "rundir/output_dir.hpp"

namespace mmprof {

struct PhaseCheckpoint {
  uint64_t next_batch_id = 0;  // the first batch not yet consumed by the run
  int64_t measured_steps = 0;  // measured steps done (over every run of the chain)
  bool done = false;           // the phase finished its measured window
};

struct Checkpoint {
  int64_t batches_per_epoch = 0;
  std::string dataset_fingerprint;  // Dataset::fingerprint in hex; empty: not recorded
  std::map<std::string, PhaseCheckpoint> phases;  // "pipeline", "end_to_end"
};

nlohmann::json to_json(const Checkpoint& checkpoint);
// Throws InputError naming `file` when `j` is not a checkpoint.
Checkpoint checkpoint_from_json(const nlohmann::json& j, const std::filesystem::path& file);

// What `--resume RUN` starts from, read and checked before anything runs.
struct ResumePoint {
  std::filesystem::path run;  // the interrupted run directory
  // RUN's lock, held while the resume runs: no other process writes RUN meanwhile.
  std::shared_ptr<rundir::DirectoryLock> lock;
  nlohmann::json config_tree;  // its resolved configuration (manifest.json "config")
  Checkpoint checkpoint;
  int64_t t_restart_ns = 0;  // monotonic time the resume began (for time to first batch)
};

// Locks RUN (its process, when it still runs, holds it: refused, UsageError) and reads
// RUN/manifest.json and RUN/checkpoint.json. Refuses (UsageError, exit 2) a run that
// completed, failed or was resumed already; a missing or unreadable file is an InputError
// (exit 3) naming it.
std::shared_ptr<const ResumePoint> load_resume_point(const std::filesystem::path& run,
                                                     int64_t t_restart_ns);

// Records that `resumed_by` continues `point.run`: checkpoint.json gets "resumed_by", and
// summary.json (absent after a SIGKILL) the status "resumed".
void mark_resumed(const ResumePoint& point, const std::filesystem::path& resumed_by);

// The run's side of checkpointing: where each loader phase starts, the position after each step,
// and checkpoint.json written at most every `interval_ns` and whenever asked (phase end,
// interrupt). Time is passed in.
class CheckpointKeeper {
 public:
  CheckpointKeeper(const std::filesystem::path& run_dir, const ResumePoint* resume,
                   int64_t interval_ns = 1'000'000'000);

  bool phase_done(const std::string& phase) const;
  uint64_t start_batch(const std::string& phase) const;
  int64_t steps_done(const std::string& phase) const;

  // The loader's batches an epoch and the dataset's fingerprint. A resumed run whose dataset
  // changed since (another fingerprint: files replaced, added or removed; or another count) is
  // refused (InputError): its positions would name other batches.
  void set_dataset(int64_t batches_per_epoch, uint64_t fingerprint);
  // After a step that consumed batches up to `last_batch_id`; `measured`: inside the window.
  void step_done(const std::string& phase, uint64_t last_batch_id, bool measured, int64_t now_ns);
  // The first batch a resumed run delivers (ready at `ready_ns`): time from restart to it, and
  // the interrupted run marked resumed (mark_resumed).
  void first_batch(const std::string& phase, int64_t ready_ns, double loader_ttfb_ms);
  void finish_phase(const std::string& phase);
  void write();

  // The summary's resume part (reliability.resume) when this run is a resume; empty otherwise.
  const std::optional<ResumeRecord>& resume_part() const noexcept { return resume_record_; }

 private:
  std::filesystem::path file_;
  const ResumePoint* resume_;
  int64_t interval_ns_;
  int64_t last_write_ns_ = 0;
  Checkpoint checkpoint_;
  std::optional<ResumeRecord> resume_record_;
};

}  // namespace mmprof
