// The report's claims, held back (issue 32): one row per claim the report can make, each planted
// in a small scenario run through the whole path (gen, baseline / ab / ranks / a job, report),
// with the words report.md must say and those it must never say. A claim that comes back wrong
// (a cause on noise, advice that cannot work, a regime that was not measured) fails here even
// when the tests of its parts still pass. The timing-sensitive sides are planted far from their
// thresholds (a 1 ms step against tens of ms of decode, a 300 ms step against a few); the others
// rest on structure (a layout, an empty shard list, a stage.json's source).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Claim {
  const char* name;  // the test's suffix
  const char* what;  // the claim type it holds back
  // mmprof's arguments, run in turn; the datasets of kSources ({files}: 96 images of the
  // default mix, {shard}: one tar shard of 48, {straggle}: a shard of 64 big PNGs and one of 64
  // small JPEGs, so rank 1 is the straggler, {unequal}: a shard of 64 small JPEGs and one of 16),
  // {out} the run the report reads, {copy} and {copy2} staged copies, {python} Debian's python3,
  // {torch} the Python of the torch the job tests run on, {sleepy} and {crowded} the jobs of
  // kClaimJobs.
  std::vector<const char*> commands;
  int exit_code;                         // of the last command (a failed job: 1)
  std::vector<const char*> says, never;  // in report.md
};

// An ab that plants nothing: tiny outputs, one sample a batch (AbCliTest's).
#define MMPROF_CLAIMS_AB                                                                  \
  "ab --quiet --set image.size=16 --set loader.batch_size=1 --set phases.steps=20 --set " \
  "metrics.interval_ms=0 --rounds 6 --warmup-s 0.1 --out {out} "

const Claim kClaims[] = {
    {"InputBoundAndItsLimitingStage",
     "bottleneck and limiting stage",
     {"baseline --quiet --data {files} --set step.kind=sleep --set step.ms=1 --set "
      "loader.num_workers=1 --steps 12 "
      "--warmup-steps 4 --out {out}"},
     0,
     {": input-bound (", "Limit: stage decode"},
     {": compute-bound", "Limit: not established"}},
    {"ComputeBound",
     "bottleneck",
     {"baseline --quiet --data {files} --set step.kind=sleep --set step.ms=300 --set "
      "loader.num_workers=2 --steps 5 "
      "--warmup-steps 2 --out {out}"},
     0,
     {": compute-bound", "the step waited for data only"},
     {": input-bound ("}},
    {"PipelineOnlyNamesNoBottleneck",
     "bottleneck (none measured)",
     {"baseline --quiet --data {files} --set step.kind=none --steps 8 --warmup-steps 2 --out "
      "{out}"},
     0,
     {": pipeline-only", "only the pipeline's own rate is known"},
     {"-bound ("}},
    {"AJobThatMeasuredNoStepIsNotEstablished",
     "bottleneck and limit of a failed job",
     {"baseline --quiet --steps 4 --out {out} -- {python} -c 'import sys; sys.exit(3)'"},
     1,
     {"no step of the job was measured", "ended with exit code 3"},
     {"Limit: stage", "-bound ("}},
    {"AnIdleWorkerIsNamed",
     "worker balance",
     {"baseline --quiet --data {shard} --set data.layout=tar_stream --set loader.num_workers=2 "
      "--set step.kind=sleep --set step.ms=5 --steps 6 --warmup-steps 2 --out {out}"},
     0,
     {"worker 1 delivered nothing in the window: idle"},
     {}},
    {"WorkersOfAPermutationAreNotIdle",
     "worker balance",
     {"baseline --quiet --data {files} --set loader.num_workers=2 --set step.kind=sleep --set "
      "step.ms=5 --steps 8 --warmup-steps 2 --out {out}"},
     0,
     {},
     {"delivered nothing in the window"}},
    {"AVideoFactorOnImagesIsNeverExercised",
     "placement effect",
     {MMPROF_CLAIMS_AB "--data {files} --set decode.gpu_backend=emulated "
                       "--factor video.decode_device=cpu,gpu"},
     0,
     {"was never exercised"},
     {"PSNR inf"}},
    {"ACacheTheWarmUpReadBackIsNotCalledCold",
     "cache regime",
     {MMPROF_CLAIMS_AB "--data {files} --cache cold --factor loader.prefetch_factor=2,3"},
     0,
     {"those trials measured a warm cache"},
     {"cold: every trial's measured window began"}},
    {"StagingIsCostedOverEverySession",
     "staging break-even",
     {"stage --quiet {files} {copy}", "stage --quiet {files} {copy}",
      MMPROF_CLAIMS_AB "--factor data.path={files},{copy}"},
     0,
     {"pays off after epochs"},
     {"not complete", "was there before", "not of the base arm"}},
    {"StagingOfAnotherSourceIsNotCosted",
     "staging break-even",
     {"stage --quiet {files} {copy}", "stage --quiet {files} {copy2}",
      MMPROF_CLAIMS_AB "--factor data.path={copy},{copy2}"},
     0,
     {"/stage.json is a copy of ", "not of the base arm's data.path"},
     {}},
    {"AShardOfBigSamplesIsTheStragglerAndReshardingFixesIt",
     "straggler, layout advice and whose figures the run's are",
     {"baseline --quiet --nproc-per-node 2 --data {straggle} --set data.layout=tar_stream --set "
      "data.shuffle_buffer=8 --set loader.batch_size=4 --set loader.num_workers=1 --set "
      "image.size=64 --set step.kind=sleep --set step.ms=2 --set dist.sync=allreduce --steps 10 "
      "--warmup-steps 3 --out {out}"},
     0,
     {"Rank 1 is the straggler", "its data pipeline is the straggler", "--by-size",
      "every rank takes 16 steps per epoch", "The slowest rank's run is analysed below as Run ",
      "/rank-1: input-bound"},
     {"No straggler established", "unequal steps per epoch", "/rank-0"}},
    {"RanksOfOnePermutationGetNoReshardAdvice",
     "layout advice and a straggler on noise",
     {"baseline --quiet --nproc-per-node 2 --data {files} --set loader.batch_size=4 --set "
      "loader.num_workers=1 --set image.size=64 --set step.kind=sleep --set step.ms=2 --set "
      "dist.sync=allreduce --steps 10 --warmup-steps 3 --out {out}"},
     0,
     {},
     {"--by-size", "mmprof shard ", "its data pipeline is the straggler"}},
    {"UnequalEpochsAcrossRanksAreNamed",
     "ranks' samples per epoch",
     {"baseline --quiet --nproc-per-node 2 --data {unequal} --set data.layout=tar_stream --set "
      "loader.batch_size=4 --set loader.num_workers=1 --set image.size=64 --set step.kind=sleep "
      "--set step.ms=2 --set dist.sync=allreduce --steps 10 --warmup-steps 3 --out {out}"},
     0,
     {"the ranks take unequal steps per epoch"},
     {"every rank takes"}},
    // A PyTorch job with no worker: the DataLoader refuses prefetch_factor and persistent_workers
    // then, so neither is advised (the advice's precondition read from the job's own loader).
    {"NoWorkerGetsNoAdviceTheDataLoaderRefuses",
     "hypotheses (preconditions)",
     {"baseline --quiet --warmup-steps 2 --steps 8 --out {out} -- {torch} {sleepy} 5 0"},
     0,
     {": input-bound ("},
     {"--factor loader.prefetch_factor", "--factor loader.persistent_workers"}},
    // Issue 32 case 14: 10 steps of a 16-batch epoch cross no epoch boundary, so persistent
    // workers (which act there) are not advised: the trials could not show their effect.
    {"AChangeAtTheEpochBoundaryIsNotAdvisedWithinAnEpoch",
     "hypotheses (what a trial can exercise)",
     {"baseline --quiet --warmup-steps 2 --steps 8 --out {out} -- {torch} {sleepy} 5 1"},
     0,
     {"no epoch boundary in the measured steps"},
     {"--factor loader.persistent_workers"}},
    // Issue 32 case 8: the main process loads (no worker) on a CPU it shares with a busy process
    // of the job's: it waits for the CPU about half the time, and the run is called CPU-contended
    // for it (before, only workers were checked).
    {"AMainProcessThatWaitsForACpuIsContention",
     "CPU contention",
     {"baseline --quiet --warmup-steps 2 --steps 8 --out {out} -- {torch} {crowded}"},
     0,
     {"CPU-contended: the main process waited for a CPU"},
     {}},
};

// The PyTorch jobs of the rows: {sleepy} `ITEM_MS WORKERS`, 64 items of 4 a batch, each item a
// sleep (a read that waits), a 2 ms step; {crowded}, the same with no worker and each item 2 ms
// of CPU, on one CPU it shares with a busy process it forks.
constexpr const char* kSleepyJob = R"PY(
import sys, time, torch
from torch.utils.data import DataLoader, Dataset
item_ms, workers = float(sys.argv[1]), int(sys.argv[2])
class Sleepy(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        time.sleep(item_ms / 1000)
        return torch.zeros(3, 8, 8)
for epoch in range(1000):
    for batch in DataLoader(Sleepy(), batch_size=4, num_workers=workers):
        time.sleep(0.002)
)PY";
constexpr const char* kCrowdedJob = R"PY(
import os, time, torch
from torch.utils.data import DataLoader, Dataset
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
if os.fork() == 0:
    while True:
        pass
class Busy(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        t = time.process_time()
        while time.process_time() - t < 0.002:
            pass
        return torch.zeros(3, 8, 8)
for epoch in range(1000):
    for batch in DataLoader(Busy(), batch_size=4, num_workers=0):
        time.sleep(0.002)
)PY";
const std::pair<const char*, const char*> kClaimJobs[] = {{"{sleepy}", kSleepyJob},
                                                          {"{crowded}", kCrowdedJob}};
#undef MMPROF_CLAIMS_AB

void PrintTo(const Claim& c, std::ostream* os) {
  *os << c.name;
}

// The datasets a placeholder names, each generated when a row first needs it (ctest runs every
// row in a process of its own): gen's arguments, or the tar shards of other datasets, in order.
struct Source {
  const char* placeholder;
  const char* gen;                     // gen's arguments, or null
  std::vector<const char*> shards_of;  // the gen'd datasets whose first shard it holds
  const char* path;                    // the folder the run reads, under the dataset's own
};

const Source kSources[] = {
    {"{files}", "--images 96 --seed 9", {}, "files"},
    {"{shard}", "--images 48 --layout tar --seed 3", {}, "shards"},
    {"{jpegs}", "--images 64 --png-fraction 0 --image-size 320x240 --layout tar --seed 5", {}, ""},
    {"{pngs}",
     "--images 64 --png-fraction 1 --image-size 1280x720 --layout tar --shard-mb 256 --seed 6",
     {},
     ""},
    {"{few}", "--images 16 --png-fraction 0 --image-size 320x240 --layout tar --seed 7", {}, ""},
    {"{straggle}", nullptr, {"{pngs}", "{jpegs}"}, ""},
    {"{unequal}", nullptr, {"{jpegs}", "{few}"}, ""},
};

class Claims : public ::testing::TestWithParam<Claim> {
 protected:
  static void SetUpTestSuite() { dir_ = std::make_unique<test::TempDir>(); }
  static void TearDownTestSuite() { dir_.reset(); }

  // The folder of `source` (made now if it is not there yet).
  static fs::path dataset(const Source& source) {
    const std::string name = source.placeholder;
    const fs::path at = dir_->path() / "data" / name.substr(1, name.size() - 2);  // no braces
    if (!fs::exists(at)) {
      if (source.gen != nullptr) {
        const auto r =
            test::run_mmprof("gen --quiet --threads 2 --videos 0 " + std::string(source.gen) +
                             " --out " + test::shell_quote(at));
        EXPECT_EQ(r.exit_code, 0) << r.output;
      } else {
        fs::create_directories(at);
        int n = 0;
        for (const char* of : source.shards_of) {
          const Source& s = source_named(of);
          fs::copy_file(dataset(s) / "shards" / "shard-000000.tar",
                        at / fmt::format("shard-{:06d}.tar", n++));
        }
      }
    }
    return at / source.path;
  }
  static const Source& source_named(const std::string& name) {
    for (const Source& s : kSources)
      if (name == s.placeholder) return s;
    throw std::logic_error("no source " + name);
  }

  std::string expand(const std::string& command) const {
    const fs::path here = dir_->path() / GetParam().name;
    std::string c = command;
    for (const Source& s : kSources) {
      if (c.find(s.placeholder) != std::string::npos)
        c = test::replaced(c, s.placeholder, test::shell_quote(dataset(s)));
    }
    for (const auto& [key, path] : {std::pair{"{out}", here / "run"},
                                    {"{copy}", here / "copy"},
                                    {"{copy2}", here / "copy2"}}) {
      c = test::replaced(c, key, test::shell_quote(path));
    }
    for (const auto& [placeholder, source] : kClaimJobs) {
      if (c.find(placeholder) == std::string::npos) continue;
      const std::string name = placeholder;
      const fs::path job = dir_->path() / (name.substr(1, name.size() - 2) + ".py");
      if (!fs::exists(job)) std::ofstream(job) << source;
      c = test::replaced(c, placeholder, test::shell_quote(job));
    }
    c = test::replaced(c, "{torch}", test::job_torch().python);
    return test::replaced(c, "{python}", "/usr/bin/python3");
  }

  static std::unique_ptr<test::TempDir> dir_;
};

std::unique_ptr<test::TempDir> Claims::dir_;

TEST_P(Claims, TheReportSaysWhatTheScenarioSupportsAndNothingElse) {
  const Claim& c = GetParam();
  SCOPED_TRACE(c.what);
  if (test::job_torch().python.empty() &&
      std::any_of(c.commands.begin(), c.commands.end(), [](const char* cmd) {
        return std::string(cmd).find("{torch}") != std::string::npos;
      }))
    MMPROF_SKIP_WITHOUT(test::job_torch().capability, test::job_torch().why);
  const fs::path here = dir_->path() / c.name;
  fs::create_directories(here);
  for (size_t i = 0; i < c.commands.size(); ++i) {
    const auto r = test::run_mmprof(expand(c.commands[i]));
    ASSERT_EQ(r.exit_code, i + 1 == c.commands.size() ? c.exit_code : 0)
        << expand(c.commands[i]) << "\n"
        << r.output;
  }
  const auto r = test::run_mmprof("report --quiet " + test::shell_quote(here / "run") + " --out " +
                                  test::shell_quote(here / "report"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string md = test::read_text(here / "report" / "report.md");
  for (const char* words : c.says)
    EXPECT_NE(md.find(words), std::string::npos) << "report.md does not say: " << words << "\n"
                                                 << md;
  for (const char* words : c.never)
    EXPECT_EQ(md.find(words), std::string::npos) << "report.md says: " << words << "\n" << md;
}

INSTANTIATE_TEST_SUITE_P(Planted, Claims, ::testing::ValuesIn(kClaims),
                         [](const ::testing::TestParamInfo<Claim>& i) {
                           return std::string(i.param.name);
                         });

}  // namespace
}  // namespace mmprof
