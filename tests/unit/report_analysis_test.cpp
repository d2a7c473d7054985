// report/analysis, series, csv_table: classification thresholds, stage and resource
// attribution, and the summary figures recomputed from the fixture run's CSV files.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "mmprof/error.hpp"
#include "report/analysis.hpp"
#include "report/inputs.hpp"
#include "report/series.hpp"
#include "rundir/csv_table.hpp"
#include "support/test_support.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

json summary_with_stall(double stall) {
  return {{"stall_fraction", stall},
          {"latency_ms", {{"step", {{"mean", 100.0}}}, {"compute", {{"mean", 80.0}}}}}};
}

TEST(ReportClassify, TensorFlowProfilerThresholds) {
  EXPECT_EQ(input_bound_level(0.0), "not");
  EXPECT_EQ(input_bound_level(0.0499), "not");
  EXPECT_EQ(input_bound_level(0.05), "moderately");
  EXPECT_EQ(input_bound_level(0.1999), "moderately");
  EXPECT_EQ(input_bound_level(0.20), "highly");
  EXPECT_EQ(classify(test::typed(summary_with_stall(0.3)))["primary"], "input-bound");
  EXPECT_EQ(classify(test::typed(summary_with_stall(0.01)))["primary"], "compute-bound");
  EXPECT_DOUBLE_EQ(classify(test::typed(summary_with_stall(0.01)))["compute_share"].get<double>(),
                   0.8);
}

TEST(ReportClassify, TransferBoundWhenCopiesTakeAFifthOfTheStep) {
  json s = summary_with_stall(0.01);
  s["latency_ms"]["h2d"] = {{"mean", 25.0}};
  EXPECT_EQ(classify(test::typed(s))["primary"], "transfer-bound");
  s["latency_ms"]["h2d"]["mean"] = 15.0;
  EXPECT_EQ(classify(test::typed(s))["primary"], "compute-bound");
}

TEST(ReportClassify, PipelineOnlyWithoutAnEndToEndPhase) {
  const json c = classify(test::typed(json{{"stall_fraction", nullptr}}));
  EXPECT_EQ(c["primary"], "pipeline-only");
  EXPECT_TRUE(c["input_bound"].is_null());
}

// A user's job is end to end: with no stall, none of its steps was measured, and why is said
// (its failure, a hook that saw no DataLoader) instead of "step.kind none".
TEST(ReportClassify, AJobWithNoMeasuredStepIsNotEstablishedAndSaysWhy) {
  json s = {{"source", "external"},
            {"stall_fraction", nullptr},
            {"status", "failed"},
            {"message", "the job (python3) ended with exit code 1: it raised OSError: gone"}};
  json c = classify(test::typed(s));
  EXPECT_EQ(c["primary"], "not-established");
  EXPECT_EQ(c["why"],
            "no step of the job was measured: the job (python3) ended with exit code 1: it raised "
            "OSError: gone");
  s["status"] = "complete";
  s["job"]["hook"]["status"] = "unavailable: the job never imported torch's DataLoader";
  EXPECT_EQ(classify(test::typed(s))["why"],
            "no step of the job was measured: the DataLoader hook is unavailable: the job never "
            "imported torch's DataLoader");
  s["job"]["hook"]["status"] = "ok";
  EXPECT_EQ(classify(test::typed(s))["why"],
            "no step of the job was measured: its followed loader delivered no batch after the "
            "warm-up");
}

TEST(ReportPrediction, InterferenceBelowNinetyPercent) {
  json s;
  s["throughput"]["predicted_end_to_end"]["samples_per_s"] = 100.0;
  s["throughput"]["end_to_end"]["samples_per_s"] = 89.0;
  EXPECT_EQ(prediction(test::typed(s))["interference"], true);
  s["throughput"]["end_to_end"]["samples_per_s"] = 95.0;
  EXPECT_EQ(prediction(test::typed(s))["interference"], false);
  EXPECT_DOUBLE_EQ(prediction(test::typed(s))["ratio"].get<double>(), 0.95);
}

TEST(ReportStages, PerBatchCostAndResidualHandoff) {
  json s, m;
  m["config"]["loader"] = {{"batch_size", 8}, {"num_workers", 4}};
  s["latency_ms"]["stages"] = {{"read", {{"mean", 1.0}}},
                               {"decode", {{"mean", 10.0}}},
                               {"augment", {{"mean", 2.0}}},
                               {"collate", {{"mean", 4.0}}}};
  s["throughput"]["pipeline"]["batches_per_s"] = 10.0;  // 100 ms per batch
  const json a = attribute_stages(test::typed(s), m);
  EXPECT_DOUBLE_EQ(a["per_batch_ms"]["decode"].get<double>(), 20.0);  // 10 x 8 / 4
  EXPECT_DOUBLE_EQ(a["per_batch_ms"]["collate"].get<double>(), 1.0);
  // 100 - (2 + 20 + 4 + 1) = 73 ms unexplained by the stage timers.
  EXPECT_DOUBLE_EQ(a["per_batch_ms"]["ipc"].get<double>(), 73.0);
  EXPECT_EQ(a["limit"], "ipc");
  EXPECT_TRUE(a["per_batch_ms"]["pin"].is_null());
}

TEST(ReportResources, SaturationAgainstTheManifest) {
  json s, m;
  s["cpu"] = {{"utilization_cores", 3.5}, {"effective_cores", 4.0}};
  s["io"] = {{"read_mb_per_s", 90.0}, {"rchar_mb_per_s", 100.0}};
  m["storage"]["probe"]["sequential"]["mb_per_s"] = 100.0;
  const json r = attribute_resources(test::typed(s), m);
  EXPECT_EQ(r["cpu"]["saturated"], true);
  EXPECT_EQ(r["storage"]["saturated"], true);
  EXPECT_EQ(r["limit"], "storage");
  EXPECT_NEAR(r["storage"]["page_cache_share"].get<double>(), 0.1, 1e-12);
  // A run that says where its loader's bytes came from (summary "locality") is taken at its word
  // rather than its processes' read() bytes, which count mmprof's own /proc reads too.
  json located = s;
  located["locality"] = {{"cache", "cold"},
                         {"phases", {{"pipeline", {{"page_cache_fraction", 0.25}}}}}};
  const json l = attribute_resources(test::typed(located), m);
  EXPECT_DOUBLE_EQ(l["storage"]["page_cache_share"].get<double>(), 0.25);
  EXPECT_EQ(l["storage"]["cache"], "cold");
  EXPECT_EQ(l["storage"]["page_cache_source"],
            "locality.phases.pipeline: loader bytes vs device read_bytes");
  EXPECT_EQ(r["gpu"]["measured"], false);
  s["gpu"] = {
      {"idle_fraction", 0.04}, {"data_wait_idle_fraction", 0.03}, {"kernel_busy_fraction", 0.95}};
  const json busy = attribute_resources(test::typed(s), m);
  EXPECT_EQ(busy["gpu"]["saturated"], true);
  EXPECT_DOUBLE_EQ(busy["gpu"]["data_wait_idle_fraction"].get<double>(), 0.03);
  s.erase("gpu");
  m.erase("storage");
  const json no_probe = attribute_resources(test::typed(s), m);
  EXPECT_TRUE(no_probe["storage"]["saturated"].is_null());
  EXPECT_EQ(no_probe["limit"], "cpu");
}

// Delivered batches averaged 24 of 32 samples (short batches at every epoch's end): the stage
// model scales the per-sample means by 24, not by loader.batch_size.
TEST(ReportStages, PerSampleStagesScaleWithTheDeliveredBatchNotTheConfiguredOne) {
  json s, m;
  m["config"]["loader"] = {{"batch_size", 32}, {"num_workers", 2}};
  s["latency_ms"]["stages"] = {{"read", {{"mean", 1.0}}},
                               {"decode", {{"mean", 100.0}}},
                               {"augment", {{"mean", 4.0}}},
                               {"collate", {{"mean", 2.0}}}};
  s["throughput"]["pipeline"] = {{"batches_per_s", 0.75}, {"samples_per_batch", 24.0}};
  const json a = attribute_stages(test::typed(s), m);
  EXPECT_DOUBLE_EQ(a["samples_per_batch"].get<double>(), 24.0);
  EXPECT_DOUBLE_EQ(a["per_batch_ms"]["decode"].get<double>(), 1200.0);  // 100 x 24 / 2
  EXPECT_DOUBLE_EQ(a["per_batch_ms"]["read"].get<double>(), 12.0);
  // Period 1333.3 ms; explained 12 + 1200 + 48 + 1 = 1261 ms: 72.3 ms left for the hand-over.
  EXPECT_NEAR(a["per_batch_ms"]["ipc"].get<double>(), 1000.0 / 0.75 - 1261.0, 1e-9);
  EXPECT_DOUBLE_EQ(a["model_overshoot_ms"].get<double>(), 0.0);
  EXPECT_TRUE(a["note"].is_null());
  EXPECT_NE(a["basis"].get<std::string>().find("24 samples per delivered batch"), std::string::npos)
      << a["basis"];

  // An older summary without the figure: samples_per_s / batches_per_s of the same window.
  s["throughput"]["pipeline"].erase("samples_per_batch");
  s["throughput"]["pipeline"]["samples_per_s"] = 18.0;
  EXPECT_DOUBLE_EQ(attribute_stages(test::typed(s), m)["per_batch_ms"]["decode"].get<double>(),
                   1200.0);
  // Nothing delivered to go by: the configured size, and the basis says so.
  s["throughput"]["pipeline"].erase("samples_per_s");
  const json nominal = attribute_stages(test::typed(s), m);
  EXPECT_DOUBLE_EQ(nominal["per_batch_ms"]["decode"].get<double>(), 1600.0);
  EXPECT_NE(nominal["basis"].get<std::string>().find("the configured batch_size"),
            std::string::npos);
}

// When the stages explain more than the measured period, the residual is not clamped to 0: ipc
// is null and the overshoot is reported with why.
// Issue 31: a job's __getitem__ splits into its dataset's loader (decode), its transforms
// (augment) and the rest where the hook timed them; a __getitems__ dataset's figure is one call
// per batch, not one sample (multiplying it by the batch counted each batch 8 times).
TEST(ReportStages, AJobsGetitemSplitsIntoItsLoaderAndTransformsAndAGetitemsCallIsOneBatch) {
  json s;
  s["source"] = "external";
  s["job"]["dataloader"]["loaders"] =
      json::array({{{"followed", true}, {"config", {{"batch_size", 8}, {"num_workers", 2}}}}});
  s["throughput"]["end_to_end"]["samples_per_batch"] = 8;
  s["latency_ms"]["step"]["mean"] = 100;
  s["stall_fraction"] = 0.4;
  s["latency_ms"]["stages"]["getitem"]["mean"] = 20;
  s["latency_ms"]["stages"]["decode"]["mean"] = 12;
  s["latency_ms"]["stages"]["augment"]["mean"] = 6;
  s["latency_ms"]["stages"]["collate"]["mean"] = 2;
  json a = attribute_stages(test::typed(s), json::object());
  EXPECT_DOUBLE_EQ(a["per_batch_ms"]["decode"].get<double>(), 48);  // 12 x 8 / 2
  EXPECT_DOUBLE_EQ(a["per_batch_ms"]["augment"].get<double>(), 24);
  EXPECT_DOUBLE_EQ(a["per_batch_ms"]["getitem_rest"].get<double>(), 8);  // (20 - 18) x 8 / 2
  EXPECT_FALSE(a["per_batch_ms"].contains("getitem"));
  EXPECT_EQ(a["limit"], "decode");
  EXPECT_NE(a["basis"].get<std::string>().find("the dataset's loader (decode)"), std::string::npos);

  s["latency_ms"]["stages"].erase("decode");
  s["latency_ms"]["stages"].erase("augment");
  s["latency_ms"]["stages"]["getitem"]["mean"] = 80;  // one __getitems__ call: 8 samples
  s["latency_ms"]["getitem_per_call"] = true;
  a = attribute_stages(test::typed(s), json::object());
  EXPECT_DOUBLE_EQ(a["per_batch_ms"]["getitem"].get<double>(), 40);  // 80 / 2 workers
  EXPECT_NE(a["basis"].get<std::string>().find("1 __getitems__ call per batch"), std::string::npos);
  EXPECT_FALSE(a.contains("limit_not_established"));

  // A job with no measured step: its stage times are the warm-up's, and they limit nothing.
  s.erase("stall_fraction");
  a = attribute_stages(test::typed(s), json::object());
  EXPECT_TRUE(a["limit"].is_null());
  EXPECT_NE(a["limit_not_established"].get<std::string>().find("no step of the job was measured"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(a["per_batch_ms"]["getitem"].get<double>(), 40);  // still shown, as measured
}

TEST(ReportStages, AModelAboveTheMeasuredPeriodSaysSoInsteadOfClampingIpc) {
  json s, m;
  m["config"]["loader"] = {{"batch_size", 32}, {"num_workers", 2}};
  s["latency_ms"]["stages"] = {{"decode", {{"mean", 100.0}}}};
  s["throughput"]["pipeline"] = {{"batches_per_s", 1.0}, {"samples_per_batch", 24.0}};
  const json a = attribute_stages(test::typed(s), m);
  EXPECT_TRUE(a["per_batch_ms"]["ipc"].is_null());
  EXPECT_DOUBLE_EQ(a["explained_ms"].get<double>(), 1200.0);
  EXPECT_DOUBLE_EQ(a["model_overshoot_ms"].get<double>(), 200.0);
  EXPECT_NE(a["note"].get<std::string>().find("200.0 ms (20 %) more than the measured batch "
                                              "period of 1000.0 ms"),
            std::string::npos)
      << a["note"];
  EXPECT_EQ(a["limit"], "decode");
}

json cpu_summary(double used, double host_busy, double workers_delay) {
  json s;
  s["cpu"] = {{"utilization_cores", used},
              {"effective_cores", 2.0},
              {"host",
               {{"cpus", 2},
                {"busy_fraction", host_busy},
                {"steal_fraction", 0.0},
                {"iowait_fraction", 0.01},
                {"others_busy_cores", 2 * host_busy - used}}},
              {"pressure", {{"available", true}, {"some_fraction", 0.6}}},
              {"run_queue_delay", {{"workers_mean_fraction", workers_delay}}}};
  return s;
}

// The issue's host: mmprof used 0.54 of 2 cores while other processes kept both busy, and the
// workers waited to run 38 % of their time.
TEST(ReportResources, WorkersWaitingToRunAreCpuContendedAndIdleCoresAreTheHosts) {
  const json contended = cpu_summary(0.54, 0.97, 0.38);
  const json r = attribute_resources(test::typed(contended), json::object());
  EXPECT_EQ(r["cpu"]["contended"], true);
  EXPECT_EQ(r["cpu"]["saturated"], true);  // the host's CPUs, not mmprof's own use
  EXPECT_NEAR(r["cpu"]["idle_cores"].get<double>(), 2 * 0.03, 1e-12);  // not 2 - 0.54
  EXPECT_NEAR(r["cpu"]["host_busy_cores"].get<double>(), 1.94, 1e-12);
  EXPECT_EQ(r["limit"], "cpu");
  const json c = classify(test::typed(contended));
  EXPECT_EQ(c["cpu_contended"], true);
  EXPECT_NE(c["why"].get<std::string>().find("CPU-contended: the workers waited for a CPU 38.0 % "
                                             "of their time (>= 10 %): other processes kept 1.40 "
                                             "of the run's CPUs busy"),
            std::string::npos)
      << c["why"];
  const std::string text = cpu_text(r["cpu"]);
  EXPECT_NE(text.find("mmprof used 0.54 of 2 cores; the host kept its 2 CPUs busy 1.94 cores"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("CPU-contended (>= 10 %)"), std::string::npos) << text;

  // A quiet host: the same use is not contention, and the idle cores are the host's.
  const json quiet = cpu_summary(0.54, 0.30, 0.02);
  const json q = attribute_resources(test::typed(quiet), json::object());
  EXPECT_EQ(q["cpu"]["contended"], false);
  EXPECT_EQ(q["cpu"]["saturated"], false);
  EXPECT_NEAR(q["cpu"]["idle_cores"].get<double>(), 1.4, 1e-12);  // min(2 x 0.7, 2 - 0.54)
  EXPECT_EQ(q["limit"], "none saturated");
  EXPECT_EQ(classify(test::typed(quiet))["cpu_contended"], false);
  EXPECT_EQ(classify(test::typed(quiet))["why"].get<std::string>().find("CPU-contended"),
            std::string::npos);
  EXPECT_EQ(cpu_text(q["cpu"]).find("CPU-contended"), std::string::npos);

  // A run before host figures: mmprof's own use, and it says so.
  json old;
  old["cpu"] = {{"utilization_cores", 0.54}, {"effective_cores", 2.0}};
  const json o = attribute_resources(test::typed(old), json::object());
  EXPECT_NEAR(o["cpu"]["idle_cores"].get<double>(), 1.46, 1e-12);
  EXPECT_NE(o["cpu"]["idle_cores_source"].get<std::string>().find("no host CPU figures"),
            std::string::npos);
  EXPECT_TRUE(o["cpu"]["contended"].is_null());
  EXPECT_TRUE(classify(test::typed(old))["cpu_contended"].is_null());
}

// Issue 32 case 8: decode in the main process (no worker), which waited for a CPU 90 % of its
// time while no worker existed to wait: the run is CPU-contended, and says who waited.
TEST(ReportResources, AMainProcessWaitingToRunIsCpuContendedToo) {
  json s = cpu_summary(0.9, 0.99, 0.0);
  s["cpu"]["run_queue_delay"] = {{"workers_mean_fraction", nullptr}, {"main_fraction", 0.9}};
  const json r = attribute_resources(test::typed(s), json::object());
  EXPECT_EQ(r["cpu"]["contended"], true);
  const json c = classify(test::typed(s));
  EXPECT_EQ(c["cpu_contended"], true);
  EXPECT_NE(c["why"].get<std::string>().find("CPU-contended: the main process waited for a CPU "
                                             "90.0 % of its time (>= 10 %): other processes kept "
                                             "1.08 of the run's CPUs busy"),
            std::string::npos)
      << c["why"];
  const std::string text = cpu_text(r["cpu"]);
  EXPECT_NE(text.find("; the main process waited for a CPU 90.0 % of its time: CPU-contended"),
            std::string::npos)
      << text;
  // Both waited: both are named.
  s["cpu"]["run_queue_delay"]["workers_mean_fraction"] = 0.2;
  EXPECT_NE(classify(test::typed(s))["why"].get<std::string>().find(
                "the workers waited for a CPU 20.0 % of their time, and the main process waited "
                "for a CPU 90.0 % of its time"),
            std::string::npos);
  EXPECT_NE(cpu_text(attribute_resources(test::typed(s), json::object())["cpu"])
                .find("workers waited for a CPU 20.0 % of their time, the main process 90.0 % of "
                      "its: CPU-contended"),
            std::string::npos);
  // A main process that hardly waited, and workers that did not: not contended.
  s["cpu"]["run_queue_delay"] = {{"workers_mean_fraction", 0.01}, {"main_fraction", 0.05}};
  EXPECT_EQ(classify(test::typed(s))["cpu_contended"], false);
}

// A figure the sampler could not read is null in summary.json (a worker seen only as it exited):
// the report reads it as missing rather than failing (it did, on a worker's swap_peak_mib).
TEST(ReportResources, ANullWorkerFigureIsMissingNotAnError) {
  json s, m;
  s["memory"]["workers"] =
      json::array({{{"pid", 7}, {"swap_peak_mib", nullptr}}, {{"pid", 8}, {"swap_peak_mib", 3.0}}});
  s["memory"]["host_peak_mib"] = 100.0;
  s["memory"]["host_total_mib"] = 1000.0;
  const json r = attribute_resources(test::typed(s), m);
  EXPECT_DOUBLE_EQ(r["memory"]["swap_peak_mib"].get<double>(), 3.0);
  EXPECT_EQ(r["memory"]["pressure"], true);  // swapping
}

// RFC 4180 records: a quoted cell holds commas, newlines and doubled quotes; a CRLF file reads as
// an LF one; the last record cut short by an interrupted write is left out, a short record
// before it is an error naming its row.
TEST(ReportCsv, QuotedFieldsCrlfAndACutShortLastRecord) {
  const std::string text = "key,ms\r\n\"a,\"\"b\"\"\",1.5\r\n\"two\nlines\",\nc,2\nd";
  rundir::CsvReader csv(text, "t.csv");
  EXPECT_EQ(csv.header(), (std::vector<std::string>{"key", "ms"}));
  std::vector<std::pair<std::string, std::string>> rows;
  while (csv.next())
    rows.emplace_back(csv.cell(0), csv.cell(1));
  EXPECT_EQ(rows, (std::vector<std::pair<std::string, std::string>>{
                      {"a,\"b\"", "1.5"}, {"two\nlines", ""}, {"c", "2"}}));
  EXPECT_EQ(csv.require("ms"), 1u);
  EXPECT_THROW(csv.require("nope"), InputError);
  rundir::CsvReader bad("key,ms\na,1\nb\nc,3\n", "bad.csv");
  ASSERT_TRUE(bad.next());
  const std::string e = test::message_of<InputError>([&] { bad.next(); });
  EXPECT_EQ(e, "bad.csv row 3 has 1 fields where the header has 2");
  EXPECT_THROW(rundir::CsvReader("", "empty.csv"), InputError);
}

TEST(ReportSeries, CdfIsMonotoneAndEndsAtTheMaximum) {
  std::vector<StepRow> steps;
  for (const auto& [phase, wait] :
       std::vector<std::pair<std::string, double>>{{"p", 3}, {"p", 1}, {"p", 2}, {"q", 100}}) {
    StepRow row;
    row.phase = phase;
    row.wait_ms = wait;
    steps.push_back(row);
  }
  const json cdf = latency_cdf(steps, "p", StepFigure::wait);
  EXPECT_DOUBLE_EQ(cdf.front()[0].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(cdf.back()[0].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(cdf.back()[1].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(cdf[10][0].get<double>(), 2.0);  // p50
  EXPECT_DOUBLE_EQ(cdf[10][1].get<double>(), 0.5);
  for (size_t i = 1; i < cdf.size(); ++i) {
    EXPECT_GE(cdf[i][0].get<double>(), cdf[i - 1][0].get<double>());
    EXPECT_GT(cdf[i][1].get<double>(), cdf[i - 1][1].get<double>());
  }
  // Three steps resolve no tail percentile (above 1 - 1/3): p85 is the last before the maximum.
  EXPECT_DOUBLE_EQ(cdf[cdf.size() - 2][1].get<double>(), 0.85);
}

// The tail is resolved as far as the steps allow: 1000 steps give p99.9 (the 999th of 1000
// values), not p99.91; between the decades a point per tenth.
TEST(ReportSeries, CdfTailReachesP999WithAThousandSteps) {
  std::vector<StepRow> steps(1000);
  for (size_t i = 0; i < steps.size(); ++i) {
    steps[i].phase = "e";
    steps[i].step_ms = static_cast<double>(i + 1);
  }
  const json cdf = latency_cdf(steps, "e", StepFigure::step);
  const json& last = cdf[cdf.size() - 2];
  EXPECT_NEAR(last[1].get<double>(), 0.999, 1e-12);
  EXPECT_NEAR(last[0].get<double>(), 999.001, 1e-6);  // interpolated, type 7
  EXPECT_EQ(cdf.size(), 18u + 9 + 9 + 1 + 1);         // to p85, p90-p98, p99-p99.8, p99.9, max
  for (size_t i = 1; i < cdf.size(); ++i)
    EXPECT_GT(cdf[i][1].get<double>(), cdf[i - 1][1].get<double>());
  EXPECT_DOUBLE_EQ(cdf.back()[0].get<double>(), 1000);
}

// The sampler reads PSS less often than RSS (seconds apart for a large process): a process's line
// is its RSS over its whole life (a PSS line stopped at the last PSS read, 10 s into a 28 s job),
// its PSS the dots apart, never mixed in. A job's process is named by its most specific role
// (external until the hook names it main), mmprof itself and its helper by what they are.
TEST(ReportSeries, MemoryLinesAreWholeRssWithPssDotsAndNamedProcesses) {
  std::vector<ResourceRow> rows;
  const auto row = [&](int pid, const char* role, int64_t t_ms, int64_t rss,
                       std::optional<int64_t> pss, const char* phase) {
    ResourceRow r;
    r.pid = pid;
    r.role = role;
    if (std::string(role) == "worker") r.worker = 0;
    r.t_ns = t_ms * 1'000'000;
    r.rss_kb = rss;
    r.pss_kb = pss;
    r.phase = phase;
    rows.push_back(r);
  };
  row(1, "observer", 0, 4096, 2048, "warmup");
  row(3, "external", 0, 1024, 512, "warmup");
  row(4, "observer", 0, 512, 256, "warmup");
  row(3, "main", 100, 2048, std::nullopt, "warmup");
  row(2, "worker", 100, 1024, std::nullopt, "warmup");
  row(3, "main", 200, 3072, 1536, "end_to_end");
  row(3, "main", 300, 4096, std::nullopt, "end_to_end");
  row(3, "main", 400, 0, std::nullopt, "end_to_end");  // exited: a zombie's RSS is no size
  const json m = memory_series(rows);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0]["process"], "mmprof (pid 1)");
  EXPECT_EQ(m[1]["process"], "main (pid 3)");
  EXPECT_EQ(m[2]["process"], "mmprof helper (pid 4)");
  EXPECT_EQ(m[3]["process"], "worker 0 (pid 2)");
  EXPECT_EQ(m[1]["points"], (json{{0.0, 1.0}, {0.1, 2.0}, {0.2, 3.0}, {0.3, 4.0}}));  // RSS, MiB
  EXPECT_EQ(m[1]["pss"], (json{{0.0, 0.5}, {0.2, 1.5}}));
  EXPECT_EQ(m[1]["phases"], (json{{{"phase", "warmup"}, {"from_s", 0.0}},
                                  {{"phase", "end_to_end"}, {"from_s", 0.2}}}));
  EXPECT_EQ(m[3]["points"], (json{{0.1, 1.0}}));
  EXPECT_EQ(m[3]["pss"], json::array());
}

// Each measured step's time split into the wait for its batch, its copy, its compute, a sync and
// the rest; parts no step has are left out; many steps are averaged into columns.
TEST(ReportSeries, StepBreakdownSplitsEachStepAndAveragesRunsOfSteps) {
  std::vector<StepRow> steps;
  for (int i = 0; i < 6; ++i) {
    StepRow r;
    r.step = i;
    r.phase = i < 2 ? "pipeline" : "end_to_end";
    r.wait_ms = 10.0 * i;
    r.compute_ms = 50;
    r.h2d_ms = i == 5 ? std::optional<double>(4.0) : std::nullopt;
    r.step_ms = r.wait_ms + 50 + r.h2d_ms.value_or(0) + 1;  // 1 ms of the step's own rest
    steps.push_back(r);
  }
  const json b = step_breakdown(steps, "end_to_end");
  EXPECT_EQ(b["parts"], (json{"wait", "h2d", "compute", "other"}));
  ASSERT_EQ(b["columns"].size(), 4u);
  EXPECT_EQ(b["columns"][0]["first_step"], 2);
  EXPECT_EQ(b["columns"][3]["ms"], (json{50.0, 4.0, 50.0, 1.0}));
  const json two = step_breakdown(steps, "end_to_end", 2);  // 4 steps: 2 columns of 2
  ASSERT_EQ(two["columns"].size(), 2u);
  EXPECT_EQ(two["columns"][1]["first_step"], 4);
  EXPECT_EQ(two["columns"][1]["last_step"], 5);
  EXPECT_EQ(two["columns"][1]["ms"], (json{45.0, 2.0, 50.0, 1.0}));
  EXPECT_TRUE(step_breakdown(steps, "compute").is_null());
}

// A user's own job's rows (the external hook) have only the whole __getitem__: ranked by it, the
// stages not measured are null and left out of the stage means.
TEST(ReportSeries, SlowestSamplesRankHookRowsByGetitemAndStageMeansSkipTheUnmeasured) {
  std::vector<StageRow> rows(3);
  rows[0].key = "own";
  rows[0].phase = "end_to_end";
  rows[0].read_ms = 1;
  rows[0].decode_ms = 2;
  rows[0].augment_ms = 3;
  rows[1].key = "hook";
  rows[1].phase = "end_to_end";
  rows[1].getitem_ms = 20;
  rows[2].key = "nothing";  // neither: not a sample time at all
  rows[2].phase = "end_to_end";
  const json slow = slowest_samples(rows, "end_to_end", 5);
  ASSERT_EQ(slow.size(), 2u);
  EXPECT_EQ(slow[0]["key"], "hook");
  EXPECT_DOUBLE_EQ(slow[0]["total_ms"].get<double>(), 20);
  EXPECT_DOUBLE_EQ(slow[0]["getitem_ms"].get<double>(), 20);
  EXPECT_TRUE(slow[0]["decode_ms"].is_null());
  EXPECT_DOUBLE_EQ(slow[1]["total_ms"].get<double>(), 6);
  EXPECT_FALSE(slow[1].contains("getitem_ms"));
  EXPECT_DOUBLE_EQ(stage_mean(rows, "end_to_end", StageFigure::decode).value_or(0), 2);
  rows.erase(rows.begin());
  EXPECT_FALSE(stage_mean(rows, "end_to_end", StageFigure::read).has_value());
}

// The fixture run's summary.json was written from the same samples as its CSV files: the
// analysis must find them in agreement (the independent path to each figure).
TEST(ReportFixtureRun, CrossChecksAgreeAndFactsNameTheirMetric) {
  const RunData run = load_run(test::source_dir() / "tests/fixtures/report/run-input-bound");
  const json a = analyze_run(run);
  ASSERT_EQ(a["cross_checks"].size(), 4u);
  for (const auto& c : a["cross_checks"])
    EXPECT_EQ(c["ok"], true) << c.dump();
  EXPECT_EQ(a["classification"]["input_bound"], "highly");
  EXPECT_EQ(a["stages"]["limit"], "decode");
  EXPECT_EQ(a["resources"]["limit"], "storage");
  for (const auto& f : a["facts"]) {
    EXPECT_FALSE(f["metric"].get<std::string>().empty());
    EXPECT_FALSE(f["value"].is_null());
  }
  EXPECT_EQ(a["slowest_samples"][0]["key"], "<script>alert(1)</script>.jpg");
  ASSERT_EQ(a["charts"]["memory"].size(), 3u);  // main and two workers
}

// End to end above the pipeline's own rate (or the compute ceiling) cannot happen in steady
// state: 5 % above is caveated in the facts, not only beyond the 11 % the prediction note used.
TEST(ReportFixtureRun, EndToEndAboveThePipelinesRateIsCaveated) {
  RunData run = load_run(test::source_dir() / "tests/fixtures/report/run-input-bound");
  Throughput& t = run.summary.throughput;
  t.pipeline.samples_per_s = 100.0;
  t.compute.samples_per_s = 200.0;
  t.predicted_end_to_end = 100.0;
  t.end_to_end.samples_per_s = 105.0;
  const json a = analyze_run(run);
  ASSERT_EQ(a["caveats"].size(), 1u);
  EXPECT_EQ(a["caveats"][0]["id"], "end_to_end_above_pipeline");
  bool caveated = false;
  for (const auto& f : a["facts"]) {
    if (f["id"] != "caveat.end_to_end_above_pipeline") continue;
    caveated = true;
    EXPECT_NE(f["text"].get<std::string>().find(
                  "end to end (105.0 samples/s) is 5.0 % above the pipeline's own rate (100.0 "
                  "samples/s), which steady state cannot give"),
              std::string::npos)
        << f["text"];
    EXPECT_EQ(f["metric"], "throughput.end_to_end / throughput.pipeline");
    EXPECT_DOUBLE_EQ(f["value"].get<double>(), 1.05);
  }
  EXPECT_TRUE(caveated) << a["facts"].dump();
  // Above both bounds: two caveats; below both: none.
  t.end_to_end.samples_per_s = 250.0;
  EXPECT_EQ(ordering_caveats(run.summary).size(), 2u);
  EXPECT_EQ(ordering_caveats(run.summary)[1]["id"], "end_to_end_above_compute");
  t.end_to_end.samples_per_s = 99.0;
  EXPECT_TRUE(ordering_caveats(run.summary).empty());
  t.end_to_end = {};  // no step: nothing to order
  EXPECT_TRUE(ordering_caveats(run.summary).empty());
}

TEST(ReportInputs, ForeignDirectoriesAreRefusedByName) {
  test::TempDir dir;
  try {
    input_kind(dir.path());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.path().string()), std::string::npos);
  }
  EXPECT_THROW(latest_input(dir.path()), InputError);
}

// Issue 33 item 13: the latest run is the one whose manifest was written last, not the folder
// touched last (a report written into an older run touches its folder).
TEST(ReportInputs, TheLatestRunIsTheOneWhoseManifestWasWrittenLast) {
  test::TempDir dir;
  const auto run = [&](const char* name, int minutes_ago) {
    const std::filesystem::path p = dir.path() / name;
    std::filesystem::create_directories(p);
    std::ofstream(p / "manifest.json") << R"({"schema": "mmprof.manifest/2"})";
    std::ofstream(p / "summary.json") << R"({"schema": "mmprof.summary/2"})";
    std::filesystem::last_write_time(
        p / "manifest.json",
        std::filesystem::file_time_type::clock::now() - std::chrono::minutes(minutes_ago));
    return p;
  };
  const auto older = run("older", 10);
  const auto newer = run("newer", 5);
  std::ofstream(older / "report.md") << "a report written into the older run now\n";
  EXPECT_EQ(latest_input(dir.path()), newer);
}

}  // namespace
}  // namespace mmprof::report
