// report/loader_facts: the worker-balance fact (one wording for mmprof's loader and a user's
// DataLoader), the slowest sample class, and their cross-checks against stages.csv rows. The
// summary blocks come from the run layer's own writers, so the key contract is tested too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/job_facts.hpp"
#include "report/loader_facts.hpp"
#include "run/stage_breakdown.hpp"
#include "run/worker_loads.hpp"
#include "rundir/summary_parts.hpp"
#include "support/test_support.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

SampleInfo sample(uint32_t index, int worker, const std::string& format, int w, int h,
                  double decode_ms) {
  return test::sample_info({.index = index,
                            .worker = worker,
                            .format = format,
                            .width = w,
                            .height = h,
                            .read_ms = 0.5,
                            .decode_ms = decode_ms,
                            .augment_ms = 1.5,
                            .bytes = 1000 + index});
}

StageRow row_of(const SampleInfo& s) {
  StageRow r;
  r.key = "k" + std::to_string(s.index);
  r.worker = s.worker;
  r.read_ms = s.read_ms;
  r.decode_ms = s.decode_ms;
  r.augment_ms = s.augment_ms;
  r.bytes = s.bytes;
  r.phase = "pipeline";
  r.format = s.format;
  r.source_width_px = s.source_width;
  r.source_height_px = s.source_height;
  return r;
}

// Worker 0 takes the 8-sample batches, worker 1 the 4-sample ones; the batches of worker 0 hold
// one 12 MP WebP each. Summary blocks as the run layer writes them, and the matching CSV rows.
struct LoaderRun {
  json summary;
  std::vector<StageRow> stages;
};

LoaderRun loader_run() {
  StageBreakdown classes;
  WorkerLoads workers;
  LoaderRun run;
  uint32_t index = 0;
  for (int k = 0; k < 3; ++k) {
    for (const int worker : {0, 1}) {
      Batch b;
      b.worker = worker;
      b.collate_ms = 1;
      for (int i = 0; i < (worker == 0 ? 8 : 4); ++i) {
        const bool webp = worker == 0 && i == 0;
        b.samples.push_back(webp ? sample(index, worker, "webp", 4000, 3000, 90)
                                 : sample(index, worker, "jpeg", 640, 480, 9));
        ++index;
      }
      for (const SampleInfo& s : b.samples) {
        classes.add(s);
        run.stages.push_back(row_of(s));
      }
      workers.add_batch(b);
    }
  }
  BalanceContext context;
  context.batches_per_epoch = 2;
  context.slowest_class = classes.slowest_class();
  run.summary["stage_breakdown"] = rundir::to_json(*classes.figures("pipeline"));
  run.summary["workers_balance"] = rundir::to_json(*workers.figures(
      {true, 0, 600000000}, context, [](uint32_t i) { return "k" + std::to_string(i); }));
  return run;
}

const json* find_fact(const json& facts, const std::string& id) {
  for (const auto& f : facts)
    if (f["id"] == id) return &f;
  return nullptr;
}

TEST(ReportLoaderFacts, ImbalancedWorkersAndTheSlowestClassAreFacts) {
  const LoaderRun run = loader_run();
  json facts = json::array();
  add_loader_facts(test::typed(run.summary), facts);
  const json* imbalance = find_fact(facts, "workers.imbalance");
  ASSERT_NE(imbalance, nullptr) << facts.dump(2);
  const std::string text = (*imbalance)["text"];
  EXPECT_EQ(text.rfind("mmprof's loader workers are imbalanced (busy fractions differ by ", 0), 0u)
      << text;
  EXPECT_NE(text.find("): worker 0's batches hold 8.0 samples on average against 4.0 for the "
                      "others: batches go to the workers in turn (round robin)"),
            std::string::npos)
      << text;
  EXPECT_EQ((*imbalance)["metric"], "workers_balance.busy_spread_fraction");
  EXPECT_EQ((*imbalance)["value"], run.summary["workers_balance"]["busy_spread_fraction"]);

  const json* slowest = find_fact(facts, "stage.slowest_class");
  ASSERT_NE(slowest, nullptr);
  // 3 WebPs decode in 90 ms, the 33 JPEGs in 9 ms.
  EXPECT_EQ((*slowest)["text"],
            "webp images >8 MP decode slowest: 90.0 ms per sample over 3 samples, 10.0x the other "
            "samples' 9.0 ms");
  const json* share = find_fact(facts, "stage.decode_share");
  ASSERT_NE(share, nullptr);
  // JPEG: 33 x 9 = 297 ms of 567.
  EXPECT_EQ((*share)["text"],
            "jpeg images <=0.5 MP take the largest share of decode time: 52 % (297 ms over 33 "
            "samples)");
}

TEST(ReportLoaderFacts, EvenWorkersAreStatedAsBalanced) {
  json summary;
  summary["workers_balance"] = {
      {"imbalanced", false},
      {"busy_spread_fraction", 0.05},
      {"busy_spread_limit_fraction", 0.2},
      {"workers",
       {{{"worker", 0}, {"busy_fraction", 0.9}}, {{"worker", 1}, {"busy_fraction", 0.95}}}}};
  json facts = json::array();
  add_loader_facts(test::typed(summary), facts);
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0]["text"],
            "the 2 loader workers are evenly loaded: busy 0.90 to 0.95 of the window (spread "
            "0.05, limit 0.2)");
}

// A job's rank states its imbalance in the same words, from the same judgement.
TEST(ReportLoaderFacts, AJobRanksImbalanceUsesTheSameWording) {
  json summary;
  summary["source"] = "external";
  summary["job"]["ranks"] = {
      {{"rank", 0},
       {"pid", 42},
       {"workers",
        {{"imbalanced", true},
         {"busy_spread_fraction", 0.75},
         {"flags", {"busy fractions differ by 0.75 (> 0.2): worker 0 0.95, worker 1 0.20"}},
         {"likely_cause", "worker 0's batches hold 4.0 samples on average against 2.0"}}}}};
  json facts = json::array();
  add_job_facts(test::typed(summary), facts);
  const json* f = find_fact(facts, "workers.imbalance");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ((*f)["text"],
            "rank 0: DataLoader workers are imbalanced (busy fractions differ by 0.75 (> 0.2): "
            "worker 0 0.95, worker 1 0.20): worker 0's batches hold 4.0 samples on average "
            "against 2.0");
  EXPECT_EQ((*f)["metric"], "job.ranks.workers.busy_spread_fraction");
}

TEST(ReportLoaderFacts, CrossChecksRecomputeFormatsAndWorkersFromStagesCsv) {
  LoaderRun run = loader_run();
  std::vector<CsvCheck> checks =
      loader_cross_checks(test::typed(run.summary), run.stages, {}, "pipeline");
  // 2 formats x (samples, decode mean) + 2 workers x (samples, bytes, stage_ms).
  ASSERT_EQ(checks.size(), 10u);
  for (const CsvCheck& c : checks) {
    ASSERT_TRUE(c.summary && c.recomputed) << c.what;
    EXPECT_NEAR(*c.summary, *c.recomputed, 1e-9) << c.what;
  }
  EXPECT_EQ(checks[0].what, "stage_breakdown.by_format[webp].samples vs stages.csv");
  EXPECT_EQ(*checks[0].recomputed, 3);
  // A row missing from stages.csv shows as a disagreement.
  run.stages.erase(run.stages.begin());
  checks = loader_cross_checks(test::typed(run.summary), run.stages, {}, "pipeline");
  EXPECT_EQ(*checks[0].summary, 3);
  EXPECT_EQ(*checks[0].recomputed, 2);
}

}  // namespace
}  // namespace mmprof::report
