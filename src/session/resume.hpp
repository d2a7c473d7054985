#pragma once
// `mmprof baseline --resume RUN`: the configuration and start point of a resumed run.
#include <memory>
#include <string>

#include "run/resume.hpp"
#include "session/run_options.hpp"

namespace mmprof::session {

struct ResumedRun {
  ResolvedRun resolved;  // RUN's resolved configuration, from its manifest.json
  std::shared_ptr<const ResumePoint> point;
  std::string out;  // the new run directory: --out, or RUN-resumed
};

// Refuses --config, --data and --set (the configuration is RUN's) and an --out that is RUN
// itself; `t_restart_ns` is when the resume began.
ResumedRun resolve_resume(const std::string& run, const RunOptions& options, int64_t t_restart_ns);

}  // namespace mmprof::session
