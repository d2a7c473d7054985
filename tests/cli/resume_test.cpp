// `mmprof baseline --resume RUN` through the built binary: a run interrupted by SIGINT in the
// middle of a phase, resumed, delivers the batches of an uninterrupted run (digests.csv equal at
// every batch id); a completed, already resumed or checkpoint-less run is refused with one
// sentence naming it. summary.json's epoch-boundary stall is cross-checked against steps.csv.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

using test::read_json;

namespace fs = std::filesystem;
using nlohmann::json;
using DigestRows = std::map<std::pair<std::string, uint64_t>, std::string>;

// (phase, batch_id) -> digest, from digests.csv.
DigestRows digests(const fs::path& run) {
  const test::Csv csv = test::read_csv(run / "digests.csv");
  DigestRows rows;
  for (const auto& r : csv.rows) {
    rows[{r[csv.column("phase")], std::stoull(r[csv.column("batch_id")])}] =
        r[csv.column("digest")];
  }
  return rows;
}

// Pipeline-only runs of 60 steps of 2 samples (17 samples: 9 batches an epoch), no warm-up, so
// step i of a phase consumes batch i.
const std::string kBase =
    " --set loader.batch_size=2 --set loader.num_workers=2 --set phases.warmup_steps=0"
    " --set phases.warmup_s=0 --set phases.steps=60 --set metrics.interval_ms=50";
// With a 20 ms sleep step: compute and end_to_end phases of 1.2 s each.
const std::string kWithStep = kBase + " --set step.kind=sleep --set step.ms=20";

class ResumeCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::TempDir>();
    const auto gen = test::run_mmprof("gen --out " + test::shell_quote(dir_->path() / "ds") +
                                      " --images 16 --videos 1 --video-max-s 1 "
                                      "--video-max-height 240 --layout files --seed 9");
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }
  static void TearDownTestSuite() { dir_.reset(); }

  static fs::path out(const std::string& name) { return dir_->path() / name; }
  static std::string data() { return " --data " + test::shell_quote(dir_->path() / "ds/files"); }

  static test::CommandResult baseline(const std::string& args, const fs::path& run) {
    return test::run_mmprof("baseline" + args + " --out " + test::shell_quote(run));
  }

  // Starts a run in the background, sends SIGINT once steps.csv has `rows` rows of `phase`
  // (at most 60 s later) and returns its exit code.
  static int interrupted(const std::string& env, const std::string& args, const fs::path& run,
                         const std::string& phase, int rows) {
    const std::string steps = test::shell_quote(run / "steps.csv");
    const std::string script =
        env + " " + test::shell_quote(test::mmprof_bin()) + " baseline" + args + " --out " +
        test::shell_quote(run) + " </dev/null >" + test::shell_quote(run.string() + ".log") +
        " 2>&1 & p=$!; i=0; until [ \"$(cat " + steps + " 2>/dev/null | grep -c '," + phase +
        ",')\" -ge " + std::to_string(rows) +
        " ]; do i=$((i+1)); [ $i -gt 1200 ] && break; sleep 0.05; done; kill -INT $p; wait $p";
    return test::run_command(script).exit_code;
  }

  // The command the interrupted run printed to continue it (its log's last line ends with it),
  // with mmprof's path for the word `mmprof`; "" when it printed none.
  static std::string printed_resume_command(const fs::path& run) {
    const auto bytes = test::read_bytes(run.string() + ".log");
    const std::string log(bytes.begin(), bytes.end());
    const std::string marker = "continue it with: mmprof ";
    const size_t at = log.rfind(marker);
    if (at == std::string::npos) return "";
    const size_t end = log.find('\n', at);
    return test::shell_quote(test::mmprof_bin()) + " " +
           log.substr(at + marker.size(), end - at - marker.size());
  }

  // Resumes `run` with the command it printed when it was interrupted, from another directory;
  // checks the pair of runs against `full` (uninterrupted): the interrupted run and its
  // continuation delivered, between them, exactly the batches of `full` (same ids, same
  // digests); the continuation started at the checkpoint.
  static json resume_and_compare(const fs::path& run, const fs::path& full,
                                 const std::string& phase) {
    const json checkpoint = read_json(run / "checkpoint.json");
    const uint64_t start = checkpoint["phases"][phase]["next_batch_id"].get<uint64_t>();
    const std::string command = printed_resume_command(run);
    EXPECT_NE(command.find(" baseline --resume " + fs::absolute(run).string()), std::string::npos)
        << "printed no resume command for " << run;
    const auto r = test::run_command("cd / && " + command + " </dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const fs::path resumed = run.string() + "-resumed";
    const json summary = read_json(resumed / "summary.json");
    EXPECT_EQ(summary["status"], "complete");
    EXPECT_EQ(read_json(run / "summary.json")["status"], "resumed");
    EXPECT_EQ(read_json(run / "checkpoint.json")["resumed_by"], fs::absolute(resumed).string());

    const DigestRows before = digests(run), after = digests(resumed), whole = digests(full);
    DigestRows both = before;
    for (const auto& [key, digest] : after) {
      EXPECT_EQ(key.first, phase) << "a finished phase was run again";
      EXPECT_GE(key.second, start) << "the resumed run went back before its checkpoint";
      EXPECT_TRUE(both.emplace(key, digest).second) << "batch " << key.second << " twice";
    }
    EXPECT_EQ(both, whole);
    EXPECT_FALSE(after.empty());

    const json& resume = summary["reliability"]["resume"];
    EXPECT_EQ(resume["from"], fs::absolute(run).string());
    EXPECT_EQ(resume["phase"], phase);
    EXPECT_EQ(resume["start_batch_id"], start);
    EXPECT_EQ(resume["start_epoch"], start / 9);
    // From the start of the resume (config, dataset, manifest, loader) to the first batch: more
    // than the loader's own start-up and first wait.
    EXPECT_GT(resume["time_to_first_batch_ms"].get<double>(),
              resume["loader_time_to_first_batch_ms"].get<double>());
    EXPECT_GT(resume["loader_time_to_first_batch_ms"].get<double>(), 0);
    return checkpoint;
  }

  static std::unique_ptr<test::TempDir> dir_;
};

std::unique_ptr<test::TempDir> ResumeCli::dir_;

TEST_F(ResumeCli, SigintInThePipelinePhaseThenResumeGivesTheUninterruptedBatches) {
  const fs::path full = out("pipeline-full");
  const auto ok = baseline(data() + kBase, full);
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  // The sample batch 3 holds (epoch 0, shuffled): a worker hangs there, so the run is stopped
  // with exactly batches 0-2 consumed.
  const test::Csv stages = test::read_csv(full / "stages.csv");
  const auto hold = std::find_if(stages.rows.begin(), stages.rows.end(), [&](const auto& row) {
    return row[stages.column("step")] == "3";
  });
  ASSERT_NE(hold, stages.rows.end());
  const fs::path run = out("pipeline-part");
  EXPECT_EQ(interrupted("MMPROF_TEST_HANG_AT=" + (*hold)[stages.column("key")], data() + kBase, run,
                        "pipeline", 3),
            130);
  EXPECT_EQ(read_json(run / "summary.json")["status"], "interrupted");
  const json checkpoint = resume_and_compare(run, full, "pipeline");
  EXPECT_EQ(checkpoint["phases"]["pipeline"]["next_batch_id"], 3);
  EXPECT_EQ(checkpoint["phases"]["pipeline"]["measured_steps"], 3);
  EXPECT_EQ(checkpoint["phases"]["pipeline"]["done"], false);
  // The continuation measured only the steps still missing.
  EXPECT_EQ(test::read_csv(out("pipeline-part-resumed") / "steps.csv").rows.size(), 57u);
  const auto again = test::run_mmprof("baseline --resume " + test::shell_quote(run));
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("resumed already"), std::string::npos) << again.output;
}

TEST_F(ResumeCli, SigintInTheEndToEndPhaseResumesThereWithoutRerunningThePipeline) {
  const fs::path full = out("e2e-full");
  const auto ok = baseline(data() + kWithStep, full);
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  const fs::path run = out("e2e-part");
  // Its steps take 100 ms (batches do not depend on step.ms): about 5 s left in the phase when
  // the 10th row is seen, room for the shell's poll and the SIGINT on a loaded machine.
  EXPECT_EQ(interrupted("", data() + kWithStep + " --set step.ms=100", run, "end_to_end", 10), 130);
  EXPECT_EQ(read_json(run / "summary.json")["status"], "interrupted");
  const json checkpoint = resume_and_compare(run, full, "end_to_end");
  EXPECT_EQ(checkpoint["phases"]["pipeline"]["done"], true);
  EXPECT_GE(checkpoint["phases"]["end_to_end"]["next_batch_id"].get<int>(), 10);
  EXPECT_LT(checkpoint["phases"]["end_to_end"]["next_batch_id"].get<int>(), 60);
}

TEST_F(ResumeCli, RefusesACompletedRunAndMissingOrCorruptFiles) {
  const fs::path done = out("refuse-complete");
  ASSERT_EQ(baseline(data() + kBase, done).exit_code, 0);
  const auto complete = test::run_mmprof("baseline --resume " + test::shell_quote(done));
  EXPECT_EQ(complete.exit_code, 2) << complete.output;
  EXPECT_NE(complete.output.find(done.string() + " completed"), std::string::npos)
      << complete.output;
  const auto with_set =
      test::run_mmprof("baseline --resume " + test::shell_quote(done) + " --set phases.steps=3");
  EXPECT_EQ(with_set.exit_code, 2) << with_set.output;
  EXPECT_NE(with_set.output.find("--set"), std::string::npos) << with_set.output;

  // A run killed before it wrote summary.json: manifest only, then damaged checkpoints.
  const fs::path killed = out("refuse-killed");
  fs::create_directories(killed);
  fs::copy_file(done / "manifest.json", killed / "manifest.json");
  const auto expect_refused = [&](const std::string& what) {
    const auto r = test::run_mmprof("baseline --resume " + test::shell_quote(killed));
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_NE(r.output.find((killed / "checkpoint.json").string() + " " + what), std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(killed.string() + "-resumed/summary.json"));
  };
  expect_refused("is missing");
  test::write_bytes(killed / "checkpoint.json", {'{', '"', 's'});
  expect_refused("is not valid JSON");
  const std::string wrong =
      R"({"schema_version": 1, "batches_per_epoch": 9, "phases": {"pipeline": {"next_batch_id":
      "x", "measured_steps": 0, "done": false}}})";
  test::write_bytes(killed / "checkpoint.json", {wrong.begin(), wrong.end()});
  expect_refused("is not a valid checkpoint");

  // Issue 34, item 9: a run its own process (or another resume) still writes holds its lock (the
  // flock of --out; util-linux flock(1) stands in for that process here): refused, exit 2, before
  // anything is read or written.
  const auto busy =
      test::run_command("flock " + test::shell_quote(killed) + " sh -c " +
                        test::shell_quote(test::shell_quote(test::mmprof_bin()) +
                                          " baseline --resume " + test::shell_quote(killed)) +
                        " </dev/null");
  EXPECT_EQ(busy.exit_code, 2) << busy.output;
  EXPECT_NE(busy.output.find("--resume " + killed.string() +
                             ": the run is still being written by another mmprof process"),
            std::string::npos)
      << busy.output;

  const auto not_a_run = test::run_mmprof("baseline --resume " + test::shell_quote(out("ds")));
  EXPECT_EQ(not_a_run.exit_code, 3) << not_a_run.output;
  EXPECT_NE(not_a_run.output.find((out("ds") / "manifest.json").string() + " is missing"),
            std::string::npos)
      << not_a_run.output;
}

// The epoch-boundary figures against the run's files (step i is batch i): boundaries where
// digests.csv's epoch changes, the stall the mean wait of those steps in steps.csv, the steady wait
// the median of the other steps with as many samples (the loader's first batch is start-up), the
// fill time at least the boundary steps' own stage times in stages.csv (collate adds to it).
// With non-persistent workers each boundary waits for a new pool to start.
TEST_F(ResumeCli, EpochBoundaryStallMatchesStepsCsvWithAndWithoutPersistentWorkers) {
  for (const bool persistent : {true, false}) {
    const fs::path run = out(persistent ? "stall-persistent" : "stall-fresh");
    const auto r = baseline(
        data() + kBase + " --set loader.persistent_workers=" + (persistent ? "true" : "false"),
        run);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json e = read_json(run / "summary.json")["epoch_boundary"];
    EXPECT_EQ(e["persistent_workers"], persistent);
    EXPECT_EQ(e["batches_per_epoch"], 9);
    std::map<uint64_t, int64_t> epoch;  // pipeline batch id -> epoch
    const test::Csv dig = test::read_csv(run / "digests.csv");
    for (const auto& row : dig.rows) {
      if (row[dig.column("phase")] == "pipeline")
        epoch[std::stoull(row[dig.column("batch_id")])] = std::stoll(row[dig.column("epoch")]);
    }
    const test::Csv steps = test::read_csv(run / "steps.csv");
    std::map<int, std::pair<int, double>> step;  // step -> (samples, wait_ms)
    for (const auto& row : steps.rows) {
      step[std::stoi(row[steps.column("step")])] = {std::stoi(row[steps.column("samples")]),
                                                    std::stod(row[steps.column("wait_ms")])};
    }
    ASSERT_EQ(step.size(), 60u);
    std::vector<int> boundaries;
    for (const auto& [i, sw] : step) {
      if (i > 0 && epoch.at(i) != epoch.at(i - 1)) boundaries.push_back(i);
    }
    ASSERT_EQ(boundaries, (std::vector<int>{9, 18, 27, 36, 45, 54}));
    const int size = step.at(boundaries[0]).first;  // 2: epochs end with a 1-sample batch
    double sum = 0;
    for (const int b : boundaries)
      sum += step.at(b).second;
    std::vector<double> like;
    for (const auto& [i, sw] : step) {
      if (i > 0 && sw.first == size &&
          std::find(boundaries.begin(), boundaries.end(), i) == boundaries.end())
        like.push_back(sw.second);
    }
    ASSERT_EQ(like.size(), 47u);  // 60 - step 0 (start-up) - 6 boundaries - 6 short batches
    std::sort(like.begin(), like.end());
    const json& p = e["pipeline"];
    EXPECT_EQ(p["boundaries"], boundaries.size());
    EXPECT_EQ(p["batch_size"], size);
    const double stall = sum / static_cast<double>(boundaries.size());
    EXPECT_NEAR(p["stall_ms"].get<double>(), stall, 1e-3);  // steps.csv: 4 decimals
    EXPECT_EQ(e["stall_ms"], p["stall_ms"]);
    EXPECT_NEAR(p["steady_wait_ms"].get<double>(), like[23], 1e-3);
    EXPECT_NEAR(p["excess_ms"].get<double>(),
                p["stall_ms"].get<double>() - p["steady_wait_ms"].get<double>(), 1e-9);
    const test::Csv stages = test::read_csv(run / "stages.csv");
    double stage_ms = 0;
    for (const auto& row : stages.rows) {
      const int s = std::stoi(row[stages.column("step")]);
      if (row[stages.column("phase")] != "pipeline" ||
          std::find(boundaries.begin(), boundaries.end(), s) == boundaries.end())
        continue;
      for (const char* c : {"read_ms", "decode_ms", "augment_ms"})
        stage_ms += std::stod(row[stages.column(c)]);
    }
    stage_ms /= static_cast<double>(boundaries.size());
    EXPECT_GE(p["fill_ms"].get<double>(), stage_ms - 1e-3);
    EXPECT_NEAR(p["unexplained_ms"].get<double>(),
                p["stall_ms"].get<double>() - p["fill_ms"].get<double>(), 1e-9);
    EXPECT_EQ(p["stall"], p["unexplained_ms"].get<double>() > p["threshold_ms"].get<double>());
    EXPECT_EQ(e["verdict"], p["verdict"]);
    if (!persistent) {
      // A fresh pool (fork, first batch from nothing) waits beyond the batch's own fill time.
      EXPECT_GT(p["unexplained_ms"].get<double>(), 0) << e.dump();
      EXPECT_GT(p["excess_ms"].get<double>(), 0) << e.dump();
    }
  }
}

}  // namespace
}  // namespace mmprof
