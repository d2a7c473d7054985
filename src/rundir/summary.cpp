#include "rundir/summary.hpp"

#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "rundir/json_file.hpp"
#include "util/files.hpp"

namespace mmprof::rundir {

using nlohmann::json;

json summary_json(const SummaryParts& p) {
  json s = {{"schema", run_schema::summary},
            {"source", p.source},
            {"status", p.status},
            {"message", p.message.empty() ? json(nullptr) : json(p.message)},
            {"phases", p.phases},
            {"throughput", p.throughput},
            {"stall_fraction", p.stall_fraction},
            {"time_to_first_batch_ms", p.time_to_first_batch_ms},
            {"latency_ms", p.latency},
            {"memory", p.memory},
            {"cpu", p.cpu},
            {"io", p.io},
            {"gpu", p.gpu},
            {"gpu_unavailable", p.gpu_unavailable},
            {"pin_mode", p.pin_mode},
            {"errors", p.errors},
            {"reliability", p.reliability},
            {"epoch_boundary", p.epoch_boundary}};
  if (!p.resume.is_null()) s["reliability"]["resume"] = p.resume;
  if (!p.trace.is_null()) s["trace"] = p.trace;
  if (!p.decode_placement.is_null()) s["decode_placement"] = p.decode_placement;
  if (!p.locality.is_null()) s["locality"] = p.locality;
  if (!p.dist.is_null()) s["dist"] = p.dist;
  if (!p.shuffle.is_null()) s["shuffle"] = p.shuffle;
  if (!p.read_pattern.is_null()) s["read_pattern"] = p.read_pattern;
  if (!p.job.is_null()) s["job"] = p.job;
  if (!p.stage_breakdown.is_null()) s["stage_breakdown"] = p.stage_breakdown;
  if (!p.workers_balance.is_null()) s["workers_balance"] = p.workers_balance;
  return s;
}

void mark_summary_resumed(const std::filesystem::path& run, const std::string& resumed_by) {
  const std::filesystem::path file = run / run_file::summary;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return;
  json summary = json::parse(read_input_file(file, "run file", kMaxRunFileBytes), nullptr, false);
  if (summary.is_discarded() || !summary.is_object()) {
    throw InputError(file.string() + " is not valid JSON");
  }
  summary["status"] = "resumed";
  summary["resumed_by"] = resumed_by;
  write_json_atomic(file, summary);
}

}  // namespace mmprof::rundir
