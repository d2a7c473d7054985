// summarize(): summary.json from hand-built phases with exact numbers.
#include "run/phase_metrics.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

// summary.json as written from summarize()'s parts.
template <class... Args>
json summary_of(const Args&... args) {
  return to_json(summarize(args...));
}

const json& at(const json& s, const std::string& dotted) {
  return s.at(test::dotted_pointer(dotted));
}

PhaseMetrics compute_phase() {
  PhaseMetrics p;
  p.name = "compute";
  p.ran = true;
  p.steps = 4;
  p.batches = 4;
  p.samples = 40;
  p.window_s = 2.0;  // 20 samples/s
  p.step_ms = {500, 500, 500, 500};
  p.compute_ms = {500, 500, 500, 500};
  p.wait_ms = {0, 0, 0, 0};
  return p;
}

PhaseMetrics pipeline_phase() {
  PhaseMetrics p;
  p.name = "pipeline";
  p.ran = true;
  p.steps = 10;
  p.batches = 10;
  p.samples = 100;
  p.bytes = 5'000'000;
  p.window_s = 4.0;  // 25 samples/s, 2.5 batches/s, 1.25 MB/s
  p.time_to_first_batch_ms = 123.5;
  p.step_ms = std::vector<double>(10, 400);
  p.wait_ms = std::vector<double>(10, 390);
  p.read_ms = {1, 2, 3, 4};
  p.decode_ms = {10, 20, 30, 40};
  p.augment_ms = {5};
  p.collate_ms = {2, 4};
  p.minflt = 50;
  return p;
}

PhaseMetrics end_to_end_phase() {
  PhaseMetrics p;
  p.name = "end_to_end";
  p.ran = true;
  p.steps = 3;
  p.batches = 3;
  p.samples = 60;
  p.bytes = 3'000'000;
  p.window_s = 4.0;                // 15 samples/s
  p.time_to_first_batch_ms = 999;  // the summary's time to first batch is the pipeline's
  p.step_ms = {10, 10, 20};
  p.wait_ms = {1, 2, 3};
  p.compute_ms = {9, 8, 17};
  return p;
}

PhaseMetrics not_run(const char* name) {
  PhaseMetrics p;
  p.name = name;
  return p;
}

RunOutcome outcome() {
  RunOutcome o;
  o.error_events = 3;
  o.error_samples = 2;
  o.pin_mode = "pageable";
  return o;
}

TEST(PhaseMetricsTest, RatesDivideByTheWindow) {
  const PhaseMetrics p = pipeline_phase();
  EXPECT_DOUBLE_EQ(p.samples_per_s(), 25.0);
  EXPECT_DOUBLE_EQ(p.batches_per_s(), 2.5);
  EXPECT_DOUBLE_EQ(p.mb_per_s(), 1.25);
  const PhaseMetrics empty;
  EXPECT_EQ(empty.samples_per_s(), 0.0);
}

TEST(PhaseMetricsTest, SummaryCarriesEveryDesignKey) {
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome());
  EXPECT_EQ(s["schema"], "mmprof.summary/2");
  for (const auto& key : test::design_summary_keys()) {
    EXPECT_TRUE(s.contains(test::dotted_pointer(key))) << key;
  }
}

TEST(PhaseMetricsTest, SummaryOfNothingStillCarriesEveryDesignKey) {
  const json s =
      summary_of(not_run("compute"), not_run("pipeline"), not_run("end_to_end"), RunOutcome{});
  for (const auto& key : test::design_summary_keys()) {
    EXPECT_TRUE(s.contains(test::dotted_pointer(key))) << key;
  }
}

TEST(PhaseMetricsTest, ThroughputIsSamplesOverTheWindow) {
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome());
  EXPECT_DOUBLE_EQ(at(s, "throughput.compute.samples_per_s").get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(at(s, "throughput.compute.batches_per_s").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(at(s, "throughput.pipeline.samples_per_s").get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(at(s, "throughput.pipeline.batches_per_s").get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(at(s, "throughput.pipeline.mb_per_s").get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(at(s, "throughput.end_to_end.samples_per_s").get<double>(), 15.0);
}

TEST(PhaseMetricsTest, PredictedEndToEndIsTheSlowerOfPipelineAndCompute) {
  // Compute-bound: compute 20 < pipeline 25.
  json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome());
  EXPECT_DOUBLE_EQ(at(s, "throughput.predicted_end_to_end.samples_per_s").get<double>(), 20.0);
  // Data-bound: pipeline 100 / 8 s = 12.5 < compute 20.
  PhaseMetrics slow = pipeline_phase();
  slow.window_s = 8.0;
  s = summary_of(compute_phase(), slow, end_to_end_phase(), outcome());
  EXPECT_DOUBLE_EQ(at(s, "throughput.predicted_end_to_end.samples_per_s").get<double>(), 12.5);
}

TEST(PhaseMetricsTest, StallFractionIsTotalWaitOverTotalStepTimeEndToEnd) {
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome());
  // (1 + 2 + 3) / (10 + 10 + 20); the pipeline phase's waits do not count.
  EXPECT_DOUBLE_EQ(s["stall_fraction"].get<double>(), 0.15);
}

TEST(PhaseMetricsTest, TimeToFirstBatchIsThePipelines) {
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome());
  EXPECT_DOUBLE_EQ(s["time_to_first_batch_ms"].get<double>(), 123.5);
}

TEST(PhaseMetricsTest, StepLatenciesComeFromTheEndToEndPhase) {
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome());
  const json& l = s["latency_ms"];
  EXPECT_EQ(l["step"]["count"], 3);
  EXPECT_DOUBLE_EQ(l["step"]["max"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(l["step"]["p50"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(l["wait"]["mean"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(l["compute"]["max"].get<double>(), 17.0);
  EXPECT_EQ(l["compute"]["count"], 3);
  // No host-to-device copies were recorded: a count of zero and nulls, never zeros.
  EXPECT_EQ(l["h2d"]["count"], 0);
  EXPECT_TRUE(l["h2d"]["p50"].is_null());
}

TEST(PhaseMetricsTest, StageLatenciesComeFromThePipelinePhase) {
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome());
  const json& st = s["latency_ms"]["stages"];
  EXPECT_EQ(st["read"]["count"], 4);
  EXPECT_DOUBLE_EQ(st["read"]["mean"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(st["read"]["p50"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(st["decode"]["p90"].get<double>(), 37.0);
  EXPECT_DOUBLE_EQ(st["decode"]["max"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(st["augment"]["p99"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(st["collate"]["mean"].get<double>(), 3.0);
  EXPECT_EQ(st["pin"]["count"], 0);
  EXPECT_TRUE(st["pin"]["max"].is_null());
}

TEST(PhaseMetricsTest, ErrorsAreCounted) {
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome());
  EXPECT_EQ(s["errors"]["count"], 3);
  EXPECT_EQ(s["status"], "complete");
  EXPECT_TRUE(s["message"].is_null());
}

TEST(PhaseMetricsTest, FailedRunSaysWhy) {
  RunOutcome o = outcome();
  o.status = "failed";
  o.message = "sample 000003 failed to decode";
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), o);
  EXPECT_EQ(s["status"], "failed");
  EXPECT_EQ(s["message"], o.message);
}

TEST(PhaseMetricsTest, NoStepGivesNullComputeEndToEndPredictionAndStall) {
  const json s = summary_of(not_run("compute"), pipeline_phase(), not_run("end_to_end"), outcome());
  EXPECT_TRUE(at(s, "throughput.compute.samples_per_s").is_null());
  EXPECT_TRUE(at(s, "throughput.end_to_end.samples_per_s").is_null());
  EXPECT_TRUE(at(s, "throughput.predicted_end_to_end.samples_per_s").is_null());
  EXPECT_TRUE(s["stall_fraction"].is_null());
  EXPECT_TRUE(s["phases"]["compute"].is_null());
  EXPECT_TRUE(s["phases"]["end_to_end"].is_null());
  EXPECT_DOUBLE_EQ(at(s, "throughput.pipeline.samples_per_s").get<double>(), 25.0);
  // Without an end-to-end phase, step latencies are the pipeline's.
  EXPECT_EQ(s["latency_ms"]["phase"], "pipeline");
  EXPECT_EQ(s["latency_ms"]["step"]["count"], 10);
  EXPECT_DOUBLE_EQ(s["latency_ms"]["wait"]["p50"].get<double>(), 390.0);
  EXPECT_EQ(s["latency_ms"]["compute"]["count"], 0);
}

TEST(PhaseMetricsTest, NothingRunGivesNullsEverywhere) {
  const json s =
      summary_of(not_run("compute"), not_run("pipeline"), not_run("end_to_end"), RunOutcome{});
  for (const char* key :
       {"throughput.compute.samples_per_s", "throughput.pipeline.samples_per_s",
        "throughput.pipeline.batches_per_s", "throughput.pipeline.mb_per_s",
        "throughput.end_to_end.samples_per_s", "throughput.predicted_end_to_end.samples_per_s",
        "stall_fraction", "time_to_first_batch_ms", "latency_ms.step.p50",
        "latency_ms.stages.read.p50"}) {
    EXPECT_TRUE(at(s, key).is_null()) << key;
  }
  EXPECT_TRUE(s["latency_ms"]["phase"].is_null());
  EXPECT_EQ(s["errors"]["count"], 0);
}

TEST(PhaseMetricsTest, PhaseThatRanWithAnEmptyWindowGivesNullRatesNotZeros) {
  PhaseMetrics p = pipeline_phase();
  p.window_s = 0;
  const json s = summary_of(compute_phase(), p, end_to_end_phase(), outcome());
  EXPECT_TRUE(at(s, "throughput.pipeline.samples_per_s").is_null());
  EXPECT_TRUE(at(s, "throughput.predicted_end_to_end.samples_per_s").is_null());
}

TEST(PhaseMetricsTest, PhaseDetailsAreRecorded) {
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome());
  const json& p = s["phases"]["pipeline"];
  EXPECT_EQ(p["samples"], 100);
  EXPECT_EQ(p["batches"], 10);
  EXPECT_EQ(p["bytes"], 5'000'000);
  EXPECT_DOUBLE_EQ(p["window_s"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(p["minflt_per_sample"].get<double>(), 0.5);
  EXPECT_TRUE(s["phases"]["compute"]["time_to_first_batch_ms"].is_null());
}

// A sampler's aggregate built by hand: main (pid 10) and worker 0 (pid 11), two samples 2 s apart
// that open and close the pipeline window.
ResourceUsage two_samples() {
  ResourceUsage u;
  u.facts.interval_ms = 100;
  u.facts.affinity_cpus = 4;
  const auto proc = [](int pid, const char* role, int worker, int64_t rss, int64_t pss, int64_t uss,
                       double utime, int64_t minflt, uint64_t rchar, uint64_t read_bytes) {
    ProcessSample p;
    p.pid = pid;
    p.starttime_ticks = 7;
    p.role = role;
    p.worker = worker;
    p.mem.rss_kb = rss;
    p.mem.pss_kb = pss;
    p.mem.private_clean_kb = 0;
    p.mem.private_dirty_kb = uss;
    p.utime_s = utime;
    p.minflt = minflt;
    p.io.rchar = rchar;
    p.io.read_bytes = read_bytes;
    return p;
  };
  Snapshot a;
  a.t_ns = 1'000'000'000;
  a.phase = "pipeline";
  a.processes = {proc(10, "main", -1, 1024, 800, 600, 1.0, 1000, 0, 0),
                 proc(11, "worker", 0, 2048, 1024, 512, 0.0, 10, 0, 0)};
  a.host.mem.mem_total_kb = 1'000'000;
  a.host.mem.mem_available_kb = 600'000;
  Snapshot b = a;
  b.t_ns = 3'000'000'000;
  b.processes = {proc(10, "main", -1, 1024, 900, 600, 2.0, 1100, 0, 0),
                 proc(11, "worker", 0, 2048, 2048, 512, 3.0, 60, 4'000'000, 2'000'000)};
  b.host.mem.mem_available_kb = 700'000;
  u.begin_window("run");
  u.begin_window("pipeline");
  u.add(a);
  u.add(b);
  u.end_window("pipeline");
  u.end_window("run");
  return u;
}

TEST(PhaseMetricsTest, WithoutASamplerResourceKeysAreNullNotZero) {
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome());
  EXPECT_TRUE(at(s, "memory.main").is_null());
  EXPECT_TRUE(at(s, "memory.total_pss_peak_mib").is_null());
  EXPECT_TRUE(at(s, "cpu.utilization_cores").is_null());
  EXPECT_TRUE(at(s, "io.read_bytes").is_null());
}

TEST(PhaseMetricsTest, MemoryPeaksPerProcessTreeAndHost) {
  const ResourceUsage u = two_samples();
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome(), &u);
  for (const auto& key : test::design_summary_keys())
    EXPECT_TRUE(s.contains(test::dotted_pointer(key))) << key;
  const json& m = s["memory"];
  EXPECT_EQ(m["window"], "run");
  EXPECT_EQ(m["main"]["pid"], 10);
  EXPECT_DOUBLE_EQ(m["main"]["rss_peak_mib"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(m["main"]["pss_peak_mib"].get<double>(), 900.0 / 1024);
  EXPECT_DOUBLE_EQ(m["main"]["uss_peak_mib"].get<double>(), 600.0 / 1024);
  ASSERT_EQ(m["workers"].size(), 1u);
  EXPECT_EQ(m["workers"][0]["index"], 0);
  EXPECT_EQ(m["workers"][0]["pid"], 11);
  EXPECT_DOUBLE_EQ(m["workers"][0]["pss_peak_mib"].get<double>(), 2.0);
  // The peak of the per-sample sum (900 + 2048 kB), not a sum of peaks.
  EXPECT_DOUBLE_EQ(m["total_pss_peak_mib"].get<double>(), (900.0 + 2048) / 1024);
  EXPECT_DOUBLE_EQ(m["host_peak_mib"].get<double>(), 400'000.0 / 1024);
  EXPECT_EQ(m["host_peak_source"], "meminfo MemTotal - MemAvailable, sampled");
  EXPECT_EQ(m["samples"], 2);
}

TEST(PhaseMetricsTest, CgroupMemoryPeakIsTheHostPeakWhenPresent) {
  ResourceUsage u;
  Snapshot a;
  a.host.mem.mem_total_kb = 1'000'000;
  a.host.mem.mem_available_kb = 600'000;
  a.host.cgroup_peak_bytes = 512 * 1024 * 1024;
  u.add(a);
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome(), &u);
  EXPECT_DOUBLE_EQ(s["memory"]["host_peak_mib"].get<double>(), 512.0);
  EXPECT_EQ(s["memory"]["host_peak_source"], "cgroup memory.peak (since the cgroup was created)");
  EXPECT_DOUBLE_EQ(s["memory"]["host_used_peak_mib"].get<double>(), 400'000.0 / 1024);
}

TEST(PhaseMetricsTest, CpuAndIoCoverThePipelineWindow) {
  const ResourceUsage u = two_samples();
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome(), &u);
  const json& c = s["cpu"];
  EXPECT_EQ(c["window"], "pipeline");
  EXPECT_DOUBLE_EQ(c["wall_s"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(c["utilization_cores"].get<double>(), 2.0);  // (1 + 3) cpu s / 2 s
  ASSERT_EQ(c["per_process"].size(), 2u);
  EXPECT_EQ(c["per_process"][0]["role"], "main");
  EXPECT_DOUBLE_EQ(c["per_process"][0]["cores"].get<double>(), 0.5);
  EXPECT_EQ(c["per_process"][1]["index"], 0);
  EXPECT_DOUBLE_EQ(c["per_process"][1]["cores"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(c["effective_cores"].get<double>(), 4.0);
  EXPECT_TRUE(c["phases"]["end_to_end"].is_null());
  EXPECT_EQ(c["phases"]["run"]["window"], "run");
  const json& io = s["io"];
  EXPECT_EQ(io["window"], "pipeline");
  EXPECT_EQ(io["read_bytes"], 2'000'000);
  EXPECT_DOUBLE_EQ(io["read_mb_per_s"].get<double>(), 1.0);
  EXPECT_EQ(io["rchar"], 4'000'000);
  EXPECT_TRUE(io["write_bytes"].is_null());  // never read: null, not 0
  EXPECT_EQ(io["minflt"], 150);
  EXPECT_DOUBLE_EQ(io["minflt_per_sample"].get<double>(), 1.5);  // 150 faults / 100 samples
}

// two_samples() on a 4-CPU host that others keep busy, with PSI and the run queue delays.
ResourceUsage two_samples_on_a_busy_host(bool psi) {
  ResourceUsage u;
  u.facts.affinity_cpus = 4;
  u.facts.host_cpu_ids = {0, 1, 2, 3};
  Snapshot a;
  a.t_ns = 1'000'000'000;
  a.phase = "pipeline";
  ProcessSample main, worker;
  main.pid = 10;
  main.role = "main";
  main.utime_s = 1.0;
  main.sched = procfs::SchedStat{0, 0, 0};
  worker.pid = 11;
  worker.role = "worker";
  worker.worker = 0;
  worker.sched = procfs::SchedStat{0, 0, 0};
  a.processes = {main, worker};
  a.host.cpu = HostCpu{4, 100.0, 50.0, 1.0, 0.0};
  if (psi) a.host.cpu_pressure = procfs::Pressure{{}, {}, 1'000'000, {}};
  Snapshot b = a;
  b.t_ns = 3'000'000'000;  // 2 s: 8 CPU-seconds on 4 CPUs
  b.processes[0].utime_s = 2.0;
  b.processes[0].sched = procfs::SchedStat{0, 100'000'000, 0};
  b.processes[1].utime_s = 1.0;
  b.processes[1].sched = procfs::SchedStat{0, 800'000'000, 0};
  b.host.cpu = HostCpu{4, 106.0, 51.6, 1.4, 0.0};
  if (psi) b.host.cpu_pressure = procfs::Pressure{{}, {}, 1'500'000, {}};
  u.begin_window("pipeline");
  u.add(a);
  u.add(b);
  u.end_window("pipeline");
  return u;
}

TEST(PhaseMetricsTest, CpuHasTheHostPressureAndRunQueueDelayOfTheWindow) {
  const ResourceUsage u = two_samples_on_a_busy_host(true);
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome(), &u);
  const json& c = s["cpu"];
  EXPECT_DOUBLE_EQ(c["utilization_cores"].get<double>(), 1.0);  // (1 + 1) cpu s / 2 s
  const json& h = c["host"];
  EXPECT_EQ(h["cpus"], 4);
  EXPECT_NEAR(h["busy_fraction"].get<double>(), 0.75, 1e-12);  // 6 of 8 CPU-seconds
  EXPECT_NEAR(h["idle_fraction"].get<double>(), 0.2, 1e-12);
  EXPECT_NEAR(h["iowait_fraction"].get<double>(), 0.05, 1e-12);
  EXPECT_NEAR(h["steal_fraction"].get<double>(), 0.0, 1e-12);
  EXPECT_NEAR(h["busy_cores"].get<double>(), 3.0, 1e-12);
  EXPECT_NEAR(h["others_busy_cores"].get<double>(), 2.0, 1e-12);  // 3 - mmprof's 1
  EXPECT_EQ(c["pressure"]["available"], true);
  EXPECT_NEAR(c["pressure"]["some_fraction"].get<double>(), 0.25, 1e-12);  // 0.5 s of 2 s
  EXPECT_TRUE(c["pressure"]["full_fraction"].is_null());
  const json& q = c["run_queue_delay"];
  EXPECT_NEAR(q["workers_mean_fraction"].get<double>(), 0.4, 1e-12);  // 0.8 s of 2 s
  EXPECT_NEAR(q["workers_max_fraction"].get<double>(), 0.4, 1e-12);
  EXPECT_NEAR(q["main_fraction"].get<double>(), 0.05, 1e-12);
  EXPECT_NEAR(c["per_process"][1]["run_queue_delay_s"].get<double>(), 0.8, 1e-12);
  EXPECT_NEAR(c["per_process"][1]["run_queue_delay_fraction"].get<double>(), 0.4, 1e-12);

  const ResourceUsage no_psi = two_samples_on_a_busy_host(false);
  const json p =
      summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome(), &no_psi);
  EXPECT_EQ(p["cpu"]["pressure"]["available"], false);
  EXPECT_NE(p["cpu"]["pressure"]["reason"].get<std::string>().find("/proc/pressure/cpu is absent"),
            std::string::npos);
}

TEST(PhaseMetricsTest, SamplesPerBatchIsTheMeanDeliveredBatch) {
  PhaseMetrics short_batches = pipeline_phase();
  short_batches.samples = 240;  // 10 batches averaging 24 samples
  const json s = summary_of(compute_phase(), short_batches, end_to_end_phase(), outcome());
  EXPECT_DOUBLE_EQ(at(s, "throughput.pipeline.samples_per_batch").get<double>(), 24.0);
  EXPECT_DOUBLE_EQ(at(s, "throughput.end_to_end.samples_per_batch").get<double>(), 20.0);
  const json none =
      summary_of(not_run("compute"), not_run("pipeline"), not_run("end_to_end"), RunOutcome{});
  EXPECT_TRUE(at(none, "throughput.pipeline.samples_per_batch").is_null());
}

TEST(PhaseMetricsTest, EffectiveCoresFollowACgroupQuota) {
  ResourceUsage u = two_samples();
  u.facts.cgroup_cpu_quota_cores = 2.5;
  const json s = summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome(), &u);
  EXPECT_DOUBLE_EQ(s["cpu"]["effective_cores"].get<double>(), 2.5);
}

}  // namespace
}  // namespace mmprof

namespace mmprof {
namespace {

// Decode placed on the GPU: per-batch main-process decode, fallbacks, NVML's readings averaged
// (memory at its peak), and the step's compute with the loader against the compute phase alone.
TEST(PhaseMetricsTest, DecodePlacementAveragesNvmlAndGivesTheComputeInflation) {
  PhaseMetrics pipeline = pipeline_phase();
  pipeline.decode_placement = "main process decodes video: nvdec";
  pipeline.device_decode_ms = {10, 20, 30};
  pipeline.device_decode_fallbacks = 2;
  pipeline.device_decode_fallback_reason = "png does not decode on the GPU";
  pipeline.nvml_readings = {{{"name", "H200"},
                             {"source", "NVML"},
                             {"decoder_util_pct", 40},
                             {"sm_util_pct", 10},
                             {"jpeg_util_pct", nullptr},
                             {"process_memory_mib", 900}},
                            {{"name", "H200"},
                             {"source", "NVML"},
                             {"decoder_util_pct", 60},
                             {"sm_util_pct", 30},
                             {"jpeg_util_pct", nullptr},
                             {"process_memory_mib", 700}}};
  RunOutcome gemm = outcome();
  gemm.step_kind = StepKind::gemm;
  const json s = summary_of(compute_phase(), pipeline, end_to_end_phase(), gemm);
  EXPECT_EQ(at(s, "decode_placement.where"), "main process decodes video: nvdec");
  EXPECT_EQ(at(s, "decode_placement.phase"), "pipeline");
  EXPECT_DOUBLE_EQ(at(s, "decode_placement.device_decode_ms.p50").get<double>(), 20.0);
  EXPECT_EQ(at(s, "decode_placement.cpu_fallbacks"), 2);
  EXPECT_EQ(at(s, "decode_placement.cpu_fallback_reason"), "png does not decode on the GPU");
  EXPECT_DOUBLE_EQ(at(s, "decode_placement.nvml.decoder_util_pct").get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(at(s, "decode_placement.nvml.sm_util_pct").get<double>(), 20.0);
  EXPECT_TRUE(at(s, "decode_placement.nvml.jpeg_util_pct").is_null());
  EXPECT_DOUBLE_EQ(at(s, "decode_placement.nvml.process_memory_mib").get<double>(), 900.0);
  EXPECT_EQ(at(s, "decode_placement.nvml.readings"), 2);
  // Compute p50: 500 ms alone, 9 ms with the loader (the fixture's phases): -98.2 %.
  EXPECT_DOUBLE_EQ(at(s, "decode_placement.compute_inflation.compute_phase_p50_ms").get<double>(),
                   500.0);
  EXPECT_DOUBLE_EQ(at(s, "decode_placement.compute_inflation.end_to_end_p50_ms").get<double>(),
                   9.0);
  EXPECT_NEAR(at(s, "decode_placement.compute_inflation.pct").get<double>(), -98.2, 1e-9);
  // Issue 32 case 8: a sleep computes nothing decode could take; its lengthening is no inflation.
  RunOutcome sleep = outcome();
  sleep.step_kind = StepKind::sleep;
  const json slept = summary_of(compute_phase(), pipeline, end_to_end_phase(), sleep);
  EXPECT_TRUE(at(slept, "decode_placement.compute_inflation.pct").is_null());
  EXPECT_EQ(at(slept, "decode_placement.compute_inflation.why_null"),
            "step.kind=sleep computes nothing decode could take (a sleep's lengthening is a late "
            "wake-up)");

  pipeline.nvml_readings = {{{"reason", "NVML is unavailable: no library"}}};
  const json without = summary_of(compute_phase(), pipeline, end_to_end_phase(), outcome());
  EXPECT_EQ(at(without, "decode_placement.nvml.reason"), "NVML is unavailable: no library");
  // The workers' placement: no NVML reading at all.
  EXPECT_TRUE(at(summary_of(compute_phase(), pipeline_phase(), end_to_end_phase(), outcome()),
                 "decode_placement.nvml")
                  .is_null());
}

}  // namespace
}  // namespace mmprof
