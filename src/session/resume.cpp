#include "session/resume.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "mmprof/error.hpp"

namespace mmprof::session {

namespace fs = std::filesystem;

ResumedRun resolve_resume(const std::string& run, const RunOptions& o, int64_t t_restart_ns) {
  if (!o.config_file.empty() || !o.data.empty() || !o.sets.empty()) {
    throw UsageError(
        fmt::format("--resume {} runs with the configuration recorded in its "
                    "manifest.json; --config, --data and --set cannot change it",
                    run));
  }
  ResumedRun r;
  r.out = o.out.empty() ? fs::path(run).lexically_normal().string() + "-resumed" : o.out;
  std::error_code ec;
  if (fs::equivalent(r.out, run, ec)) {
    throw UsageError(
        fmt::format("--out {} is the run being resumed; a resumed run writes a new "
                    "run directory",
                    r.out));
  }
  r.point = load_resume_point(run, t_restart_ns);
  r.resolved.tree = r.point->config_tree;
  r.resolved.config = resolve_config(r.resolved.tree);
  check_max_host_memory(r.resolved.config, o.max_host_memory);
  return r;
}

}  // namespace mmprof::session
