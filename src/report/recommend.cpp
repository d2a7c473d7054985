// evaluate_knowledge_base and ab_command: which changes of the knowledge base fit this run, and
// the experiment that would confirm or refute each.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>

#include "config/config_keys.hpp"
#include "report/json_access.hpp"
#include "report/knowledge_base.hpp"
#include "util/shell_quote.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

// How hypotheses of a run without a step are to be read (report.json hypotheses_scope).
constexpr const char* kPipelineOnlyScope =
    "No step was measured (step.kind none): these raise the pipeline's own rate; whether the job "
    "gains depends on its step. Measure end to end (a step.kind, or your own job with mmprof "
    "baseline -- CMD) before adopting one.";

// The factor's values with $current, $double, $double_within_idle_cores and $cores filled in.
// `why_not`: set when a value cannot be rendered for this run (no idle host core to add on).
std::vector<std::string> render_values(const json& change, const json& analysis,
                                       const json& manifest, std::string& why_not) {
  const json current = run_config_value(change["factor"].get<std::string>(), manifest);
  std::vector<std::string> out;
  for (const auto& v : change["values"]) {
    const std::string s = value_text(v);
    if (s == "$current") {
      out.push_back(value_text(current));
    } else if (s == "$double" && current.is_number()) {
      out.push_back(value_text(json(std::max(1.0, 2 * current.get<double>()))));
    } else if (s == "$double_within_idle_cores" && current.is_number()) {
      // Each added process (a worker) wants what one of the run's own used: never more of them
      // than the host's idle cores hold (analysis cpu.idle_cores, host-wide), else they only
      // queue for a CPU; processes that mostly wait off CPU double whatever the host's load.
      const double now = current.get<double>();
      const auto idle = number_at(analysis, "/resources/cpu/idle_cores");
      const WorkerCoreNeed need = worker_core_need(analysis);
      const double add =
          need.waits ? std::max(1.0, now)
                     : std::min(std::max(1.0, now), std::floor(idle.value_or(0) / need.cores));
      if (add < 1) {
        why_not = idle ? fmt::format("{} cannot grow: {:.2f} host cores idle, {}",
                                     value_text(change["factor"]), *idle, need.text)
                       : "cannot verify: host idle cores not measured";
      }
      out.push_back(value_text(json(now + std::max(0.0, add))));
    } else if (s == "$cores") {
      out.push_back(
          value_text(json(number_at(analysis, "/resources/cpu/available_cores").value_or(1))));
    } else {
      out.push_back(s);
    }
  }
  return out;
}

bool pipeline_only_run(const json& analysis) {
  return value_at(analysis, "/classification/primary") == "pipeline-only";
}

bool contains(const json& list, const json& value) {
  return list.is_array() && std::find(list.begin(), list.end(), value) != list.end();
}

// Why one `addresses` alternative ({classification, stages, resources}) does not fit this run's
// limit; empty when it does.
std::string mismatch(const json& a, const json& analysis) {
  const json primary = value_at(analysis, "/classification/primary");
  if (a.contains("classification") && !contains(a["classification"], primary)) {
    return fmt::format("addresses {} runs; this run is {}", a["classification"].dump(),
                       value_text(primary));
  }
  json stage = value_at(analysis, "/stages/limit");
  // A job's __getitem__ is its read, decode and transforms together: a change for any of them
  // addresses it. What is left of it besides a timed loader and transforms (getitem_rest) is
  // its read, at most.
  if ((stage == "getitem" || stage == "getitem_rest") && a.contains("stages")) {
    const bool whole = stage == "getitem";
    for (const char* part : {"read", "decode", "augment"}) {
      if ((whole || std::string_view(part) == "read") && contains(a["stages"], part)) stage = part;
    }
  }
  const json resource = value_at(analysis, "/resources/limit");
  const bool any_target = a.contains("stages") || a.contains("resources");
  if (any_target && !contains(a.value("stages", json()), stage) &&
      !contains(a.value("resources", json()), resource)) {
    return fmt::format(
        "addresses stages {} / resources {}; the limit here is stage {}, resource {}",
        a.value("stages", json::array()).dump(), a.value("resources", json::array()).dump(),
        value_text(stage), value_text(resource));
  }
  return "";
}

// Why the change does not address this run's limit; empty when it does. `addresses` is one
// alternative or a list of them (a change may address input-bound runs through some stages and
// pipeline-only runs through others); the reason given is that of the alternative for this run's
// class, when there is one.
std::string irrelevance(const json& change, const json& analysis) {
  const json& addresses = change["addresses"];
  if (!addresses.is_array()) return mismatch(addresses, analysis);
  const json primary = value_at(analysis, "/classification/primary");
  std::string reason;
  for (const auto& a : addresses) {
    const std::string why = mismatch(a, analysis);
    if (why.empty()) return "";
    if (reason.empty() || contains(a.value("classification", json()), primary)) reason = why;
  }
  return reason;
}

// What to do before a command that compares the data where it is with a copy of it: make the
// copy its placeholder names. $LOCAL_COPY: `mmprof stage` (whose stage.json says what staging
// costs); $SHARDS: `mmprof shard` (tar shards balanced by bytes). Null without a placeholder.
json copy_step(const json& manifest, const std::string& command) {
  const json path = value_at(manifest, "/config/data/path");
  const auto bytes = number_at(manifest, "/data/total_bytes");
  const std::string room = bytes ? fmt::format(" with {:.0f} MB free", *bytes / 1e6) : "";
  const std::string data = path.is_string() ? shell_word(path.get<std::string>()) : "DATA";
  if (command.find("$LOCAL_COPY") != std::string::npos) {
    return fmt::format(
        "set LOCAL_COPY to a folder on local storage{} and stage the data there first: mmprof "
        "stage {} \"$LOCAL_COPY\"",
        room, data);
  }
  if (command.find("$SHARDS") != std::string::npos) {
    return fmt::format(
        "set SHARDS to a new folder{} and write the data there as tar shards first: mmprof shard "
        "{} --out \"$SHARDS\"",
        room, data);
  }
  return nullptr;
}

json hypothesis(const json& change, const json& analysis, const json& manifest,
                const std::string& command) {
  const std::string stage = value_text(value_at(analysis, "/stages/limit"));
  const std::string resource = value_text(value_at(analysis, "/resources/limit"));
  const std::string title = change["title"].get<std::string>();
  const bool pipeline_only = pipeline_only_run(analysis);
  const std::string text =
      pipeline_only
          ? fmt::format(
                "{} raises the pipeline's own rate: no step was measured, the "
                "pipeline is limited by stage {} (resource: {})",
                title, stage, resource)
          : fmt::format(
                "{} raises the run's throughput: the run is {}, limited by stage "
                "{} (resource: {})",
                title, value_text(value_at(analysis, "/classification/primary")), stage, resource);
  return {{"id", change["id"]},
          {"aimed_at", pipeline_only ? "pipeline rate" : "run throughput"},
          {"text", text},
          {"confirm_or_refute", command.empty() ? json(nullptr) : json(command)},
          {"refuted_if", "mmprof ab gives REJECT or EQUIVALENT for the changed arm"},
          // A change without a config key names the offline step to take instead, if it has one.
          {"note", command.empty()
                       ? change.value("offline_step", json("not testable with mmprof ab yet: no "
                                                           "config key"))
                       : copy_step(manifest, command)}};
}

}  // namespace

std::string ab_command(const json& manifest, const std::string& factor,
                       const std::vector<std::string>& values) {
  std::string cmd = "mmprof ab";
  const auto add = [&cmd](const std::string& word) {
    cmd += ' ';
    cmd += word;
  };
  const json argv = value_at(manifest, "/command");
  if (argv.is_array()) {
    // Keep how the run chose its configuration and data; drop --out and the rest. Relative
    // paths were relative to the run's working directory: made absolute (a URL stays).
    const std::filesystem::path cwd = string_at(manifest, "/cwd");
    auto path = [&](const std::string& p) {
      const bool url = p.find("://") != std::string::npos;
      return cwd.empty() || url || std::filesystem::path(p).is_absolute() ? p : (cwd / p).string();
    };
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      const std::string a = value_text(argv[i]);
      if (a == "--") break;  // a job's own arguments follow: appended below
      if (a == "--config" || a == "-c" || a == "--data") {
        add(a);
        add(shell_word(path(value_text(argv[i + 1]))));
        ++i;
      } else if (a == "--set") {
        add("--set");
        add(shell_word(value_text(argv[i + 1])));
        ++i;
      } else if (a.rfind("--set=", 0) == 0) {
        add(shell_word(a));
      }
    }
  }
  add("--factor");
  add(shell_word(fmt::format("{}={}", factor, fmt::join(values, ","))));
  // A user's job: the experiment launches the same command afresh for every trial.
  const json job = value_at(manifest, "/job/command");
  if (job.is_array() && !job.empty()) {
    add("--");
    for (const auto& w : job)
      add(shell_word(value_text(w)));
  }
  return cmd;
}

namespace {

// Why a change is not recommended to a job whose loader is no DataLoader (`foreign` says what
// it is). The DataLoader keys the hook applies to a DALI pipeline (num_workers as num_threads,
// prefetch_factor as prefetch_queue_depth) get the experiment that compares the pipeline's value
// with twice it, since nothing in the run tells whether more of its threads would help.
std::string foreign_loader_reason(const std::string& factor, const config::KeySpec* key,
                                  const json& manifest, const std::string& foreign) {
  // The DataLoader arguments the hook sets on a foreign loader's own settings: where each lands,
  // where the loader record holds its value, and why the run cannot weigh a change of it.
  struct Reach {
    const char* factor;
    const char* as;
    const char* pointer;
  };
  static constexpr std::array<Reach, 2> kDali = {
      {{"loader.num_workers", "num_threads", "/library/settings/num_threads"},
       {"loader.prefetch_factor", "prefetch_queue_depth",
        "/library/settings/prefetch_queue_depth"}}};
  static constexpr std::array<Reach, 2> kNodes = {
      {{"loader.num_workers", "loading ParallelMapper's worker processes", "/num_workers"},
       {"loader.prefetch_factor", "Prefetcher's prefetch_factor", "/prefetch_factor"}}};
  const json config = followed_loader_config(value_at(manifest, "/job"));
  const bool dali = loader_is_dali(config);
  for (const Reach& r : dali ? kDali : kNodes) {
    if (factor != r.factor) continue;
    const auto now = number_at(config, r.pointer);
    if (!now || *now < 1) break;
    const std::vector<std::string> values = {value_text(json(*now)), value_text(json(2 * *now))};
    return fmt::format(
        "the job's loader is {}; {} reaches it as its {} ({} now), but whether more helps is not "
        "established from this run ({}): compare with {}",
        foreign, factor, r.as, values[0],
        dali ? "DALI's threads are not worker processes to measure"
             : "the knowledge base weighs a DataLoader's workers and queue, not a graph's nodes",
        ab_command(manifest, factor, values));
  }
  return fmt::format(
      "{} is {}, and the job's loader is {}: try it on the stand-in, mmprof baseline --like RUN",
      factor,
      key != nullptr && !key->dataloader.empty() ? "a DataLoader argument"
                                                 : "a setting of mmprof's own loader",
      foreign);
}

}  // namespace

json evaluate_knowledge_base(const json& kb, const json& analysis, const json& manifest) {
  const json scope = pipeline_only_run(analysis) ? json(kPipelineOnlyScope) : json(nullptr);
  json out = {{"knowledge_base_version", kb["version"]},
              {"knowledge_base_updated", kb.value("updated", json(nullptr))},
              {"recommended", json::array()},
              {"excluded", json::array()},
              {"hypotheses", json::array()},
              {"hypotheses_scope", scope}};
  for (const auto& change : kb["changes"]) {
    json checks = json::array();
    std::string reason;
    // The first unmet precondition is the reason, but a software version that lacks the change
    // outranks the others: a torch without the argument is why, not the argument's value.
    bool version_reason = false;
    for (const auto& p : change["preconditions"]) {
      checks.push_back(check_precondition(p, analysis, manifest));
      if (checks.back()["ok"] == true) continue;
      const bool version = checks.back()["check"] == "version_at_least";
      if (reason.empty() || (version && !version_reason)) reason = checks.back()["detail"];
      version_reason = version_reason || version;
    }
    // A job tries only what its DataLoader takes: a setting of mmprof's own loader (its decoder,
    // its workers' mode) is no lever of the job's, whatever the preconditions say.
    const bool job = string_at(manifest, "/source", "") == "external";
    const config::KeySpec* key = change["factor"].is_string()
                                     ? config::find_key(change["factor"].get<std::string>())
                                     : nullptr;
    const std::string foreign =
        job ? not_a_dataloader(followed_loader_config(value_at(manifest, "/job"))) : "";
    if (!foreign.empty() && change["factor"].is_string()) {
      reason = foreign_loader_reason(change["factor"].get<std::string>(), key, manifest, foreign);
    } else if (job && change["factor"].is_string() && (key == nullptr || key->dataloader.empty())) {
      reason = fmt::format(
          "{} is a setting of mmprof's own loader, not an argument of the job's DataLoader (the "
          "job's __getitem__ does its own decoding): try it on the stand-in, mmprof baseline "
          "--like RUN",
          value_text(change["factor"]));
    }
    std::vector<std::string> values;
    std::string why_not;
    if (change["factor"].is_string()) values = render_values(change, analysis, manifest, why_not);
    if (reason.empty()) reason = why_not;
    if (reason.empty() && !values.empty() &&
        std::all_of(values.begin(), values.end(), [&](const auto& v) { return v == values[0]; })) {
      reason = fmt::format("already in effect: {} = {}", value_text(change["factor"]), values[0]);
    }
    if (reason.empty()) reason = irrelevance(change, analysis);
    if (reason.empty() && !values.empty() && job && key != nullptr &&
        run_config_value(change["factor"].get<std::string>(), manifest).is_null()) {
      reason =
          fmt::format("the job's torch {} has no DataLoader argument {}",
                      string_at(manifest, "/job/dataloader/versions/torch", "?"), key->dataloader);
    }
    if (!reason.empty()) {
      out["excluded"].push_back({{"id", change["id"]},
                                 {"title", change["title"]},
                                 {"reason", reason},
                                 {"preconditions", checks}});
      continue;
    }
    const std::string command =
        values.empty() ? "" : ab_command(manifest, change["factor"].get<std::string>(), values);
    json rec = change;
    rec["preconditions"] = checks;
    rec["experiment"] = command.empty() ? json(nullptr) : json(command);
    out["recommended"].push_back(rec);
    out["hypotheses"].push_back(hypothesis(change, analysis, manifest, command));
  }
  return out;
}

}  // namespace mmprof::report
