#pragma once
// The knowledge base of candidate changes (configs/report/knowledge-base.yaml, versioned data) and
// its evaluation against one analysed run: compatible and relevant changes become recommendations
// with a ready `mmprof ab` command line; the others are listed as excluded, with the reason.
#include <nlohmann/json.hpp>
#include <string>

namespace mmprof::report {

// The YAML as JSON ({version, updated, changes[...]}), validated: every change has an id, a
// title, addresses (one {classification, stages, resources} map or a list of them), known
// preconditions, and sources with url, title and `published` or `version` (`accessed` alone is
// refused). Throws UsageError naming `name`.
nlohmann::json parse_knowledge_base(const std::string& yaml_text, const std::string& name);

// One precondition (a single-key map, e.g. {"idle_cores": 1}, {"version_at_least": {"torch":
// "1.7"}}) against the run: {check, ok, detail}. A fact the manifest does not hold is not ok
// ("cannot verify: ...").
nlohmann::json check_precondition(const nlohmann::json& precondition,
                                  const nlohmann::json& analysis, const nlohmann::json& manifest);

// What one loading process more would take from the host, from what the run's own ones did
// (analysis resources.cpu.loading): `cores` a worker more needs (one when not measured),
// `waits` when they were mostly off CPU (another one costs only what one used), and the words.
struct WorkerCoreNeed {
  double cores = 1;
  bool waits = false;
  std::string text;
};
WorkerCoreNeed worker_core_need(const nlohmann::json& analysis);

// {recommended: [...], excluded: [{id, title, reason}], hypotheses: [...]}.
nlohmann::json evaluate_knowledge_base(const nlohmann::json& kb, const nlohmann::json& analysis,
                                       const nlohmann::json& manifest);

// `mmprof ab` with the run's --config/--data/--set and one factor, shell-quoted.
std::string ab_command(const nlohmann::json& manifest, const std::string& factor,
                       const std::vector<std::string>& values);

}  // namespace mmprof::report
