#pragma once
// `mmprof report`: analysis of run and experiment directories (never re-running anything) into
// report.md, report.html and report.json, with a CI gate exit code.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/common.hpp"

namespace mmprof::cli {

struct ReportCliOptions {
  std::vector<std::string> inputs;   // run and/or experiment directories
  std::string out;                   // where report.* go
  std::string gate;                  // criteria file, or "default"
  std::vector<std::string> compare;  // BASE NEW
  std::string knowledge_base;        // default: the embedded configs/report/knowledge-base.yaml
  std::string runs_root = "runs";    // where the embedded default looks for the latest input
  bool json = false;                 // --json: report.json on stdout, nothing else there
  session::Verbosity verbosity;      // --quiet, --verbose
};

void setup_report(CLI::App& app, ReportCliOptions& options);
// Exit code: 0, or with --gate 1 (regression / rollback) or the criteria's inconclusive code.
int run_report_command(const ReportCliOptions& options);

}  // namespace mmprof::cli
