#include "run/resume.hpp"

#include <fmt/format.h>

#include <fstream>
#include <utility>

#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "rundir/json_file.hpp"
#include "rundir/summary.hpp"
#include "util/files.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

UsageError already_resumed(const fs::path& run, const json& by) {
  return UsageError(fmt::format("{} was resumed already by {}; resume that run instead",
                                run.string(), by.dump()));
}

// Only an interrupted run (summary.json "interrupted", or none: killed before it was written)
// continues; the others are refused with what they are.
void check_status(const RunDir& run) {
  if (!run.has_summary()) return;
  const Summary& summary = run.summary();
  const std::string& status = summary.status;
  if (status == "interrupted") return;
  if (status == "resumed") throw already_resumed(run.dir(), summary.resumed_by);
  if (status == "complete") {
    throw UsageError(
        fmt::format("{} completed (summary.json status complete): there is nothing "
                    "to resume",
                    run.dir().string()));
  }
  throw UsageError(
      fmt::format("{} ended with status '{}' in summary.json: only an interrupted run "
                  "can be resumed",
                  run.dir().string(), status));
}

}  // namespace

json to_json(const Checkpoint& c) {
  json phases = json::object();
  for (const auto& [name, p] : c.phases) {
    phases[name] = {
        {"next_batch_id", p.next_batch_id},
        {"epoch",
         c.batches_per_epoch > 0 ? static_cast<int64_t>(p.next_batch_id) / c.batches_per_epoch : 0},
        {"measured_steps", p.measured_steps},
        {"done", p.done}};
  }
  return {{"schema_version", run_schema::checkpoint_version},
          {"batches_per_epoch", c.batches_per_epoch},
          {"dataset_fingerprint", c.dataset_fingerprint},
          {"phases", phases}};
}

Checkpoint checkpoint_from_json(const json& j, const fs::path& file) {
  try {
    if (j.at("schema_version").get<int>() != run_schema::checkpoint_version) {
      throw InputError(fmt::format("{} has schema_version {}, this mmprof reads {}", file.string(),
                                   j.at("schema_version").dump(), run_schema::checkpoint_version));
    }
    Checkpoint c;
    c.batches_per_epoch = j.at("batches_per_epoch").get<int64_t>();
    c.dataset_fingerprint = j.value("dataset_fingerprint", "");
    for (const auto& [name, p] : j.at("phases").items()) {
      if (name != "pipeline" && name != "end_to_end") {
        throw InputError(fmt::format("{} names an unknown phase '{}'", file.string(), name));
      }
      c.phases[name] = {p.at("next_batch_id").get<uint64_t>(),
                        p.at("measured_steps").get<int64_t>(), p.at("done").get<bool>()};
    }
    return c;
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{} is not a valid checkpoint ({})", file.string(), e.what()));
  }
}

std::shared_ptr<const ResumePoint> load_resume_point(const fs::path& run_path,
                                                     int64_t t_restart_ns) {
  auto point = std::make_shared<ResumePoint>();
  point->run = run_path;
  point->t_restart_ns = t_restart_ns;
  if (fs::is_directory(run_path)) {
    point->lock = std::make_shared<rundir::DirectoryLock>(
        run_path, fmt::format("--resume {}: the run is still being written by another mmprof "
                              "process (its own run, or another resume); wait for it to end, or "
                              "stop it (Ctrl-C) and resume then",
                              run_path.string()));
  }
  const RunDir run = RunDir::open(run_path);
  const json& manifest = run.manifest();
  if (!manifest.contains("config") || !manifest["config"].is_object()) {
    throw InputError(fmt::format("{} has no resolved configuration (\"config\")",
                                 run.file(run_file::manifest).string()));
  }
  point->config_tree = manifest["config"];
  // Out of order, the batches a run consumed are not a prefix of the sequence: no position.
  const json loader = point->config_tree.value("loader", json::object());
  if (!loader.value("in_order", true)) {
    throw UsageError(
        fmt::format("{} ran with loader.in_order=false, whose delivery order is not "
                    "reproducible: it cannot be resumed",
                    run_path.string()));
  }
  check_status(run);
  const fs::path file = run.file(run_file::checkpoint);
  const json j = rundir::read_json_object(
      file, "the run recorded no loader checkpoint, so it cannot be resumed");
  if (j.contains("resumed_by")) {
    throw already_resumed(run_path, j["resumed_by"]);
  }
  point->checkpoint = checkpoint_from_json(j, file);
  return point;
}

void mark_resumed(const ResumePoint& point, const fs::path& resumed_by) {
  json checkpoint = to_json(point.checkpoint);
  const std::string by = fs::absolute(resumed_by).string();
  checkpoint["resumed_by"] = by;
  write_json_atomic(point.run / run_file::checkpoint, checkpoint);
  rundir::mark_summary_resumed(point.run, by);
}

CheckpointKeeper::CheckpointKeeper(const fs::path& run_dir, const ResumePoint* resume,
                                   int64_t interval_ns)
    : file_(run_dir / run_file::checkpoint), resume_(resume), interval_ns_(interval_ns) {
  if (resume_ != nullptr) checkpoint_ = resume_->checkpoint;
}

bool CheckpointKeeper::phase_done(const std::string& phase) const {
  const auto it = checkpoint_.phases.find(phase);
  return it != checkpoint_.phases.end() && it->second.done;
}

uint64_t CheckpointKeeper::start_batch(const std::string& phase) const {
  const auto it = checkpoint_.phases.find(phase);
  return it == checkpoint_.phases.end() ? 0 : it->second.next_batch_id;
}

int64_t CheckpointKeeper::steps_done(const std::string& phase) const {
  const auto it = checkpoint_.phases.find(phase);
  return it == checkpoint_.phases.end() ? 0 : it->second.measured_steps;
}

void CheckpointKeeper::set_dataset(int64_t batches_per_epoch, uint64_t fingerprint) {
  const std::string hex = fmt::format("{:016x}", fingerprint);
  if (resume_ != nullptr) {
    const Checkpoint& before = resume_->checkpoint;
    const std::string file = (resume_->run / run_file::checkpoint).string();
    if (before.batches_per_epoch > 0 && before.batches_per_epoch != batches_per_epoch) {
      throw InputError(
          fmt::format("{} was taken at {} batches an epoch, the dataset now gives {}: "
                      "it changed since the run, which cannot be resumed on it",
                      file, before.batches_per_epoch, batches_per_epoch));
    }
    if (!before.dataset_fingerprint.empty() && before.dataset_fingerprint != hex) {
      throw InputError(fmt::format(
          "{} was taken on a dataset with fingerprint {}, the dataset now has {}: its files "
          "changed since the run (replaced, renamed, added or removed), which cannot be resumed on "
          "it",
          file, before.dataset_fingerprint, hex));
    }
  }
  checkpoint_.batches_per_epoch = batches_per_epoch;
  checkpoint_.dataset_fingerprint = hex;
}

void CheckpointKeeper::step_done(const std::string& phase, uint64_t last_batch_id, bool measured,
                                 int64_t now_ns) {
  PhaseCheckpoint& p = checkpoint_.phases[phase];
  p.next_batch_id = last_batch_id + 1;
  if (measured) p.measured_steps++;
  // An atomic rewrite (with fsync) costs about a millisecond: not after every step. A run killed
  // outright resumes from a position at most interval_ns old, which is still a position of the
  // same sequence (a few batches are delivered twice across the two runs).
  if (now_ns - last_write_ns_ >= interval_ns_) {
    write();
    last_write_ns_ = now_ns;
  }
}

void CheckpointKeeper::first_batch(const std::string& phase, int64_t ready_ns,
                                   double loader_ttfb_ms) {
  if (resume_ == nullptr || resume_record_) return;
  ResumeRecord& r = resume_record_.emplace();
  r.from = fs::absolute(resume_->run).string();
  r.phase = phase;
  r.start_batch_id = start_batch(phase);
  r.start_epoch = checkpoint_.batches_per_epoch > 0
                      ? static_cast<int64_t>(r.start_batch_id) / checkpoint_.batches_per_epoch
                      : 0;
  r.measured_steps_before = steps_done(phase);
  r.time_to_first_batch_ms = static_cast<double>(ready_ns - resume_->t_restart_ns) / 1e6;
  r.loader_time_to_first_batch_ms = loader_ttfb_ms;
  // From its first batch on this run holds the sequence: the interrupted one is done with. (A
  // resume that fails before, e.g. for a missing GPU, leaves RUN resumable.)
  mark_resumed(*resume_, file_.parent_path());
}

void CheckpointKeeper::finish_phase(const std::string& phase) {
  checkpoint_.phases[phase].done = true;
  write();
}

void CheckpointKeeper::write() {
  write_json_atomic(file_, to_json(checkpoint_));
}

}  // namespace mmprof
