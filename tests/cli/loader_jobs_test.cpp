// The loaders users run, as real jobs under `mmprof baseline` (torch 2.x, the venv of
// install-deps --torch2, which also holds them): each job is written the way the loader's
// documentation shows (tests/external/jobs/) and times its own wait for every batch with
// perf_counter, the independent check of mmprof's figures.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmprof/run_dir.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class LoaderJobs : public ::testing::Test {
 protected:
  void SetUp() override {
    python_ = test::job_torch().python;
    if (python_.empty() || test::job_torch().label != "2")
      MMPROF_SKIP_WITHOUT("torch2",
                          "the loaders' jobs need the torch 2.x venv: "
                          "scripts/install-deps --torch2");
  }
  std::string job(const std::string& name) const {
    return test::shell_quote(test::source_dir() / "tests" / "external" / "jobs" / name);
  }
  std::string python_;
  test::TempDir dir_;
};

// WebDataset 1.0: 4 shards of 24 JPEGs (480x640), split by worker over 2 workers, batched in the
// dataset (8 a batch, 12 an epoch) and handed to wds.WebLoader, a pipeline around a DataLoader;
// a 2 ms step, so the job waits for data. Warm-up covers the 8 digested batches (the hook's
// digest is its own time inside the job's wait); the 4 measured steps are inside epoch 0, so no
// worker start is inside the job's own wait either.
TEST_F(LoaderJobs, WebDatasetsWaitWorkersAndConfigurationAreTheJobsOwn) {
  const fs::path shards = dir_.path() / "shards", run = dir_.path() / "run";
  const auto write = test::run_command(python_ + " " + job("webdataset_job.py") + " write " +
                                       test::shell_quote(shards) + " 4 24 2>&1");
  ASSERT_EQ(write.exit_code, 0) << write.output;
  const auto r = test::run_mmprof("baseline --warmup-steps 8 --steps 4 --json --out " +
                                  test::shell_quote(run) + " -- " + python_ + " " +
                                  job("webdataset_job.py") + " train " + test::shell_quote(shards) +
                                  " 4 " + test::shell_quote(dir_.path()) + " 2 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json s = json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(s["job"]["hook"]["status"], "ok");

  // The DataLoader inside WebLoader, as the job built it.
  const json& loaders = s["job"]["dataloader"]["loaders"];
  ASSERT_EQ(loaders.size(), 1u) << loaders.dump();
  const json& config = loaders[0]["config"];
  EXPECT_EQ(config["dataset"], "WebDataset");
  EXPECT_EQ(config["num_workers"], 2);
  EXPECT_TRUE(config["batch_size"].is_null());  // the dataset batches: DataLoader(batch_size=None)

  // Each step's wait lies inside the job's own (same clock: the hook's call-to-return is nested
  // in the job's perf_counter reads), and the two totals agree within 5 %.
  const RunDir run_dir = RunDir::open(run);
  const auto steps = run_dir.steps();
  const std::vector<double> own = test::read_numbers(dir_.path() / "job-waits.txt");
  ASSERT_EQ(steps.size(), 4u);
  ASSERT_GE(own.size(), 12u);
  double hook_total = 0, own_total = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    EXPECT_EQ(steps[k].samples, 8) << k;
    EXPECT_LE(steps[k].wait_ms, own[8 + k] + 1e-3) << k;
    hook_total += steps[k].wait_ms;
    own_total += own[8 + k];
  }
  EXPECT_NEAR(hook_total, own_total, 0.05 * own_total);

  // Every worker the hook named has its PSS (read as it was named, whatever the epoch's length).
  const json& workers = s["memory"]["workers"];
  ASSERT_GE(workers.size(), 2u) << workers.dump();
  for (const auto& w : workers)
    EXPECT_TRUE(w["pss_peak_mib"].is_number()) << w.dump();

  // The advice fits the loader: DataLoader arguments WebLoader passes on, never the batch size or
  // the shuffle of a dataset that batches and orders itself.
  const auto report = test::run_mmprof("report " + test::shell_quote(run) + " --out " +
                                       test::shell_quote(dir_.path() / "report"));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const json rep = test::read_json(dir_.path() / "report" / "report.json");
  for (const auto& c : rep["runs"][0]["recommended"]) {
    const std::string factor = c.value("factor", "");
    EXPECT_TRUE(factor != "loader.batch_size" && factor != "loader.shuffle") << c.dump();
    if (c["experiment"].is_string()) {
      EXPECT_NE(c["experiment"].get<std::string>().find("webdataset_job.py train"),
                std::string::npos);
    }
  }
}

}  // namespace
}  // namespace mmprof
