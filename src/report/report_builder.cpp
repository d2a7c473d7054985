#include "report/report_builder.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <utility>
#include <vector>

#include "mmprof/run_dir.hpp"
#include "report/analysis.hpp"
#include "report/json_access.hpp"
#include "report/knowledge_base.hpp"
#include "report/placement.hpp"
#include "report/staging.hpp"
#include "stats/inference.hpp"
#include "util/version.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

// A file, and one JSON document of it under its pointer (a part of summary.json, or a whole file).
struct Source {
  std::filesystem::path file;
  std::string at;
  const json* doc;
};

// The files a run's figures come from: summary.json's parts, and manifest.json.
std::vector<Source> sources_of(const RunData& run) {
  std::vector<Source> sources;
  for (const auto& [key, part] : run.summary.parts())
    sources.push_back({run.dir / run_file::summary, "/" + key, part});
  sources.push_back({run.dir / run_file::manifest, "", &run.manifest});
  return sources;
}

// Runs `analyse`; a figure of the wrong type is refused naming the file of `sources` holding it.
template <class Analyse>
json naming_bad_figures(const std::vector<Source>& sources, Analyse analyse) {
  try {
    return analyse();
  } catch (const FigureTypeError& e) {
    for (const Source& s : sources) {
      if (value_at(*s.doc, e.pointer()) == e.value()) {
        throw InputError(fmt::format("{}: {}", s.file.string(),
                                     FigureTypeError(s.at + e.pointer(), e.value()).what()));
      }
    }
    throw;
  }
}

json analyzed_run(const RunData& run) {
  return naming_bad_figures(sources_of(run), [&] { return analyze_run(run); });
}

json run_section(const RunData& run, const json& kb) {
  json a = analyzed_run(run);
  json kbr = evaluate_knowledge_base(kb, a, run.manifest);
  a["hypotheses"] = kbr["hypotheses"];
  a["hypotheses_scope"] = kbr["hypotheses_scope"];
  a["recommended"] = kbr["recommended"];
  a["excluded"] = kbr["excluded"];
  a["knowledge_base"] = {{"version", kbr["knowledge_base_version"]},
                         {"updated", kbr["knowledge_base_updated"]}};
  return a;
}

// The base's own 95 % CI of the median over its completed trials (order statistics).
json base_interval(const json& e) {
  std::vector<double> metrics;
  for (const auto& t : value_at(e, "/trials")) {
    if (t.value("arm", "") == "base" && t.value("status", "") == "complete" &&
        t["metric"].is_number())
      metrics.push_back(t["metric"].get<double>());
  }
  if (metrics.empty()) return nullptr;
  const stats::MedianInterval ci = stats::median_interval(metrics, 0.05);
  return {{"low", ci.lo}, {"high", ci.hi}, {"coverage", ci.coverage}, {"n", metrics.size()}};
}

// Throughput per arm with its CI, for the chart: the base's median with its own CI over its
// trials and the indifference band (base median x e^(+-tau)); each arm's median and the arm's
// paired CI mapped from percent onto the base median, with its verdict.
json arm_throughput(const json& e) {
  json arms = json::array();
  const json results = value_at(e, "/results");
  if (results.is_array() && !results.empty() && number_at(results[0], "/base_median")) {
    const double base = *number_at(results[0], "/base_median");
    json a = {{"arm", "base"},  {"median", base},
              {"low", nullptr}, {"high", nullptr},
              {"verdict", ""},  {"ci", "median of its trials, order statistics"}};
    if (const json ci = base_interval(e); ci.is_object()) {
      a["low"] = ci["low"];
      a["high"] = ci["high"];
      a["coverage"] = ci["coverage"];
    }
    if (const auto tau = number_at(e, "/calibration/tau")) {
      a["band"] = {{"name", fmt::format("indifference band, +-tau = {:.1f} % (A/A-calibrated)",
                                        100 * (std::exp(*tau) - 1))},
                   {"low", base * std::exp(-*tau)},
                   {"high", base * std::exp(*tau)}};
    }
    arms.push_back(a);
  }
  for (const auto& r : results) {
    const auto base = number_at(r, "/base_median");
    const auto median = number_at(r, "/arm_median");
    const auto lo = number_at(r, "/ci_pct/0"), hi = number_at(r, "/ci_pct/1");
    if (!median || r.value("role", "") == "base") continue;
    json a = {{"arm", r.value("arm", "")},
              {"median", *median},
              {"low", nullptr},
              {"high", nullptr},
              {"verdict", r.value("verdict", "")}};
    if (base && lo && hi) {
      a["low"] = *base * (1 + *lo / 100);
      a["high"] = *base * (1 + *hi / 100);
    }
    arms.push_back(a);
  }
  return arms;
}

json experiment_figures(const ExperimentData& x, const json& kb, const Criteria& c) {
  const json& e = x.experiment;
  // The host the trials ran on (its RAM sets the default memory budget): the base trial's.
  const auto host_mib =
      x.base ? number_at(x.base->manifest, "/hardware/memory/total_mib") : std::nullopt;
  json s = {{"dir", std::filesystem::absolute(x.dir).lexically_normal().string()},
            {"name", x.dir.string()},  // as given on the command line
            {"status", value_at(e, "/status")},
            {"message", value_at(e, "/message")},
            {"metric", value_at(e, "/design/metric")},
            {"rounds", value_at(e, "/design/rounds")},
            {"cache", value_at(e, "/design/cache")},
            {"calibration", value_at(e, "/calibration")},
            {"results", value_at(e, "/results")},
            {"decisions", decide_experiment(e, c, host_mib)},
            {"arm_throughput", arm_throughput(e)},
            {"staging", staging_break_even(e, x.base)},
            {"placement", decode_placement(e, x.dir)}};
  if (const json& cache = value_at(e, "/cache_at_window"); cache.is_object())
    s["cache_at_window"] = cache;  // --cache cold only
  s["base_run"] = x.base ? run_section(*x.base, kb) : json(nullptr);
  return s;
}

json experiment_section(const ExperimentData& x, const json& kb, const Criteria& c) {
  return naming_bad_figures({{x.dir / run_file::experiment, "", &x.experiment}},
                            [&] { return experiment_figures(x, kb, c); });
}

}  // namespace

// A job: its ranks side by side and the straggler per step (job.json as merged), and which of
// the report's runs is its slowest rank's.
json job_section(const JobData& j) {
  json out = j.job;
  out["name"] = j.dir.string();
  out["slowest_run"] = j.slowest ? json(j.slowest->dir.string()) : json(nullptr);
  return out;
}

json build_report(const ReportInputs& in) {
  json r;
  r["schema"] = "mmprof.report/2";
  r["mmprof"] = {{"version", version()}, {"commit", git_commit()}};
  r["criteria"] = {{"file", in.criteria_name}, {"values", in.criteria.source}};
  r["runs"] = json::array();
  for (const auto& run : in.runs)
    r["runs"].push_back(run_section(run, in.knowledge_base));
  r["jobs"] = json::array();
  for (const auto& j : in.jobs) {
    r["jobs"].push_back(job_section(j));
    if (j.slowest) r["runs"].push_back(run_section(*j.slowest, in.knowledge_base));
  }
  r["experiments"] = json::array();
  for (const auto& x : in.experiments)
    r["experiments"].push_back(experiment_section(x, in.knowledge_base, in.criteria));
  if (in.compare) {
    std::vector<Source> sources = sources_of(in.compare->first);
    for (const Source& s : sources_of(in.compare->second))
      sources.push_back(s);
    r["compare"] = naming_bad_figures(
        sources, [&] { return compare_runs(in.compare->first, in.compare->second, in.criteria); });
  } else {
    r["compare"] = nullptr;
  }
  std::vector<json> items;
  for (const auto& run : r["runs"])
    items.push_back(gate_run(run, in.criteria));
  for (const auto& x : r["experiments"]) {
    const std::string status = x["status"].is_string() ? x["status"].get<std::string>() : "unknown";
    if (status != "complete" && status != "stopped_early") {
      items.push_back({{"outcome", "inconclusive"},
                       {"reason", "experiment " + x["name"].get<std::string>() + " is " + status}});
    } else if (x["decisions"].empty()) {
      items.push_back({{"outcome", "inconclusive"},
                       {"reason", "experiment " + x["name"].get<std::string>() +
                                      " has no factor arm results"}});
    }
    for (const auto& d : x["decisions"])
      items.push_back(d);
  }
  if (!r["compare"].is_null()) items.push_back(r["compare"]);
  const GateResult g = gate(items, in.criteria);
  r["gate"] = {{"requested", in.gated}, {"exit_code", g.exit_code}, {"reason", g.reason}};
  return r;
}

}  // namespace mmprof::report
