// The loaders users run, as real jobs under `mmprof baseline` (torch 2.x, the venv of
// install-deps --torch2, which also holds them): each job is written the way the loader's
// documentation shows (tests/external/jobs/) and times its own wait for every batch with
// perf_counter, the independent check of mmprof's figures. One table, one row a loader.
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

struct LoaderJob {
  const char* name;           // the test's suffix
  const char* script;         // in tests/external/jobs
  const char* write;          // its write arguments after DIR
  const char* train;          // its train arguments: {dir} the data, {out} where job-waits.txt goes
  const char* dataset;        // the dataset class the hook must record
  const char* library;        // config.library.name
  const char* library_class;  // the library's class the dataset is
  bool dataset_batches;       // DataLoader(batch_size=None): the dataset batches
  const char* layout;         // the manifest's data.layout read from the library's index, or ""
  const char* shard_suffix;   // the shard files' suffix, to check total_bytes against
};

// 96 JPEGs (480x640) a dataset, 8 a batch over 2 workers: 12 batches an epoch, and a 2 ms step,
// so the job waits for data. Warm-up covers the 8 digested batches (the hook's digest is its
// own time inside the job's wait); the 4 measured steps are inside epoch 0, so no worker start
// is inside the job's own wait either.
const LoaderJob kJobs[] = {
    // WebDataset 1.0: 4 tar shards of 24, split by worker, batched in the dataset, wds.WebLoader.
    {"WebDataset", "webdataset_job.py", "4 24", "{dir} 4 {out} 2 2", "WebDataset", "webdataset",
     "WebDataset", true, "", ""},
    // MosaicML Streaming: MDSWriter's 1 MB shards (3 samples each), a StreamingDataset subclass.
    {"MosaicStreaming", "streaming_job.py", "96", "{dir} {out} 2 2", "Images", "mosaicml-streaming",
     "StreamingDataset", false, "mds", ".mds"},
    // LitData: optimize()'s 1 MB chunks, a StreamingDataset subclass, StreamingDataLoader.
    {"LitData", "litdata_job.py", "96", "{dir} {out} 2 2", "Images", "litdata", "StreamingDataset",
     false, "litdata", ".bin"},
};

// The test's name in ctest's list (gtest prints a parameter's bytes otherwise).
void PrintTo(const LoaderJob& job, std::ostream* os) {
  *os << job.name;
}

std::string replaced(std::string text, const std::string& what, const std::string& with) {
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at))
    text.replace(at, what.size(), with);
  return text;
}

class LoaderJobs : public ::testing::TestWithParam<LoaderJob> {
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

TEST_P(LoaderJobs, WaitWorkersConfigurationAndDataAreTheJobsOwn) {
  const LoaderJob& p = GetParam();
  const fs::path data = dir_.path() / "data", run = dir_.path() / "run";
  const auto write = test::run_command(python_ + " " + job(p.script) + " write " +
                                       test::shell_quote(data) + " " + p.write + " 2>&1");
  ASSERT_EQ(write.exit_code, 0) << write.output;
  const std::string train = replaced(replaced(p.train, "{dir}", test::shell_quote(data)), "{out}",
                                     test::shell_quote(dir_.path()));
  const auto r =
      test::run_mmprof("baseline --warmup-steps 8 --steps 4 --out " + test::shell_quote(run) +
                       " -- " + python_ + " " + job(p.script) + " train " + train);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json s = test::read_json(run / "summary.json");
  EXPECT_EQ(s["job"]["hook"]["status"], "ok");

  // The DataLoader (inside WebLoader, StreamingDataLoader) as the job built it, and the library's
  // own settings read from its dataset.
  const json& loaders = s["job"]["dataloader"]["loaders"];
  ASSERT_EQ(loaders.size(), 1u) << loaders.dump();
  const json& config = loaders[0]["config"];
  EXPECT_EQ(config["dataset"], p.dataset);
  EXPECT_EQ(config["num_workers"], 2);
  if (p.dataset_batches) {
    EXPECT_TRUE(config["batch_size"].is_null());  // DataLoader(batch_size=None)
  } else {
    EXPECT_EQ(config["batch_size"], 8);
  }
  const json& library = config["library"];
  ASSERT_TRUE(library.is_object()) << config.dump();
  EXPECT_EQ(library["name"], p.library);
  EXPECT_TRUE(library["version"].is_string()) << library.dump();
  EXPECT_EQ(library["class"], p.library_class);
  if (std::string(p.library) == "mosaicml-streaming") {
    EXPECT_EQ(library["settings"]["batch_size"], 8);  // the dataset's own, as the job set it
    EXPECT_EQ(library["settings"]["shuffle"], false);
  }

  // The manifest records the job's DataLoader under mmprof's keys, not the stand-in's defaults
  // (batch 32, persistent workers), and the dataset as its library's index says it, checked
  // against the shard files on disk.
  const RunDir run_dir = RunDir::open(run);
  const json& m = run_dir.manifest();
  EXPECT_EQ(m["config"]["loader"]["num_workers"], 2);
  EXPECT_EQ(m["config"]["loader"]["batch_size"], config["batch_size"]);
  EXPECT_EQ(m["config"]["loader"]["persistent_workers"], false);
  EXPECT_TRUE(m["config"]["loader"]["shuffle"].is_null());  // the dataset orders itself
  EXPECT_FALSE(m["config"].contains("image")) << m["config"].dump();
  // ... and the step's batch as the tensors the job received say it: 8 samples of 3x96x128 float.
  const json& spec = m["baseline_spec"];
  EXPECT_EQ(spec["per_device_batch"], 8) << spec.dump();
  EXPECT_EQ(spec["world_size"], 1);
  EXPECT_EQ(spec["global_batch"], 8);
  EXPECT_EQ(spec["sample_tensor"], json::parse(R"({"dtype": "float32", "shape": [3, 96, 128]})"))
      << spec.dump();
  EXPECT_EQ(spec["batch_tensors"][0], json::parse(R"(["float32", [8, 3, 96, 128]])"));
  if (*p.layout) {
    const json& d = m["data"];
    EXPECT_EQ(d["layout"], p.layout) << d.dump();
    EXPECT_EQ(d["samples"], 96) << d.dump();
    int64_t files = 0, bytes = 0;
    for (const auto& e : fs::directory_iterator(data)) {
      if (e.path().extension() == p.shard_suffix) {
        ++files;
        bytes += static_cast<int64_t>(e.file_size());
      }
    }
    EXPECT_GE(files, 8);
    EXPECT_EQ(d["shards"], files) << d.dump();
    EXPECT_EQ(d["total_bytes"], bytes) << d.dump();
  } else {
    EXPECT_FALSE(m.contains("data"));
  }

  // Each step's wait lies inside the job's own (same clock: the hook's call-to-return is nested
  // in the job's perf_counter reads), and the two totals agree within 5 %.
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

  // The terminal names the loader and its library.
  EXPECT_NE(r.output.find(std::string("over ") + p.dataset + ", a " + p.library + " " +
                          library["version"].get<std::string>() + " " + p.library_class),
            std::string::npos)
      << r.output;

  // The advice fits the loader: DataLoader arguments the job's loader passes on, never the batch
  // size or the shuffle of a dataset that batches, partitions and orders itself.
  const auto report = test::run_mmprof("report " + test::shell_quote(run) + " --out " +
                                       test::shell_quote(dir_.path() / "report"));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const json rep = test::read_json(dir_.path() / "report" / "report.json");
  for (const auto& c : rep["runs"][0]["recommended"]) {
    const std::string factor = c.value("factor", "");
    EXPECT_TRUE(factor != "loader.batch_size" && factor != "loader.shuffle") << c.dump();
    if (c["experiment"].is_string()) {
      EXPECT_NE(c["experiment"].get<std::string>().find(std::string(p.script) + " train"),
                std::string::npos);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Loaders, LoaderJobs, ::testing::ValuesIn(kJobs),
                         [](const ::testing::TestParamInfo<LoaderJob>& i) {
                           return std::string(i.param.name);
                         });

}  // namespace
}  // namespace mmprof
