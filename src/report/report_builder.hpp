#pragma once
// report.json ("mmprof.report/2"): everything the Markdown and HTML writers show, built from the
// inputs without re-running anything.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "report/criteria.hpp"
#include "report/inputs.hpp"

namespace mmprof::report {

struct ReportInputs {
  std::vector<RunData> runs;
  std::vector<ExperimentData> experiments;
  std::vector<JobData> jobs;  // each adds its slowest rank's run to `runs` of the report
  std::optional<std::pair<RunData, RunData>> compare;  // --compare BASE NEW
  nlohmann::json knowledge_base;                       // parse_knowledge_base()
  Criteria criteria;
  std::string criteria_name;  // the file, or "embedded configs/report/criteria.yaml"
  bool gated = false;         // --gate given
};

// {schema, runs[analysis + recommendations], experiments[...], jobs[...], compare, criteria,
// gate}.
nlohmann::json build_report(const ReportInputs& in);

}  // namespace mmprof::report
