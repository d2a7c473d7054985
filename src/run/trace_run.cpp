#include "run/trace_run.hpp"

#include <cstdio>

#include "mmprof/run_dir.hpp"
#include "trace/trace_session.hpp"

namespace mmprof {

Summary run_traced_baseline(const Config& config, const Dataset& dataset,
                            const BaselineOptions& options) {
  const trace::TraceSession session(config);
  BaselineOptions traced = options;
  traced.finish_trace = [&]() -> std::optional<TraceFigures> {
    try {
      const trace::TraceCounts counts = session.write(options.out / run_file::trace, dataset);
      return trace::trace_summary(counts, session.arena());
    } catch (const std::exception& e) {
      // The run's own outcome (and its error, if it failed) matters more than the trace's.
      std::fprintf(stderr, "mmprof: trace.json not written: %s\n", e.what());
      return std::nullopt;
    }
  };
  return run_baseline(config, dataset, traced);
}

}  // namespace mmprof
