#include "cli/trace.hpp"

#include "run/trace_run.hpp"

namespace mmprof::cli {

void setup_trace(CLI::App& app, BaselineCliOptions& options) {
  setup_baseline(app, options);
}

int run_trace_command(const BaselineCliOptions& options, const std::vector<std::string>& argv) {
  return run_baseline_command(options, argv, "trace", run_traced_baseline);
}

}  // namespace mmprof::cli
