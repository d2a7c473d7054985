// The run directory's one owner: what RunWriter writes, RunDir reads back as the same typed rows;
// bad files are refused naming the file, row and column.
#include "mmprof/run_dir.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "mmprof/error.hpp"
#include "rundir/run_writer.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

class RunDirTest : public ::testing::Test {
 protected:
  fs::path run() const { return dir_.path() / "run"; }
  void write_manifest(rundir::RunWriter& w) { w.manifest({{"schema", run_schema::manifest}}); }
  test::TempDir dir_;
};

TEST_F(RunDirTest, WhatTheWriterWritesTheReaderReadsBack) {
  {
    rundir::RunWriter w(run());
    write_manifest(w);
    w.step({3, "end_to_end", 12345, 1.25, std::nullopt, 8.5, 9.75, 32, 4096, std::nullopt,
            std::nullopt});
    w.step({4, "end_to_end", 22345, 0.5, 0.125, 8.5, 9.0, 32, 4096, std::nullopt, std::nullopt});
    StageRow s;
    s.key = "dir/a,b";  // a comma: quoted in the file
    s.worker = 1;
    s.read_ms = 0.1;
    s.decode_ms = 2.5;
    s.augment_ms = 0.3;
    s.bytes = 777;
    s.faults = 2;
    s.phase = "pipeline";
    s.step = 0;
    s.modality = "image";
    w.stages({s});
    w.digest({"pipeline", 7, 0, 0xfeedface12345678});
    w.error({{"key", "bad"}, {"stage", "decode"}});
    Summary parts;
    parts.status = "interrupted";
    parts.message = "stopped";
    w.summary(parts);
  }
  const RunDir r = RunDir::open(run());
  EXPECT_EQ(to_json(r.summary())["schema"], run_schema::summary);
  EXPECT_EQ(r.summary().status, "interrupted");
  const auto steps = r.steps();
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].step, 3);
  EXPECT_EQ(steps[0].phase, "end_to_end");
  EXPECT_EQ(steps[0].t_start_ns, 12345);
  EXPECT_DOUBLE_EQ(steps[0].wait_ms, 1.25);
  EXPECT_FALSE(steps[0].h2d_ms.has_value());
  EXPECT_DOUBLE_EQ(*steps[1].h2d_ms, 0.125);
  EXPECT_EQ(steps[1].bytes, 4096u);
  const auto stages = r.stages();
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_EQ(stages[0].key, "dir/a,b");
  EXPECT_EQ(stages[0].worker, 1);
  EXPECT_DOUBLE_EQ(stages[0].decode_ms.value_or(-1), 2.5);
  EXPECT_EQ(stages[0].faults, 2);
  EXPECT_FALSE(stages[0].getitem_ms.has_value());  // mmprof's own run: no such column
  EXPECT_EQ(stages[0].modality, "image");
  EXPECT_EQ(r.digests().at({"pipeline", 7}), 0xfeedface12345678u);
  ASSERT_EQ(r.errors().size(), 1u);
  EXPECT_EQ(r.errors()[0]["key"], "bad");
  ASSERT_TRUE(r.resources().has_value());  // written, with its header, from the start
  EXPECT_TRUE(r.resources()->empty());
  EXPECT_FALSE(r.steady().has_value());
}

// The resource sampler's thread writes resources.csv and host.csv while the run's thread writes
// steps.csv: every row of both arrives whole (a shared format buffer once garbled steps rows,
// which the reader then left out).
TEST_F(RunDirTest, TheSamplerThreadAndTheRunThreadWriteAtOnce) {
  constexpr int kRows = 2000;
  {
    rundir::RunWriter w(run());
    write_manifest(w);
    std::thread sampler([&] {
      Snapshot s;
      s.phase = "pipeline";
      s.processes.push_back({});
      s.processes[0].pid = 42;
      s.processes[0].role = "main";
      s.processes[0].comm = "mmprof";
      for (int i = 0; i < kRows; ++i) {
        s.t_ns = i;
        w.resources(s);
      }
    });
    for (int i = 0; i < kRows; ++i)
      w.step({i, "pipeline", i, 0.25 * i, std::nullopt, 0, 1.5, 2, 64, std::nullopt, std::nullopt});
    sampler.join();
  }
  const RunDir r = RunDir::open(run());
  const auto steps = r.steps();
  ASSERT_EQ(steps.size(), static_cast<size_t>(kRows));
  for (int i = 0; i < kRows; ++i) {
    ASSERT_EQ(steps[i].step, i);
    ASSERT_DOUBLE_EQ(steps[i].wait_ms, 0.25 * i);
  }
  ASSERT_TRUE(r.resources().has_value());
  EXPECT_EQ(r.resources()->size(), static_cast<size_t>(kRows));
}

TEST_F(RunDirTest, ACutShortLastRowIsLeftOutAndABadRowOrCellIsNamed) {
  {
    rundir::RunWriter w(run());
    write_manifest(w);
    w.step({0, "pipeline", 1, 1, std::nullopt, 0, 2, 8, 10, std::nullopt, std::nullopt});
  }
  std::ofstream(run() / run_file::steps, std::ios::app) << "1,pipeline,2,0.5";  // killed here
  EXPECT_EQ(RunDir::open(run()).steps().size(), 1u);
  std::ofstream(run() / run_file::steps, std::ios::app) << ",,0,x,8,10,\n";
  const std::string e = error_of([&] { RunDir::open(run()).steps(); });
  EXPECT_NE(e.find("steps.csv row 3 column 'step_ms': 'x'"), std::string::npos) << e;
  // A finished row of the wrong width is damage, not an interrupted write: refused, not skipped.
  std::ofstream(run() / run_file::steps, std::ios::trunc)
      << "step,phase,t_start_ns,wait_ms,h2d_ms,compute_ms,step_ms,samples,bytes\n"
      << "0,pipeline,1,1,,0,2,8,10\n0,pip2,8,10\n";
  const std::string garbled = error_of([&] { RunDir::open(run()).steps(); });
  EXPECT_NE(garbled.find("steps.csv row 3 has 4 fields where the header has 9"), std::string::npos)
      << garbled;
}

TEST_F(RunDirTest, AMissingContractColumnIsRefusedAnAddedOneIsOptional) {
  rundir::RunWriter w(run());
  write_manifest(w);
  std::ofstream(run() / run_file::stages)
      << "key,worker,read_ms,decode_ms,augment_ms,bytes,faults\n"
      << "k,0,1,2,3,4,5\n";
  const auto stages = RunDir::open(run()).stages();  // an older file: no phase, modality, ...
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_EQ(stages[0].phase, "");
  EXPECT_DOUBLE_EQ(stages[0].augment_ms.value_or(-1), 3);
  std::ofstream(run() / run_file::stages) << "key,worker,read_ms\nk,0,1\n";
  const std::string e = error_of([&] { RunDir::open(run()).stages(); });
  EXPECT_NE(e.find("has no column 'decode_ms'"), std::string::npos) << e;
}

// mmprof's own runs keep stages.csv's columns and cells byte for byte and add what the worker's
// probe found (format, source size) after them; a user's own job (the external hook) adds
// getitem_ms instead and leaves the stages it cannot time empty.
TEST_F(RunDirTest, StagesOfMmprofsRunsAreUnchangedAndTheHooksHaveGetitemMs) {
  StageRow own;
  own.key = "a.jpg";
  own.worker = 0;
  own.read_ms = 0.5;
  own.decode_ms = 1.25;
  own.augment_ms = 0;
  own.bytes = 10;
  own.faults = 3;
  own.phase = "pipeline";
  own.step = 2;
  own.modality = "image";
  own.majflt = 0;
  own.t_start_ns = 99;
  own.format = "jpeg";
  own.source_width_px = 640;
  own.source_height_px = 480;
  own.decoded_in = "main";
  {
    rundir::RunWriter w(run());
    write_manifest(w);
    w.stages({own});
  }
  const std::vector<uint8_t> bytes = test::read_bytes(run() / run_file::stages);
  const std::string text(bytes.begin(), bytes.end());
  EXPECT_EQ(text,
            "key,worker,read_ms,decode_ms,augment_ms,bytes,faults,phase,step,modality,majflt,"
            "t_start_ns,format,source_width_px,source_height_px,decoded_in\n"
            "a.jpg,0,0.5000,1.2500,0.0000,10,3,pipeline,2,image,0,99,jpeg,640,480,main\n");
  const auto own_back = RunDir::open(run()).stages();
  ASSERT_EQ(own_back.size(), 1u);
  EXPECT_EQ(own_back[0].format, "jpeg");
  EXPECT_EQ(own_back[0].decoded_in, "main");
  EXPECT_EQ(own_back[0].source_width_px, 640);
  EXPECT_EQ(own_back[0].source_height_px, 480);

  const fs::path hook_run = dir_.path() / "hook-run";
  StageRow item;
  item.key = "1234";
  item.worker = 1;
  item.phase = "end_to_end";
  item.step = -1;
  item.t_start_ns = 7;
  item.getitem_ms = 20.125;
  StageRow ranked = item;  // a torchrun job's row names its rank; one process's leaves it empty
  ranked.rank = 1;
  StepRow step;  // a job's steps.csv names each step's rank too
  step.phase = "end_to_end";
  step.rank = 1;
  {
    rundir::RunWriter w(hook_run, {.job = true});
    w.manifest({{"schema", run_schema::manifest}});
    w.stages({item, ranked});
    w.step(step);
  }
  EXPECT_EQ(test::read_text(hook_run / run_file::steps),
            "step,phase,t_start_ns,wait_ms,h2d_ms,compute_ms,step_ms,samples,bytes,sync_ms,rank\n"
            "0,end_to_end,0,0.0000,,0.0000,0.0000,0,0,,1\n");
  EXPECT_EQ(RunDir::open(hook_run).steps().at(0).rank, 1);
  const std::vector<uint8_t> bytes2 = test::read_bytes(hook_run / run_file::stages);
  const std::string text2(bytes2.begin(), bytes2.end());
  EXPECT_EQ(text2,
            "key,worker,read_ms,decode_ms,augment_ms,bytes,faults,phase,step,modality,majflt,"
            "t_start_ns,getitem_ms,rank\n"
            "1234,1,,,,0,,end_to_end,-1,,,7,20.1250,\n"
            "1234,1,,,,0,,end_to_end,-1,,,7,20.1250,1\n");
  const auto back = RunDir::open(hook_run).stages();
  ASSERT_EQ(back.size(), 2u);
  EXPECT_FALSE(back[0].rank.has_value());
  EXPECT_EQ(back[1].rank, 1);
  EXPECT_FALSE(back[0].read_ms || back[0].decode_ms || back[0].augment_ms || back[0].faults);
  EXPECT_TRUE(back[0].format.empty());  // no probe columns in a job's file: left empty
  EXPECT_FALSE(back[0].source_width_px || back[0].source_height_px);
  EXPECT_DOUBLE_EQ(back[0].getitem_ms.value_or(-1), 20.125);
  EXPECT_EQ(back[0].step, -1);
}

TEST_F(RunDirTest, ANonRunAndAForeignSchemaAreRefusedNamingTheFile) {
  EXPECT_FALSE(RunDir::is_run(dir_.path()));
  std::string e = error_of([&] { RunDir::open(dir_.path()); });
  EXPECT_NE(e.find((dir_.path() / "manifest.json").string() + " is missing"), std::string::npos)
      << e;
  std::ofstream(dir_.path() / run_file::manifest) << R"({"schema": "other/2"})";
  e = error_of([&] { RunDir::open(dir_.path()); });
  EXPECT_NE(e.find("is not an mmprof.manifest/2 file (schema 'other/2')"), std::string::npos) << e;
  std::ofstream(dir_.path() / run_file::manifest) << R"({"schema": "mmprof.manifest/2"})";
  std::ofstream(dir_.path() / run_file::summary) << "{\"cut";
  e = error_of([&] { RunDir::open(dir_.path()); });
  EXPECT_NE(e.find("summary.json is not valid JSON"), std::string::npos) << e;
}

// A run of an older mmprof (version 1: MiB figures named *_mb, pin_mode among the latencies) is
// read as version 2; a version mmprof does not know is refused.
TEST_F(RunDirTest, AVersionOneRunIsReadWithTodaysNames) {
  std::ofstream(dir_.path() / run_file::manifest)
      << R"({"schema": "mmprof.manifest/1", "hardware": {"memory": {"total_mb": 2048}}})";
  std::ofstream(dir_.path() / run_file::summary) << R"({"schema": "mmprof.summary/1",
      "latency_ms": {"pin_mode": "pageable: no GPU", "step": {"p50": 1}},
      "memory": {"host_peak_mb": 512, "workers": [{"pss_peak_mb": 100}]},
      "io": {"read_mb_per_s": 3}, "job": {"cow": [{"slope_mb_per_min": 0.5}]}})";
  const RunDir r = RunDir::open(dir_.path());
  EXPECT_EQ(r.manifest()["schema"], run_schema::manifest);
  EXPECT_EQ(r.manifest()["hardware"]["memory"], (json{{"total_mib", 2048}}));
  const json s = to_json(r.summary());
  EXPECT_EQ(s["schema"], run_schema::summary);
  EXPECT_EQ(s["pin_mode"], "pageable: no GPU");
  EXPECT_EQ(r.summary().latency.step.p50, 1);  // pin_mode is no distribution of it
  EXPECT_TRUE(r.summary().latency.stages.empty());
  EXPECT_EQ(r.summary().memory.host_peak_mib, 512);
  ASSERT_EQ(r.summary().memory.workers.size(), 1u);
  EXPECT_EQ(r.summary().memory.workers[0].pss_peak_mib, 100);
  // 10^6 bytes per second: not MiB, the name stays.
  EXPECT_EQ(r.summary().io.top_figure(&IoWindow::read_mb_per_s), 3);
  ASSERT_EQ(r.summary().job->cow.size(), 1u);  // job.cow is a list of workers' growth
  EXPECT_EQ(r.summary().job->cow[0].slope_mib_per_min, 0.5);
  std::ofstream(dir_.path() / run_file::summary) << R"({"schema": "mmprof.summary/3"})";
  const std::string e = error_of([&] { RunDir::open(dir_.path()); });
  EXPECT_NE(e.find("is not an mmprof.summary/2 file (schema 'mmprof.summary/3')"),
            std::string::npos)
      << e;
}

// A sampled memory part: a main process, a worker of a job's second DataLoader, and a process of
// another role (its role written, not "external").
MemoryPeaks sampled_memory() {
  MemoryPeaks m;
  m.sampled = true;
  m.samples = 40;
  m.interval_ms = 100;
  ProcessMemory main;
  main.pid = 10;
  main.rss_peak_mib = 300;
  main.pss_peak_mib = 250.5;
  main.rank = 0;
  ProcessMemory second = main;
  second.pid = 11;
  second.rank = 1;
  m.main = main;
  m.mains = {main, second};
  ProcessMemory worker;
  worker.pid = 12;
  worker.role = "worker";
  worker.pss_peak_mib = 80;
  worker.swap_peak_mib = 2;
  worker.index = 1;
  worker.phase = "pipeline";
  worker.loader = 1;
  worker.main_pid = 10;
  m.workers = {worker};
  ProcessMemory agent;
  agent.pid = 13;
  agent.role = "agent";
  agent.comm = "torchrun";
  agent.phase = "loop";
  m.external = {agent};
  m.total_pss_peak_mib = 570.5;
  m.host_peak_mib = 2048;
  m.host_peak_source = "cgroup memory.peak (since the cgroup was created)";
  return m;
}

// A sampled cpu part: the pipeline window with a worker, the host's CPUs and run-queue delay, no
// PSI; a compute window that never opened.
CpuUse sampled_cpu() {
  CpuWindow w;
  w.window = "pipeline";
  w.complete = true;
  w.wall_s = 2.5;
  w.cpu_s = 4;
  w.utilization_cores = 1.6;
  ProcessCpu worker;
  worker.pid = 12;
  worker.role = "worker";
  worker.index = 1;
  worker.cpu_s = 2;
  worker.cores = 0.8;
  w.per_process = {worker};
  HostCpuShare host;
  host.cpus = 2;
  host.cpu_ids = {0, 1};
  host.busy_fraction = 0.9;
  host.steal_fraction = 0;
  w.host = host;
  w.pressure.reason = "no PSI";
  RunQueueDelay delay;
  delay.workers_mean_fraction = 0.25;
  delay.source = "schedstat";
  w.run_queue_delay = delay;
  CpuUse c;
  c.sampled = true;
  c.top = w;
  c.effective_cores = 2;
  c.effective_cores_source = "affinity";
  c.phases = {{"pipeline", w}, {"compute", std::nullopt}};
  return c;
}

// A sampled io part: the pipeline window's reads and faults.
IoUse sampled_io() {
  IoWindow w;
  w.window = "pipeline";
  w.complete = true;
  w.wall_s = 2.5;
  w.read_bytes = 4096;
  w.rchar = 8192;
  w.read_mb_per_s = 0.0016384;
  w.minflt = 12;
  w.minflt_per_sample = 1.5;
  IoUse io;
  io.sampled = true;
  io.top = w;
  io.phases = {{"pipeline", w}, {"compute", std::nullopt}};
  return io;
}

// summary.json's typed figures: what each producer writes reads back equal, a rate only the
// stand-in or only a job has stays out of the other's file, and a figure of the wrong type is
// refused naming the file and its key.
TEST_F(RunDirTest, TheSummaryTypeReadsBackWhatItWroteAndRefusesAWrongType) {
  Summary stand_in;
  stand_in.throughput.pipeline = {.samples_per_s = 812.5,
                                  .batches_per_s = 25.390625,
                                  .mb_per_s = 91.25,
                                  .samples_per_batch = 32,
                                  .samples_per_s_wall = {},
                                  .why_null = {}};
  stand_in.throughput.predicted_end_to_end = 700;
  stand_in.stall_fraction = 0.125;
  stand_in.time_to_first_batch_ms = 431.5;
  stand_in.memory = sampled_memory();
  stand_in.cpu = sampled_cpu();
  stand_in.io = sampled_io();
  stand_in.errors.count = 4;
  stand_in.errors.samples = 2;
  stand_in.latency.phase = "end_to_end";
  stand_in.latency.step = {
      .count = 4, .mean = 2, .p50 = 2, .p90 = 3, .p99 = 3.5, .p999 = 3.5, .max = 4};
  stand_in.latency.stages_phase = "pipeline";
  stand_in.latency.stages["decode"] = {
      .count = 8, .mean = 1.5, .p50 = 1.25, .p90 = 2, .p99 = 2.5, .p999 = {}, .max = 3};
  stand_in.shuffle = ShuffleFigures{.samples = 12, .gap_ratio = 1.5, .order_correlation = {}};
  Summary job;
  job.source = "external";
  job.status = "failed";
  job.message = "the job (python3) ended with exit code 3";
  job.throughput.compute.why_null = "a user's job";
  job.throughput.end_to_end.samples_per_s = 96;
  job.throughput.end_to_end.samples_per_s_wall = 90.5;
  JobFigures figures;
  figures.command = {"python3", "train.py"};
  figures.pid = 4242;
  figures.exit_code = 3;
  figures.exit = "exit code 3";
  figures.stopped_by = "itself";
  figures.ended = "failed (exit code 3)";
  figures.steps_asked = 50;
  figures.steps_measured = 2;
  figures.exception = {{"type", "RuntimeError"}, {"message", "boom"}};
  figures.stuck.push_back({.loader = 0,
                           .worker = 1,
                           .pid = 4300,
                           .indices = "[12, 13]",
                           .item = {},
                           .seconds = 61.5,
                           .text = "worker 1 (pid 4300) of loader 0 has been on its batch"});
  figures.hook.status = "ok";
  figures.hook.files = 3;
  figures.hook.errors.push_back({.pid = 4242, .where = "epoch", .message = "x", .ns = 5});
  figures.digests = {
      .batches = 2, .in_measured_steps = 0, .total_ms = 1.5, .max_ms = 1, .text = "2"};
  JobLoader loader{.pid = 4242,
                   .rank = {},
                   .loader = 0,
                   .followed = true,
                   .origin = "train.py:9",
                   .stack = {"train.py:9"},
                   .config = {{"batch_size", 8}, {"num_workers", 2}},
                   .overrides = {{"applied", json::object()}, {"rejected", {{"in_order", "old"}}}},
                   .max_batches_follow = true};
  figures.dataloader.hook = figures.hook;
  figures.dataloader.loaders = {loader};
  figures.cow.push_back({.pid = 4300,
                         .process = "worker 1",
                         .points = 9,
                         .span_s = 40,
                         .slope_mib_per_min = 12,
                         .slope_ci95_low_mib_per_min = 11,
                         .slope_ci95_high_mib_per_min = {},
                         .growth_mib = 8,
                         .threshold_mib_per_min = 10,
                         .growing = true,
                         .verdict = "growing"});
  figures.loaders.push_back({.pid = 4242,
                             .rank = 0,
                             .loaders = {{.loader = 0,
                                          .origin = "train.py:9",
                                          .dataset = "ImageFolder",
                                          .num_workers = 2,
                                          .batch_size = {},
                                          .batches = 12,
                                          .epochs = 1,
                                          .follow = true}},
                             .chosen = 0,
                             .reason = "the most batches"});
  JobRank rank;
  rank.rank = 0;
  rank.pid = 4242;
  rank.measured_steps = 2;
  rank.window_start_ns = 100;
  rank.window_ms = 3.5;
  rank.samples_per_s = 96;
  rank.stages.getitem = {.count = 2, .mean = 4, .p50 = 4, .p90 = 4, .p99 = 4, .p999 = {}, .max = 4};
  rank.stages.transforms["ToTensor"] = rank.stages.getitem;
  rank.stages.getitem_every = {1, 4};
  rank.epoch_gaps = {.count = 1,
                     .mean_ms = 7,
                     .max_ms = 7,
                     .total_ms = 7,
                     .iterator_starts = 0,
                     .iterator_start_mean_ms = {},
                     .iterator_start_max_ms = {}};
  rank.epoch_boundary.loop = BoundaryJudgement{.boundaries = 0,
                                               .stall_ms = {},
                                               .steady_wait_ms = {},
                                               .excess_ms = {},
                                               .threshold_ms = 1,
                                               .stall = {},
                                               .verdict = "no epoch boundary",
                                               .batch_size = {},
                                               .fill_ms = {},
                                               .unexplained_ms = {},
                                               .noise_ms = {}};
  WorkerStats worker;
  worker.worker = 0;
  worker.pids = {4300};
  rank.workers.workers.push_back(worker);
  figures.ranks = {rank, rank};
  figures.ranks[1].pid = 4243;
  figures.ranks[1].rank = 1;
  figures.rank_comparison.ranks.resize(2);
  figures.rank_comparison.ranks[0].pid = 4242;
  figures.rank_comparison.ranks[0].rank = 0;
  figures.rank_comparison.ranks[0].step_p50_ms = 3;
  figures.rank_comparison.ranks[1].pid = 4243;
  figures.rank_comparison.ranks[1].rank = 1;
  figures.rank_comparison.slowest = 1;
  figures.rank_comparison.slowest_total_ms = 9;
  figures.primary_pid = 4242;
  figures.primary_rank = 0;
  job.job = figures;
  job.latency.transforms["Resize/224"] = {
      .count = 2, .mean = 0.5, .p50 = 0.5, .p90 = 0.5, .p99 = 0.5, .p999 = {}, .max = 0.5};
  job.latency.getitem_per_call = true;
  for (const Summary& s : {stand_in, job}) {
    const json written = to_json(s);
    EXPECT_EQ(to_json(summary_from_json(written, "summary.json")), written) << written.dump();
  }
  const json a = to_json(stand_in);
  EXPECT_EQ(a["throughput"]["pipeline"]["samples_per_batch"], 32);
  EXPECT_FALSE(a["throughput"]["end_to_end"].contains("samples_per_s_wall"));
  EXPECT_FALSE(a["throughput"]["compute"].contains("mb_per_s"));
  EXPECT_TRUE(a["throughput"]["end_to_end"]["samples_per_s"].is_null());
  EXPECT_FALSE(a.contains("job"));
  const json j = to_json(job)["job"];
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_TRUE(j["stuck"][0]["item"].is_null());
  EXPECT_TRUE(j["steps"]["short_why"].is_null());
  EXPECT_EQ(j["rank_comparison"]["slowest_rank"], (json{{"rank", 1}, {"pid", 4243}}));
  EXPECT_EQ(j["ranks"][0]["epoch_boundary"]["verdict"], "no epoch boundary");  // flat: a loop
  EXPECT_EQ(j["ranks"][0]["latency_ms"]["stages"]["transforms"]["ToTensor"]["p50"], 4.0);
  EXPECT_FALSE(j["ranks"][0]["workers"]["workers"][0].contains("stage_ms"));  // mmprof's only
  EXPECT_EQ(j["dataloader"]["loaders"][0]["overrides"]["rejected"]["in_order"], "old");
  EXPECT_EQ(j["cow"][0]["process"], "worker 1");
  const Summary read = summary_from_json(to_json(job), "summary.json");
  EXPECT_EQ(read.job->dataloader.followed()->config["batch_size"], 8);
  EXPECT_EQ(read.job->rank_of(4243)->rank, 1);
  EXPECT_EQ(read.job->rank_comparison.slowest, 1u);
  EXPECT_EQ(a["shuffle"]["gap_ratio"], 1.5);
  EXPECT_EQ(a["memory"]["mains"].size(), 2u);
  EXPECT_EQ(a["memory"]["external"][0]["role"], "agent");
  EXPECT_EQ(a["memory"]["workers"][0]["loader"], 1);
  EXPECT_FALSE(a["memory"]["workers"][0].contains("comm"));
  EXPECT_EQ(a["cpu"]["window"], "pipeline");
  EXPECT_TRUE(a["cpu"]["phases"]["compute"].is_null());
  EXPECT_EQ(a["cpu"]["pressure"], (json{{"available", false}, {"reason", "no PSI"}}));
  EXPECT_EQ(a["io"]["phases"]["pipeline"]["read_bytes"], 4096);
  EXPECT_EQ(a["errors"], (json{{"count", 4}, {"samples", 2}}));
  // Without a sampler the parts say so with nulls.
  EXPECT_EQ(to_json(job)["memory"], (json{{"main", nullptr},
                                          {"workers", json::array()},
                                          {"host_peak_mib", nullptr},
                                          {"total_pss_peak_mib", nullptr}}));
  EXPECT_EQ(to_json(job)["io"], (json{{"read_bytes", nullptr}, {"read_mb_per_s", nullptr}}));
  EXPECT_EQ(a["latency_ms"]["step"]["p999"], 3.5);
  EXPECT_FALSE(a["latency_ms"]["stages"]["decode"].contains("p999"));  // no p999 for stages
  EXPECT_TRUE(a["latency_ms"]["wait"]["p50"].is_null());
  EXPECT_EQ(a["latency_ms"]["wait"]["count"], 0);
  EXPECT_TRUE(a["latency_ms"].contains("sync"));
  EXPECT_FALSE(a["latency_ms"].contains("transforms"));
  EXPECT_EQ(summary_from_json(a, "summary.json").latency.stage("decode").p50, 1.25);
  EXPECT_EQ(summary_from_json(a, "summary.json").latency.stage("read").count, 0u);
  const json b = to_json(job);
  EXPECT_EQ(b["throughput"]["end_to_end"]["samples_per_s_wall"], 90.5);
  EXPECT_FALSE(b["throughput"]["end_to_end"].contains("samples_per_batch"));
  EXPECT_EQ(b["throughput"]["compute"]["why_null"], "a user's job");
  EXPECT_TRUE(b["stall_fraction"].is_null());
  EXPECT_FALSE(b.contains("shuffle"));
  EXPECT_FALSE(b["latency_ms"].contains("sync"));
  EXPECT_EQ(b["latency_ms"]["getitem_per_call"], true);
  EXPECT_EQ(summary_from_json(b, "summary.json").latency.transforms.at("Resize/224").mean, 0.5);

  std::ofstream(dir_.path() / run_file::manifest) << R"({"schema": "mmprof.manifest/2"})";
  const std::vector<std::pair<std::string, json>> wrong = {
      {"/throughput/pipeline/samples_per_s", "fast"},
      {"/latency_ms/stages/decode/p99", "slow"},
      {"/latency_ms/phase", 7},
      {"/memory/workers/0/pss_peak_mib", "big"},
      {"/cpu/phases/pipeline/per_process/0/cores", true},
      {"/gpu/idle_fraction", "idle"}};
  json with_gpu = a;
  with_gpu["gpu"] = {{"window", {{"steps", 3}}}};
  for (const auto& [pointer, value] : wrong) {
    json bad = with_gpu;
    bad[json::json_pointer(pointer)] = value;
    std::ofstream(dir_.path() / run_file::summary) << bad.dump();
    const std::string e = error_of([&] { RunDir::open(dir_.path()); });
    EXPECT_NE(e.find(fmt::format("summary.json: key {} is ", pointer)), std::string::npos) << e;
    EXPECT_NE(e.find(", where a "), std::string::npos) << e;
  }
  // A whole number outside what it can hold (a found file, not one mmprof wrote: casting it would
  // be undefined) is refused too.
  for (const auto& [pointer, value] :
       std::vector<std::pair<std::string, json>>{{"/memory/main/pid", 1e300},
                                                 {"/io/phases/pipeline/read_bytes", -1},
                                                 {"/latency_ms/step/count", -4},
                                                 {"/gpu/window/steps", 1e19}}) {
    json bad = with_gpu;
    bad[json::json_pointer(pointer)] = value;
    std::ofstream(dir_.path() / run_file::summary) << bad.dump();
    const std::string e = error_of([&] { RunDir::open(dir_.path()); });
    EXPECT_NE(e.find(fmt::format("summary.json: key {} is ", pointer)), std::string::npos) << e;
    EXPECT_NE(e.find("outside the whole numbers it can hold"), std::string::npos) << e;
  }
  // The external array's processes are neither a main process nor a worker, whatever they say.
  json odd = a;
  odd["memory"]["external"][0]["role"] = "worker";
  EXPECT_EQ(summary_from_json(odd, "summary.json").memory.external[0].role, "external");
}

// The phases and the loading parts: a remote, cold stand-in's locality (network keys, pages left
// resident), reliability with its resume record, each phase's epoch boundary with the pipeline's as
// the run's, the trace; a job's flat epoch boundary, its trace's source and no reliability. Written
// as docs/metrics.md says, read back equal, a wrong type refused naming the key.
TEST_F(RunDirTest, TheLoadingPartsReadBackWhatTheyWrote) {
  Locality l;
  l.source = "network";
  l.cache = "cold";
  l.dataset_files = 40;
  l.dataset_bytes = 123456789;
  l.residency_files = 40;
  l.url = "http://127.0.0.1:8080/data";
  l.note = "read over HTTP";
  l.phases["pipeline"] = {.prepared = "evicted",
                          .prepare_s = 0.25,
                          .resident_before = {},
                          .resident_at_window = 0,
                          .resident_after = 0,
                          .loader_bytes = 5000000,
                          .device_bytes = {},
                          .page_cache_fraction = {},
                          .network_bytes = 5000000,
                          .read_span_s = 2.5,
                          .network_mb_per_s = 2,
                          .read_retries = 3,
                          .pages_left_resident = 7};
  Summary stand_in;
  stand_in.locality = l;
  stand_in.reliability = Reliability{.skipped_samples = 2,
                                     .rejected_members = 1,
                                     .ignored_files = 4,
                                     .respawns = 1,
                                     .retries = 0,
                                     .hung_workers = 0,
                                     .worker_faults = {"worker 1 killed by SIGKILL"}};
  stand_in.resume = ResumeRecord{.from = "/runs/a",
                                 .phase = "pipeline",
                                 .start_batch_id = 12,
                                 .start_epoch = 3,
                                 .measured_steps_before = 9,
                                 .time_to_first_batch_ms = 812.5,
                                 .loader_time_to_first_batch_ms = 640.25};
  EpochBoundaryFigures e;
  e.persistent_workers = false;
  e.batches_per_epoch = 3;
  e.phases["pipeline"] = {.boundaries = 2,
                          .stall_ms = 25,
                          .steady_wait_ms = 2.5,
                          .excess_ms = 22.5,
                          .threshold_ms = 1,
                          .stall = true,
                          .verdict = "boundary stall",
                          .batch_size = 4,
                          .fill_ms = 5,
                          .unexplained_ms = 20,
                          .noise_ms = 0};
  e.phases["end_to_end"] = {.boundaries = 0,
                            .stall_ms = {},
                            .steady_wait_ms = 3,
                            .excess_ms = {},
                            .threshold_ms = 1,
                            .stall = {},
                            .verdict = "no epoch boundary in the measured steps",
                            .batch_size = {},
                            .fill_ms = {},
                            .unexplained_ms = {},
                            .noise_ms = {}};
  stand_in.epoch_boundary = e;
  stand_in.trace = TraceFigures{.file = "trace.json",
                                .events = 90,
                                .recorded_events = 80,
                                .dropped_events = 5,
                                .max_events = 85,
                                .gpu_events = 0,
                                .sample_every = 1,
                                .flows = 10,
                                .source = {}};
  stand_in.phases["pipeline"] = PhaseCounts{.steps = 40,
                                            .batches = 40,
                                            .samples = 1280,
                                            .time_to_first_batch_ms = 250,
                                            .bytes = 99000000,
                                            .window_s = 3.5,
                                            .warmup_steps = 5,
                                            .warmup_s = 0.75,
                                            .failures = 2,
                                            .minflt_per_sample = {},
                                            .majflt = 1};
  stand_in.pin_mode = "pageable: loader.pin_memory=false";
  DecodePlacement placement;
  placement.where = "main process decodes images: nvjpeg";
  placement.phase = "pipeline";
  placement.device_decode_ms = {
      .count = 3, .mean = 20, .p50 = 20, .p90 = 28, .p99 = 29.8, .p999 = {}, .max = 30};
  placement.cpu_fallbacks = 2;
  placement.cpu_fallback_reason = "png does not decode on the GPU";
  placement.nvml = NvmlFigures{.reason = {},
                               .gpu = "H200",
                               .source = "NVML",
                               .readings = 2,
                               .decoder_util_pct = {},
                               .jpeg_util_pct = 50,
                               .sm_util_pct = 20,
                               .memory_bw_util_pct = {},
                               .memory_used_mib = 4096,
                               .process_memory_mib = 900};
  placement.compute_inflation.compute_phase_p50_ms = 500;
  placement.compute_inflation.why_null = "step.kind=sleep computes nothing decode could take";
  stand_in.decode_placement = placement;
  stand_in.dist = DistRank{.rank = 1,
                           .world_size = 2,
                           .sync = "allreduce",
                           .group = "gloo, 2 ranks",
                           .phase = "end_to_end",
                           .sync_ms_total = 120,
                           .sync_fraction = 0.125,
                           .epochs = {{.epoch = 0, .samples = 40, .batches = 10},
                                      {.epoch = 1, .samples = 44, .batches = 11}}};
  stand_in.read_pattern = ReadPattern{
      .phase = "pipeline", .media_reads = 64, .sequential_fraction = 0.75, .kib_per_sample = 96};
  SampleClassFigures webp{.label = "webp images >8 MP",
                          .samples = 3,
                          .bytes = 3000000,
                          .read_ms_mean = 1,
                          .decode_ms_mean = 90,
                          .decode_ms_p50 = 90,
                          .decode_ms_p90 = 92,
                          .augment_ms_mean = 2,
                          .decode_ms_total = 270,
                          .source_megapixels_mean = 12,
                          .decode_share = 0.5,
                          .modality = "image",
                          .format = "webp",
                          .resolution = ">8 MP"};
  SampleClassFigures jpeg = webp;
  jpeg.label = "jpeg";
  jpeg.decode_share = {};
  jpeg.modality = jpeg.format = jpeg.resolution = "";
  stand_in.stage_breakdown = StageBreakdownFigures{.phase = "pipeline",
                                                   .samples = 33,
                                                   .decode_ms_total = 540,
                                                   .resolution_buckets_megapixels = {0.5, 2, 8},
                                                   .by_modality = {},
                                                   .by_format = {jpeg},
                                                   .by_resolution = {},
                                                   .by_class = {webp},
                                                   .slowest = webp,
                                                   .rest_decode_ms_mean = 9,
                                                   .times_rest = {},
                                                   .largest_share = webp};
  WorkerStats busy{.worker = 0,
                   .pids = {},
                   .batches = 3,
                   .samples = 24,
                   .bytes = 24000,
                   .busy_ms = 246,
                   .busy_fraction = 0.98,
                   .fetch_mean_ms = 82,
                   .getitem_p50_ms = 10,
                   .getitem_p90_ms = {},
                   .slowest_items = {{"k7", 92.5}},
                   .slowest_class_share = 0.125,
                   .stage_ms = 240,
                   .collate_ms = 6};
  stand_in.workers_balance = WorkerBalance{.workers = {busy},
                                           .busy_spread = 0.48,
                                           .busy_spread_limit = 0.2,
                                           .busy_max_over_median = {},
                                           .imbalanced = true,
                                           .flags = {"busy fractions differ by 0.48"},
                                           .likely_cause = "batch sizes",
                                           .cause_kind = "batch_sizes"};
  const json a = to_json(stand_in);
  const json& w = a["workers_balance"]["workers"][0];
  EXPECT_EQ(w["slowest_items"][0], (json{{"index", "k7"}, {"getitem_ms", 92.5}}));
  EXPECT_EQ(w["collate_ms"], 6.0);
  EXPECT_EQ(a["workers_balance"]["likely_cause_kind"], "batch_sizes");
  EXPECT_EQ(a["stage_breakdown"]["slowest"]["by_mean_decode"]["rest_decode_ms_mean"], 9.0);
  EXPECT_FALSE(a["stage_breakdown"]["by_format"][0].contains("modality"));  // by_class only
  EXPECT_TRUE(a["stage_breakdown"]["by_format"][0]["decode_share"].is_null());
  const json& p = a["locality"]["phases"]["pipeline"];
  EXPECT_TRUE(p["resident_before"].is_null());
  EXPECT_EQ(p["network_mb_per_s"], 2.0);
  EXPECT_EQ(p["pages_left_resident"], 7);
  EXPECT_EQ(a["reliability"]["resume"]["start_batch_id"], 12);
  EXPECT_EQ(a["reliability"]["worker_faults"][0], "worker 1 killed by SIGKILL");
  EXPECT_EQ(a["epoch_boundary"]["stall_ms"], 25.0);  // the pipeline phase's
  EXPECT_EQ(a["epoch_boundary"]["verdict"], "boundary stall");
  EXPECT_TRUE(a["epoch_boundary"]["end_to_end"]["noise_ms"].is_null());
  EXPECT_EQ(a["trace"]["flows"], 10);
  EXPECT_FALSE(a["trace"].contains("source"));
  EXPECT_FALSE(a.contains("shuffle"));
  EXPECT_TRUE(a["phases"]["compute"].is_null());
  EXPECT_TRUE(a["phases"]["pipeline"]["minflt_per_sample"].is_null());
  EXPECT_EQ(a["phases"]["pipeline"]["majflt"], 1);
  EXPECT_EQ(a["pin_mode"], "pageable: loader.pin_memory=false");
  EXPECT_EQ(a["dist"]["epochs"][1], (json{{"epoch", 1}, {"samples", 44}, {"batches", 11}}));
  const json& d = a["decode_placement"];
  EXPECT_FALSE(d["device_decode_ms"].contains("p999"));
  EXPECT_TRUE(d["nvml"]["decoder_util_pct"].is_null());
  EXPECT_FALSE(d["nvml"].contains("reason"));
  EXPECT_TRUE(d["compute_inflation"]["pct"].is_null());
  EXPECT_EQ(d["compute_inflation"]["why_null"], placement.compute_inflation.why_null);

  Summary job;
  job.source = "external";
  job.epoch_boundary.emplace().loop = BoundaryJudgement{.boundaries = 1,
                                                        .stall_ms = 40,
                                                        .steady_wait_ms = 4,
                                                        .excess_ms = 36,
                                                        .threshold_ms = 2,
                                                        .stall = true,
                                                        .verdict = "boundary stall",
                                                        .batch_size = {},
                                                        .fill_ms = {},
                                                        .unexplained_ms = {},
                                                        .noise_ms = {}};
  job.phases["end_to_end"] = PhaseCounts{.steps = 8,
                                         .batches = 8,
                                         .samples = 256,
                                         .time_to_first_batch_ms = {},
                                         .bytes = 0,
                                         .window_s = 1.25,
                                         .warmup_steps = 2,
                                         .warmup_s = 0,
                                         .failures = 0,
                                         .minflt_per_sample = {},
                                         .majflt = 0};
  job.trace = TraceFigures{.file = "trace.json",
                           .events = 9,
                           .recorded_events = 9,
                           .dropped_events = 0,
                           .max_events = 100,
                           .gpu_events = 0,
                           .sample_every = {},
                           .flows = {},
                           .source = "the hook's records, after the run"};
  const json b = to_json(job);
  EXPECT_TRUE(b["reliability"].is_null());
  EXPECT_TRUE(b["epoch_boundary"]["persistent_workers"].is_null());
  EXPECT_EQ(b["epoch_boundary"]["excess_ms"], 36.0);  // flat: the job's loop
  EXPECT_FALSE(b["epoch_boundary"].contains("fill_ms"));
  EXPECT_FALSE(b["trace"].contains("flows"));
  EXPECT_FALSE(b.contains("locality"));
  EXPECT_FALSE(b.contains("dist"));
  EXPECT_TRUE(b["pin_mode"].is_null());
  EXPECT_EQ(b["phases"]["end_to_end"]["samples"], 256);
  EXPECT_FALSE(b["phases"]["end_to_end"].contains("failures"));  // mmprof's loader's only
  EXPECT_TRUE(summary_from_json(b, "summary.json").ran("end_to_end"));
  EXPECT_FALSE(summary_from_json(b, "summary.json").ran("pipeline"));
  for (const json& written : {a, b})
    EXPECT_EQ(to_json(summary_from_json(written, "summary.json")), written) << written.dump();
  EXPECT_EQ(summary_from_json(b, "summary.json").epoch_boundary->headline()->stall_ms, 40.0);
  // NVML unavailable: the reason alone.
  Summary no_nvml = stand_in;
  NvmlFigures unavailable;
  unavailable.reason = "libnvidia-ml.so.1 not found";
  no_nvml.decode_placement->nvml = unavailable;
  const json c = to_json(no_nvml);
  EXPECT_EQ(c["decode_placement"]["nvml"], (json{{"reason", "libnvidia-ml.so.1 not found"}}));
  EXPECT_EQ(to_json(summary_from_json(c, "summary.json")), c);

  for (const auto& [doc, pointer, value] : std::vector<std::tuple<json, std::string, json>>{
           {a, "/locality/phases/pipeline/loader_bytes", "many"},
           {a, "/locality/fits_in_ram", "yes"},
           {a, "/reliability/worker_faults/0", 3},
           {a, "/reliability/resume/from", json::array()},
           {a, "/epoch_boundary/pipeline/stall", 1},
           {a, "/read_pattern", "sequential"},
           {b, "/epoch_boundary/verdict", 0},
           {b, "/trace/events", "nine"},
           {a, "/phases/pipeline/steps", "forty"},
           {a, "/phases/compute", "ran"},
           {a, "/pin_mode", 1},
           {a, "/decode_placement/nvml/sm_util_pct", "busy"},
           {a, "/decode_placement/device_decode_ms/p50", "slow"},
           {a, "/dist/epochs/0/samples", "forty"},
           {a, "/dist/epochs/1", "epoch one"},
           {a, "/dist/epochs", "all"},
           {a, "/stage_breakdown/by_class/0/samples", "three"},
           {a, "/stage_breakdown/by_format", "jpeg"},
           {a, "/workers_balance/workers/0/pids", 7},
           {a, "/workers_balance/workers/0/slowest_items/0", "k7"},
           {a, "/workers_balance/flags", "uneven"}}) {
    json bad = doc;
    bad[json::json_pointer(pointer)] = value;
    const std::string err = error_of([&] { summary_from_json(bad, "summary.json"); });
    EXPECT_NE(err.find(fmt::format("summary.json: key {} is ", pointer)), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace mmprof
