// Multi-rank baselines on PyTorch's own c10d (gloo over the loopback), started by mmprof
// (--nproc-per-node) and by Debian's real torchrun: a planted slow rank is named and its peer's
// sync wait matches the plan; four ranks read every sample exactly once per epoch; a rank that
// dies or hangs stops the others within the bound, and the job keeps and names everything; ranks
// that cannot meet or disagree refuse to start.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "mmprof/run_dir.hpp"
#include "stats/descriptive.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::shell_quote;
using ::testing::HasSubstr;

// Small batches of small images and one worker per rank: up to four ranks share 2 cores.
constexpr const char* kSmall =
    " --set loader.batch_size=4 --set loader.num_workers=1 --set image.size=64 "
    "--set step.kind=sleep";

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class DistCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ds_.make(
        "--images 64 --videos 0 --png-fraction 0 --threads 1 --seed 3 --layout both --shard-mb 1");
  }
  static void TearDownTestSuite() { ds_.drop(); }
  void SetUp() override { ASSERT_EQ(ds_.gen().exit_code, 0) << ds_.gen().output; }

  static fs::path data() { return ds_.path(); }
  fs::path job() const { return tmp_.path() / "job"; }
  // mmprof ARGS with the environment `env` ("NAME=VALUE ...") before it.
  static test::CommandResult mmprof_with(const std::string& env, const std::string& args) {
    return test::run_command("env " + env + " " + shell_quote(test::mmprof_bin()) + " " + args +
                             " </dev/null");
  }
  static json rank_of(const json& job, int k) { return job["ranks"][static_cast<size_t>(k)]; }

  static test::SuiteDataset ds_;
  test::TempDir tmp_;
};

test::SuiteDataset DistCli::ds_;

// Rank 1's step is planted 80 ms slower than rank 0's 20 ms: in a barrier after every step,
// rank 0 waits those 80 ms, and rank 1 hardly waits at all.
TEST_F(DistCli, APlantedSlowRankIsNamedAndItsPeerWaitsThePlannedTime) {
  const auto r = mmprof_with(
      "MMPROF_TEST_SLOW_RANK=1:80",
      "baseline --nproc-per-node 2 --data " + shell_quote(data()) + kSmall +
          " --set step.ms=20 --set dist.sync=barrier --steps 20 --warmup-steps 3 --out " +
          shell_quote(job()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("slowest rank: 1"));
  const json j = test::read_json(job() / run_file::job);
  EXPECT_EQ(j["schema"], "mmprof.job/1");
  EXPECT_EQ(j["status"], "complete");
  EXPECT_EQ(j["world_size"], 2);
  EXPECT_EQ(j["sync"], "barrier");
  EXPECT_THAT(j["group"].get<std::string>(), HasSubstr("gloo"));
  const json& s = j["stragglers"];
  EXPECT_EQ(s["slowest_rank"], 1);
  EXPECT_GE(s["slowest_rank_share"].get<double>(), 0.9);
  EXPECT_EQ(s["cause"]["kind"], "compute");
  // Each rank's steps.csv adds up: wait, compute and sync are disjoint parts of the step (one
  // clock, four figures rounded to 1e-4 ms), so never more than it; the rest is mmprof's own
  // bookkeeping between them, small in the typical step. Compute is at least the planned sleeps.
  std::vector<double> compute[2];
  for (int k = 0; k < 2; ++k) {
    std::vector<double> rest;
    for (const StepRow& row : RunDir::open(job() / ("rank-" + std::to_string(k))).steps()) {
      if (row.phase != "end_to_end") continue;
      ASSERT_TRUE(row.sync_ms.has_value());
      const double parts = row.wait_ms + row.compute_ms + *row.sync_ms;
      EXPECT_LE(parts, row.step_ms + 4e-4) << "wait, compute and sync overlap";
      EXPECT_GE(row.compute_ms, k == 1 ? 100.0 : 20.0);
      rest.push_back(row.step_ms - parts);
      compute[k].push_back(row.compute_ms);
    }
    EXPECT_EQ(rest.size(), 20u);
    EXPECT_LT(median(rest), 2.0) << "rank " << k;
  }
  // The cause is rank 1's extra compute as the ranks measured it, and rank 0 waits it out at the
  // sync (its wait includes the barrier's own latency, which rank 1's wait has too).
  const double extra = mean(compute[1]) - mean(compute[0]);
  EXPECT_NEAR(s["cause"]["extra_compute_ms_per_step"].get<double>(), extra, 1e-3);
  EXPECT_GE(extra, 80 - (mean(compute[0]) - 20) - 1e-3);
  const double sync0 = rank_of(j, 0)["sync_ms_mean"].get<double>();
  const double sync1 = rank_of(j, 1)["sync_ms_mean"].get<double>();
  EXPECT_GT(sync0 - sync1, 0.8 * 80) << j.dump(1);
  EXPECT_LE(sync0, extra + 16) << j.dump(1);
  // Both ranks ran in lockstep: equal samples, and the job's throughput the sum of the two.
  EXPECT_EQ(rank_of(j, 0)["samples"], rank_of(j, 1)["samples"]) << j.dump(1);
  const double r0 = rank_of(j, 0)["samples_per_s"].get<double>();
  const double r1 = rank_of(j, 1)["samples_per_s"].get<double>();
  EXPECT_NEAR(j["global"]["samples_per_s"].get<double>(), r0 + r1, 1e-6);

  const auto rep = test::run_mmprof("report --quiet " + shell_quote(job()));
  ASSERT_EQ(rep.exit_code, 0) << rep.output;
  const std::string md = test::read_text(job() / run_file::report_md);
  EXPECT_THAT(md, HasSubstr("## Job " + job().string() + ": 2 ranks, slowest rank 1"));
  EXPECT_THAT(md, HasSubstr("Rank 1 is the straggler"));
  EXPECT_THAT(md, HasSubstr("## Run " + (job() / "rank-1").string()));
  const std::string html = test::read_text(job() / run_file::report_html);
  EXPECT_THAT(html, HasSubstr("ms before the sync"));
  EXPECT_THAT(html, HasSubstr("rank 0"));
}

// Across 4 ranks, one epoch of 64 samples is each sample once, in each layout: the permutation's
// strided split (files, indexed tar) and the streamed shards' split by rank. allreduce sums a
// 1 MB gradient after every step.
TEST_F(DistCli, FourRanksReadEverySampleOnceAcrossRanksInEachLayout) {
  for (const char* layout : {"files", "tar", "tar_stream"}) {
    SCOPED_TRACE(layout);
    const fs::path out = tmp_.path() / layout;
    // 8 steps of 4 cover a rank's share of the first epoch (16 samples, or its shards' for a
    // stream); the first epoch's samples are picked by the batches' epochs.
    const auto r =
        test::run_mmprof("baseline --quiet --nproc-per-node 4 --data " + shell_quote(data()) +
                         kSmall + " --set data.layout=" + layout +
                         " --set data.shuffle_buffer=4 --set step.ms=5 --set dist.sync=allreduce"
                         " --set dist.allreduce_mb=1 --steps 8 --warmup-steps 0 --out " +
                         shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(test::read_json(out / run_file::job)["status"], "complete");
    std::multiset<std::string> keys;
    for (int k = 0; k < 4; ++k) {
      const fs::path rank = out / ("rank-" + std::to_string(k));
      const RunDir run = RunDir::open(rank);
      ASSERT_TRUE(run.summary().dist.has_value()) << "rank " << k;
      const DistRank& dist = *run.summary().dist;
      EXPECT_EQ(dist.world_size, 4);
      EXPECT_EQ(dist.rank, k);
      const auto mine = test::first_epoch_keys(rank, "pipeline");
      if (std::string(layout) != "tar_stream") {
        EXPECT_EQ(mine.size(), 16u) << "rank " << k;
      }
      // The rank's planned epoch 0 (job.json compares them) is what it read of epoch 0, where
      // its 8 steps of 4 covered it.
      ASSERT_FALSE(dist.epochs.empty()) << "rank " << k;
      const auto epoch0 = static_cast<size_t>(dist.epochs[0].samples);
      if (epoch0 <= 8 * 4) {
        EXPECT_EQ(mine.size(), epoch0) << "rank " << k;
      }
      EXPECT_EQ(static_cast<size_t>(dist.epochs[0].batches),
                (epoch0 + 3) / 4);  // one worker cuts them
      keys.insert(mine.begin(), mine.end());
      for (const StepRow& row : run.steps()) {
        EXPECT_EQ(row.sync_ms.has_value(), row.phase != "pipeline") << row.phase;
      }
    }
    EXPECT_EQ(keys.size(), 64u);
    EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), 64u);
    // A permutation's 16 samples a rank are 4 steps each, every epoch alike; streamed shards are
    // dealt anew each epoch, and their first 4 are compared.
    const json epochs = test::read_json(out / run_file::job)["epochs"];
    const bool stream = std::string(layout) == "tar_stream";
    EXPECT_EQ(epochs["checked"], stream ? 4 : 1) << epochs.dump();
    if (!stream) {
      EXPECT_EQ(epochs["text"], "every rank takes 4 steps per epoch (1 epoch checked)");
    }
  }
}

// torchrun (Debian's, for /usr/bin/python3) starts the ranks; mmprof joins its rendezvous.
// --redirects/--tee: Debian's torch 1.13 under Python 3.11 cannot parse their default of 0.
TEST_F(DistCli, UnderTorchrunEachProcessIsARankAndRankZeroMergesTheJob) {
  if (test::run_command("/usr/bin/python3 -c 'import torch' 2>/dev/null").exit_code != 0)
    MMPROF_SKIP_WITHOUT("torch", "/usr/bin/python3 has no torch: scripts/install-deps");
  const auto r = test::run_command(
      "/usr/bin/python3 -m torch.distributed.run --standalone --nproc_per_node 2 --redirects 1 "
      "--tee 1 --no_python " +
      shell_quote(test::mmprof_bin()) + " baseline --data " + shell_quote(data()) + kSmall +
      " --set step.ms=5 --set dist.sync=allreduce --steps 6 --warmup-steps 1 --out " +
      shell_quote(job()) + " </dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("job: 2 ranks, dist.sync=allreduce"));
  const json j = test::read_json(job() / run_file::job);
  EXPECT_EQ(j["status"], "complete");
  EXPECT_EQ(rank_of(j, 1)["status"], "complete");
  EXPECT_TRUE(rank_of(j, 1)["sync_ms_mean"].is_number());
}

// Rank 1 is killed (SIGKILL) in its 8th micro-batch: rank 0's next collective fails at once,
// it keeps what it measured, and the job names rank 1 as the first failure.
TEST_F(DistCli, ADeadRankStopsItsPeerAndTheJobNamesIt) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = mmprof_with(
      "MMPROF_TEST_DIE_RANK=1:8",
      "baseline --quiet --nproc-per-node 2 --data " + shell_quote(data()) + kSmall +
          " --set step.ms=5 --set dist.sync=allreduce --set dist.timeout_s=600 --steps 10 "
          "--warmup-steps 2 --out " +
          shell_quote(job()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_LT(seconds_since(t0), 120) << "the peer waited for the timeout instead of failing";
  const json j = test::read_json(job() / run_file::job);
  EXPECT_EQ(j["status"], "failed");
  EXPECT_EQ(j["first_failed_rank"], 1);
  EXPECT_THAT(rank_of(j, 1)["exit"]["how"].get<std::string>(), HasSubstr("signal 9"));
  EXPECT_EQ(rank_of(j, 0)["status"], "failed");
  EXPECT_THAT(rank_of(j, 0)["message"].get<std::string>(), HasSubstr("rank 0: "));
  // Rank 0's pipeline phase, done before the failure, is on disk.
  const RunDir run0 = RunDir::open(job() / "rank-0");
  EXPECT_EQ(run0.summary().status, "failed");
  int pipeline = 0;
  for (const StepRow& row : run0.steps())
    pipeline += row.phase == "pipeline" ? 1 : 0;
  EXPECT_EQ(pipeline, 10);
}

// Rank 1 hangs in its step (10 minutes): rank 0's collective times out after dist.timeout_s
// (10 s, which also bounds the rendezvous: room for a loaded machine's start-up), and the
// launcher stops rank 1, naming it, after the grace period. The bound on the whole command is far
// from the hang, not a timing margin.
TEST_F(DistCli, AHungRankTimesOutItsPeerAndIsStopped) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r =
      mmprof_with("MMPROF_TEST_SLOW_RANK=1:600000",
                  "baseline --quiet --nproc-per-node 2 --data " + shell_quote(data()) + kSmall +
                      " --set step.ms=5 --set dist.sync=barrier --set dist.timeout_s=10 --steps 4 "
                      "--warmup-steps 1 --out " +
                      shell_quote(job()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_LT(seconds_since(t0), 180);
  const json j = test::read_json(job() / run_file::job);
  EXPECT_EQ(j["first_failed_rank"], 0);
  EXPECT_THAT(rank_of(j, 0)["message"].get<std::string>(), HasSubstr("Timed out"));
  EXPECT_THAT(rank_of(j, 1)["exit"]["how"].get<std::string>(), HasSubstr("stopped by mmprof"));
}

// One shard of 64 JPEGs and one of 64 1280x720 PNGs (tens of times the bytes, each several times
// slower to decode: an effect no load on the other rank can hide), streamed by two ranks within
// one epoch: each rank reads one shard, the PNG rank is the straggler, its data the cause, and the
// job advises re-sharding balanced by bytes. The straggler is named only on a significant test
// over the measured steps (issue 32), so every measured batch is the shards' own: equal counts
// keep the PNGs out of the JPEG shard, and 10 steps after 3 of warm-up (which drain what the
// loader prefetched) stay within the 16 batches of an epoch.
TEST_F(DistCli, AShardOfBigSamplesMakesItsRankTheStragglerAndTheJobAdvisesResharding) {
  const fs::path png = tmp_.path() / "png", mixed = tmp_.path() / "mixed";
  auto r = test::run_mmprof(
      "gen --quiet --out " + shell_quote(png) +
      " --images 64 --videos 0 --png-fraction 1 --image-size 1280x720 --threads 2 --seed 4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  fs::create_directories(mixed);
  uint64_t total = 0;
  for (const auto& [from, prefix] : {std::pair{data() / "files", "a"}, {png / "files", "b"}}) {
    for (const auto& f : fs::directory_iterator(from)) {
      if (f.path().filename().string().rfind("0", 0) != 0) continue;  // the samples only
      fs::copy_file(f.path(), mixed / (prefix + f.path().filename().string()));
      total += fs::file_size(f.path());
    }
  }
  // By count, about half the bytes each: two shards, the JPEGs' (keys a...) and the PNGs'.
  const fs::path shards = tmp_.path() / "shards";
  r = test::run_mmprof("shard --quiet " + shell_quote(mixed) + " --out " + shell_quote(shards) +
                       " --by-count --shard-mb " +
                       std::to_string(static_cast<double>(total) / 2e6));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = test::run_mmprof("baseline --quiet --nproc-per-node 2 --data " + shell_quote(shards) +
                       kSmall +
                       " --set data.layout=tar_stream --set data.shuffle_buffer=8 --set step.ms=2"
                       " --set dist.sync=allreduce --steps 10 --warmup-steps 3 --out " +
                       shell_quote(job()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = test::read_json(job() / run_file::job);
  const json& s = j["stragglers"];
  ASSERT_EQ(s["established"], true) << s.dump(1);
  // 64 samples a shard, one shard a rank whichever way an epoch deals them: equal epochs.
  EXPECT_EQ(j["epochs"]["text"], "every rank takes 16 steps per epoch (4 epochs checked)")
      << j["epochs"].dump();
  const int slow = s["slowest_rank"].get<int>();
  const auto per_sample = [&](int k) {
    return rank_of(j, k)["bytes"].get<double>() / rank_of(j, k)["samples"].get<double>();
  };
  EXPECT_GT(per_sample(slow), 5 * per_sample(1 - slow)) << "rank " << slow << " read the JPEGs";
  EXPECT_EQ(s["cause"]["kind"], "data");
  const json& advice = s["cause"]["reshard"];
  EXPECT_GT(advice["bytes_per_sample_ratio"].get<double>(), 5);
  EXPECT_THAT(advice["commands"][0].get<std::string>(),
              HasSubstr("mmprof shard " + shards.string() + " --out " + shards.string() +
                        "-balanced --by-size"));
  EXPECT_THAT(
      advice["commands"][1].get<std::string>(),
      HasSubstr("--factor data.path=" + shards.string() + "," + shards.string() + "-balanced"));
  r = test::run_mmprof("report --quiet " + shell_quote(job()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(test::read_text(job() / run_file::report_md), HasSubstr("--by-size"));
  EXPECT_THAT(test::read_text(job() / run_file::report_md),
              HasSubstr("Epochs: every rank takes 16 steps per epoch (4 epochs checked)."));
}

TEST_F(DistCli, RanksThatCannotMeetOrDisagreeRefuseToStart) {
  auto r = mmprof_with("WORLD_SIZE=2 RANK=0 MASTER_ADDR= MASTER_PORT=",
                       "baseline --data " + shell_quote(data()) + " --steps 2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("neither MASTER_ADDR nor MASTER_PORT is set"));
  r = mmprof_with("WORLD_SIZE=2", "baseline --nproc-per-node 2 --data " + shell_quote(data()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("WORLD_SIZE=2 is already set"));
  // Two ranks started by hand, as torchrun would, but with different worker counts.
  const std::string env = "WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29731";
  const std::string args = "baseline --quiet --data " + shell_quote(data()) + kSmall +
                           " --steps 2 --out " + shell_quote(job());
  r = test::run_command(
      "{ (env " + env + " RANK=1 " + shell_quote(test::mmprof_bin()) + " " + args +
      " --set loader.num_workers=2 </dev/null > " + shell_quote(tmp_.path() / "rank1.log") +
      " 2>&1; echo $? > " + shell_quote(tmp_.path() / "rank1.rc") + ") & env " + env + " RANK=0 " +
      shell_quote(test::mmprof_bin()) + " " + args + " </dev/null; rc=$?; wait; exit $rc; }");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("rank 1 runs another configuration or dataset than rank 0 "
                                  "(/loader/num_workers differs: 1 on rank 0, 2 on rank 1)"));
  EXPECT_EQ(test::read_text(tmp_.path() / "rank1.rc"), "2\n");
  EXPECT_FALSE(fs::exists(job() / "rank-0"));
}

}  // namespace
}  // namespace mmprof
