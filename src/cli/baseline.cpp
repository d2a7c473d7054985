#include "cli/baseline.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cli/resume.hpp"
#include "mmprof/baseline.hpp"
#include "probe/clock.hpp"

namespace mmprof::cli {
namespace {

using nlohmann::json;

std::string num(const json& v, const char* f = "{:.1f}") {
  return v.is_number() ? fmt::format(fmt::runtime(f), v.get<double>()) : "n/a";
}

std::string dist_line(const char* name, const json& d) {
  return fmt::format("  {:<9} p50 {:>8}  p90 {:>8}  p99 {:>8}  max {:>8}  (n={})\n", name,
                     num(d["p50"], "{:.2f}"), num(d["p90"], "{:.2f}"), num(d["p99"], "{:.2f}"),
                     num(d["max"], "{:.2f}"), d["count"].get<size_t>());
}

}  // namespace

void setup_baseline(CLI::App& app, BaselineCliOptions& o) {
  add_run_options(app, o.run);
  app.add_flag("--json", o.json, "Print summary.json instead of the human summary");
  app.add_option("--resume", o.resume,
                 "Continue the interrupted run directory RUN from its checkpoint.json, with its "
                 "configuration, into a new run directory (--out, default RUN-resumed)");
}

std::string format_summary(const json& s) {
  const json& t = s["throughput"];
  std::string out = fmt::format("status: {}\n", s["status"].get<std::string>());
  out += "throughput (samples/s):\n";
  out += fmt::format("  compute ceiling   {:>10}\n", num(t["compute"]["samples_per_s"]));
  out += fmt::format("  pipeline only     {:>10}   ({} MB/s read)\n",
                     num(t["pipeline"]["samples_per_s"]), num(t["pipeline"]["mb_per_s"]));
  out += fmt::format("  end to end        {:>10}\n", num(t["end_to_end"]["samples_per_s"]));
  out += fmt::format("  predicted e2e     {:>10}   (min of pipeline and compute)\n",
                     num(t["predicted_end_to_end"]["samples_per_s"]));
  out += fmt::format("stall fraction: {}   time to first batch: {} ms\n",
                     s["stall_fraction"].is_number()
                         ? fmt::format("{:.1f}%", 100 * s["stall_fraction"].get<double>())
                         : "n/a",
                     num(s["time_to_first_batch_ms"]));
  const json& l = s["latency_ms"];
  out += fmt::format("latency (ms, {} phase):\n",
                     l["phase"].is_string() ? l["phase"].get<std::string>() : "no");
  out += dist_line("step", l["step"]);
  out += dist_line("wait", l["wait"]);
  out += "per-sample stages (ms, pipeline phase):\n";
  for (const char* stage : {"read", "decode", "augment", "collate", "pin"}) {
    out += dist_line(stage, l["stages"][stage]);
  }
  out += fmt::format("host memory: {}\n", l["pin_mode"].get<std::string>());
  out += fmt::format("errors: {} events over {} samples\n", s["errors"]["count"].get<int64_t>(),
                     s["errors"]["samples"].get<int64_t>());
  if (s.contains("epoch_boundary") && s["epoch_boundary"]["stall_ms"].is_number()) {
    const json& e = s["epoch_boundary"];
    out += fmt::format("epoch boundary: first batch waits {} ms (steady {} ms), {} workers\n",
                       num(e["stall_ms"], "{:.2f}"), num(e["pipeline"]["steady_wait_ms"], "{:.2f}"),
                       e["persistent_workers"].get<bool>() ? "persistent" : "non-persistent");
  }
  if (s.contains("reliability") && s["reliability"].contains("resume")) {
    const json& r = s["reliability"]["resume"];
    out += fmt::format("resumed {} from {} at batch {}: first batch {} ms after the restart\n",
                       r["phase"].get<std::string>(), r["from"].get<std::string>(),
                       r["start_batch_id"].get<uint64_t>(), num(r["time_to_first_batch_ms"]));
  }
  if (s.contains("trace")) {
    const json& tr = s["trace"];
    out += fmt::format("trace: {} events in {} ({} recorded, {} dropped at trace.max_events={})\n",
                       tr["events"].get<uint64_t>(), tr["file"].get<std::string>(),
                       tr["recorded_events"].get<uint64_t>(), tr["dropped_events"].get<uint64_t>(),
                       tr["max_events"].get<uint64_t>());
  }
  return out;
}

int run_baseline_command(const BaselineCliOptions& o, const std::vector<std::string>& argv,
                         const std::string& command, BaselineRunner runner) {
  const int64_t t_start = monotonic_ns();
  BaselineOptions b;
  ResolvedRun r;
  if (o.resume.empty()) {
    r = resolve_run(o.run);
    b.out = o.run.out.empty() ? default_out_dir(command) : o.run.out;
  } else {
    ResumedRun resumed = resolve_resume(o.resume, o.run, t_start);
    r = std::move(resumed.resolved);
    b.out = resumed.out;
    b.resume = std::move(resumed.point);
  }
  const Dataset dataset = open_dataset(r.config);
  b.argv = argv;
  b.config_tree = r.tree;
  b.repo = o.run.repo;
  b.progress = !o.json;
  const json summary = runner(r.config, dataset, b);
  if (o.json) {
    std::puts(summary.dump(2).c_str());
  } else {
    std::fputs(format_summary(summary).c_str(), stdout);
    std::printf("run directory: %s\n", std::filesystem::absolute(b.out).c_str());
  }
  return 0;
}

}  // namespace mmprof::cli
