#include "cli/report.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "cli/common.hpp"
#include "measure/job_summary.hpp"
#include "measure/progress.hpp"
#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "report/defaults.hpp"
#include "report/knowledge_base.hpp"
#include "report/report_builder.hpp"
#include "report/writers.hpp"
#include "util/did_you_mean.hpp"
#include "util/files.hpp"

namespace mmprof::cli {
namespace {

namespace fs = std::filesystem;
using report::InputKind;

// A criteria or knowledge-base file, read whole (16 MiB at most; exit 3 when it cannot be).
std::string read_option_file(const std::string& path, const char* option) {
  std::error_code ec;
  if (!fs::exists(path, ec) && std::string_view(option) == "--gate") {
    // `--gate defualt`: a typo of the keyword, not a missing file.
    if (const std::string hint = did_you_mean(path, {"default"}, "", ": "); !hint.empty())
      throw UsageError(fmt::format("--gate {}: no such criteria file{}", path, hint));
  }
  return read_input_file(path, fmt::format("{} file", option), 16u << 20);
}

report::RunData load_compare_run(const std::string& dir) {
  if (report::input_kind(dir) != InputKind::run) {
    throw UsageError(fmt::format(
        "--compare {}: an experiment or job directory; compare takes two run directories", dir));
  }
  return report::load_run(dir);
}

// Reads every input; with more than one, a line per input read (its CSV files can be large).
report::ReportInputs load_inputs(const ReportCliOptions& o, const std::vector<std::string>& dirs,
                                 ProgressLine& progress) {
  report::ReportInputs in;
  in.knowledge_base =
      o.knowledge_base.empty()
          ? report::parse_knowledge_base(report::default_knowledge_base_yaml(),
                                         "embedded configs/report/knowledge-base.yaml")
          : report::parse_knowledge_base(read_option_file(o.knowledge_base, "--kb"),
                                         o.knowledge_base);
  const bool embedded = o.gate.empty() || o.gate == "default";
  in.criteria_name = embedded ? "embedded configs/report/criteria.yaml" : o.gate;
  in.criteria = report::parse_criteria(
      embedded ? report::default_criteria_yaml() : read_option_file(o.gate, "--gate"),
      in.criteria_name);
  in.gated = !o.gate.empty();
  const auto total = static_cast<int64_t>(dirs.size());
  for (int64_t i = 0; i < total; ++i) {
    const std::string& d = dirs[static_cast<size_t>(i)];
    // A job is merged again from its ranks' directories: a rank may have written after the
    // merge its rank 0 made (a job cut short under torchrun).
    if (is_job_dir(d)) (void)merge_job(d, job_world_size(d), {});
    switch (report::input_kind(d)) {
      case InputKind::run:
        in.runs.push_back(report::load_run(d));
        break;
      case InputKind::experiment:
        in.experiments.push_back(report::load_experiment(d));
        break;
      case InputKind::job:
        in.jobs.push_back(report::load_job(d));
        break;
    }
    if (total > 1) progress.unit_done("read input", i + 1, total, d);
  }
  progress.finish();
  if (!o.compare.empty())
    in.compare.emplace(load_compare_run(o.compare[0]), load_compare_run(o.compare[1]));
  return in;
}

}  // namespace

void setup_report(CLI::App& app, ReportCliOptions& o) {
  app.add_option("dirs", o.inputs,
                 "Run directories (mmprof baseline) and/or experiment directories (mmprof ab); "
                 "default: the latest under runs/");
  app.add_option("--out,-o", o.out,
                 "Where report.md, report.html and report.json go (default: the one input "
                 "directory, else runs/report-<time>)");
  app.add_option("--gate", o.gate,
                 "Criteria YAML (or 'default' for configs/report/criteria.yaml): exit 0 pass, 1 "
                 "regression or rollback, 5 inconclusive (gate.inconclusive_exit may make it 0 "
                 "or 1)");
  app.add_option("--compare", o.compare, "Compare two runs: BASE_RUN NEW_RUN")->expected(2);
  app.add_option("--kb", o.knowledge_base,
                 "Knowledge base YAML (default: the embedded configs/report/knowledge-base.yaml)");
  add_json_flag(app, o.json, "report.json");
  add_verbosity_flags(app, o.verbosity);
}

int run_report_command(const ReportCliOptions& o) {
  std::vector<std::string> dirs = o.inputs;
  if (dirs.empty() && o.compare.empty()) {
    dirs.push_back(report::latest_input(o.runs_root).string());
    if (!o.verbosity.quiet)
      std::fprintf(stderr, "mmprof: reporting on the latest input, %s\n", dirs.back().c_str());
  }
  ProgressLine progress(session::progress_style(o.verbosity, o.json));
  const report::ReportInputs in = load_inputs(o, dirs, progress);
  const nlohmann::json r = report::build_report(in);
  const fs::path out = !o.out.empty() ? fs::path(o.out)
                       : dirs.size() == 1 && o.compare.empty()
                           ? fs::path(dirs[0])
                           : fs::path(session::default_out_dir("report"));
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) {
    throw OutputError(
        fmt::format("--out {}: cannot create the directory: {}", out.string(), ec.message()));
  }
  write_json_atomic(out / run_file::report_json, r);
  write_file_atomic(out / run_file::report_md, report::render_markdown(r));
  write_file_atomic(out / run_file::report_html, report::render_html(r));
  if (o.json) {
    print_json(r);
  } else if (!o.verbosity.quiet) {
    std::printf("report: %s/report.{md,html,json}\n", out.c_str());
    print_text(r["gate"]["reason"].get<std::string>() + "\n");
  }
  return in.gated ? r["gate"]["exit_code"].get<int>() : 0;
}

}  // namespace mmprof::cli
