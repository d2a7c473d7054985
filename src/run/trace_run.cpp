#include "run/trace_run.hpp"

#include <cstdio>
#include <fstream>
#include <optional>

#include "trace/trace_session.hpp"
#include "util/files.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;

// Writes trace.json and puts the `trace` block into `summary` (or, for a run that failed, into
// the summary.json it left on disk) and rewrites summary.json.
void finish_trace(const trace::TraceSession& session, const Dataset& dataset, const fs::path& out,
                  nlohmann::json* summary) {
  const trace::TraceCounts counts = session.write(out / "trace.json", dataset);
  nlohmann::json on_disk;
  if (summary == nullptr) {
    std::ifstream in(out / "summary.json");
    if (!in) return;  // the run stopped before it wrote one
    on_disk = nlohmann::json::parse(in, nullptr, false);
    if (on_disk.is_discarded()) return;
    summary = &on_disk;
  }
  (*summary)["trace"] = trace::trace_summary(counts, session.arena());
  write_json_atomic(out / "summary.json", *summary);
}

}  // namespace

nlohmann::json run_traced_baseline(const Config& config, const Dataset& dataset,
                                   const BaselineOptions& options) {
  const trace::TraceSession session(config);
  nlohmann::json summary;
  try {
    summary = run_baseline(config, dataset, options);
  } catch (...) {
    // Keep what was traced up to the failure, unless the run directory never came to exist.
    if (fs::exists(options.out / "manifest.json")) {
      try {
        finish_trace(session, dataset, options.out, nullptr);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "mmprof: trace.json of the failed run not written: %s\n", e.what());
      }
    }
    throw;
  }
  finish_trace(session, dataset, options.out, &summary);
  return summary;
}

}  // namespace mmprof
