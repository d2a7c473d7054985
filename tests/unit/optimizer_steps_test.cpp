// Gradient accumulation from the hook's optimizer steps against one rank's measured batches.
#include "external/optimizer_steps.hpp"

#include <gtest/gtest.h>

#include <string>

namespace mmprof::external {
namespace {

constexpr int kPid = 10;
constexpr int64_t kMs = 1'000'000;

// `batches` measured steps of 10 ms each, from t = 100 ms; the process watches its optimizers.
struct Fixture {
  HookRecords records;
  RankTimeline rank;

  explicit Fixture(int batches, bool available = true) {
    rank.pid = kPid;
    for (int i = 0; i < batches; ++i) {
      StepRow s;
      s.step = i;
      s.t_start_ns = (100 + 10 * i) * kMs;
      s.step_ms = 10;
      rank.steps.push_back(s);
    }
    OptimWatchRecord w;
    w.pid = kPid;
    w.available = available;
    w.why = available ? "" : "no register_optimizer_step_post_hook in this torch";
    records.optim_watches.push_back(w);
  }
  // An optimizer step `ms` into measured batch `batch` (a batch index past the end: after it).
  void step(int batch, int opt = 0, int pid = kPid, int64_t ms = 8) {
    OptimStepRecord o;
    o.pid = pid;
    o.opt = opt;
    o.ns = (100 + 10 * batch + ms) * kMs;
    records.optim_steps.push_back(o);
  }
  std::string source() const { return gradient_accumulation(records, rank)["source"]; }
};

TEST(GradientAccumulation, OneOptimizerStepEveryKBatchesIsK) {
  Fixture f(12);
  for (const int b : {1, 5, 9})  // every 4 batches, from the window's second
    f.step(b);
  f.step(-3);              // before the window: not counted
  f.step(12);              // after it
  f.step(5, 0, kPid + 1);  // another process's
  const auto a = gradient_accumulation(f.records, f.rank);
  EXPECT_EQ(a["accum_steps"], 4);
  EXPECT_EQ(a["optimizer_steps"], 3);
  EXPECT_EQ(a["optimizers"], 1);
  EXPECT_EQ(a["measured_batches"], 12);
  EXPECT_EQ(a["source"],
            "torch.optim's step hook: optimizer 0 stepped 3 times in the 12 measured batches, "
            "every 4 batches");
}

TEST(GradientAccumulation, EveryBatchIsOneAndAnEpochsShortTailIsTheMedian) {
  Fixture f(6);
  for (int b = 0; b < 6; ++b)
    f.step(b);
  EXPECT_EQ(gradient_accumulation(f.records, f.rank)["accum_steps"], 1);

  Fixture g(9);  // every 3, and once after 1 (an epoch's last batch steps too)
  for (const int b : {0, 3, 4, 7})
    g.step(b);
  EXPECT_EQ(gradient_accumulation(g.records, g.rank)["accum_steps"], 3);
  EXPECT_NE(g.source().find("the median; from 1 to 3 between steps"), std::string::npos);
}

TEST(GradientAccumulation, TwoOptimizersEveryBatchFollowTheMostStepped) {
  Fixture f(4);  // a GAN: both step each batch, the second also once more
  for (int b = 0; b < 4; ++b) {
    f.step(b, 0, kPid, 3);
    f.step(b, 1, kPid, 6);
  }
  const auto a = gradient_accumulation(f.records, f.rank);
  EXPECT_EQ(a["accum_steps"], 1);
  EXPECT_EQ(a["optimizers"], 2);
  EXPECT_EQ(a["optimizer_steps"], 8);
}

TEST(GradientAccumulation, NotDetectableSaysWhy) {
  Fixture none(8);
  EXPECT_TRUE(gradient_accumulation(none.records, none.rank)["accum_steps"].is_null());
  EXPECT_EQ(none.source(),
            "not detectable: no torch.optim optimizer stepped in the 8 measured batches (the job "
            "has none there, or steps its own way)");

  Fixture once(8);
  once.step(2);
  EXPECT_TRUE(gradient_accumulation(once.records, once.rank)["accum_steps"].is_null());
  EXPECT_NE(once.source().find("stepped in 1 of the 8 measured batches"), std::string::npos);

  Fixture old(8, false);
  old.step(2);
  old.step(4);
  EXPECT_EQ(old.source(), "not detectable: no register_optimizer_step_post_hook in this torch");

  Fixture unwatched(8);
  unwatched.records.optim_watches.clear();
  EXPECT_EQ(unwatched.source(),
            "not detectable: the hook recorded no optimizer steps for this process");
}

}  // namespace
}  // namespace mmprof::external
