// The progress of phases and trials on stderr (measure/progress): a log gets one plain line per
// finished phase or trial, a terminal one line redrawn in place, --quiet nothing; no rate before
// it means something, and the ETA is the remaining work at the pace so far.
#include "measure/progress.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mmprof {
namespace {

struct Recorder {
  int64_t now_ns = 0;
  std::vector<std::string> writes;

  ProgressLine line(ProgressStyle style) {
    return ProgressLine(
        style, [this] { return now_ns; }, [this](const std::string& s) { writes.push_back(s); });
  }
};

constexpr int64_t kS = 1'000'000'000;

TEST(ProgressLineTest, ALogGetsOneLinePerFinishedPhase) {
  Recorder r;
  ProgressLine p = r.line(ProgressStyle::lines);
  for (int i = 1; i <= 10; ++i) {
    r.now_ns = i * kS / 2;
    p.update("pipeline", i, 10, 64.0);
  }
  r.now_ns = 5 * kS;  // the end-to-end phase's measured steps start: its time counts from here
  p.update("end_to_end", 0, 2, 0.0);
  r.now_ns = 6 * kS;
  p.update("end_to_end", 1, 2, 30.0);
  r.now_ns = 8 * kS;
  p.update("end_to_end", 2, 2, 31.5);
  p.update("end_to_end", 3, 2, 31.0);  // a job's batches past its last step: no second line
  p.finish();
  // The pipeline counts from its first update (0.5 s): 4.5 s; end to end from its update with no
  // step done (5 s): 3 s.
  EXPECT_EQ(r.writes,
            (std::vector<std::string>{"mmprof: pipeline: 10 steps in 5 s, 64.0 samples/s\n",
                                      "mmprof: end_to_end: 2 steps in 3 s, 31.5 samples/s\n"}));
}

TEST(ProgressLineTest, TheFirstTickShowsNoRateAndNoEta) {
  Recorder r;
  ProgressLine p = r.line(ProgressStyle::live);
  r.now_ns = kS;
  p.update("pipeline", 0, 100, 0.0);
  r.now_ns = kS + 1'000'000;  // 1 ms later: a rate of 1 step per ms would be absurd
  p.update("pipeline", 1, 100, 32000.0);
  ASSERT_EQ(r.writes.size(), 1u);  // redrawn at most every 200 ms
  EXPECT_NE(r.writes[0].find("-- samples/s  ETA --"), std::string::npos) << r.writes[0];
  r.now_ns = 3 * kS;  // 2 s in, 20 of 100 steps: 8 s to go
  p.update("pipeline", 20, 100, 40.0);
  ASSERT_EQ(r.writes.size(), 2u);
  EXPECT_EQ(r.writes[1].rfind("\r\033[K  pipeline", 0), 0u) << r.writes[1];
  EXPECT_NE(r.writes[1].find("   20/100   steps"), std::string::npos) << r.writes[1];
  EXPECT_NE(r.writes[1].find("40.0 samples/s  ETA 8 s"), std::string::npos) << r.writes[1];
  p.finish();
  EXPECT_EQ(r.writes.back(), "\r\033[K");  // the terminal's line is cleared for the summary
}

TEST(ProgressLineTest, TrialsGetALineEachWithTheWholeExperimentsEta) {
  Recorder r;
  ProgressLine p = r.line(ProgressStyle::lines);
  r.now_ns = 90 * kS;  // 1 of 4 trials in 90 s: 270 s to go
  p.unit_done("trial", 1, 4, "round 1 of 2, arm base: 250.0");
  r.now_ns = 180 * kS;
  p.unit_done("trial", 2, 4, "round 1 of 2, arm w8: failed");
  EXPECT_EQ(r.writes, (std::vector<std::string>{
                          "mmprof: trial 1/4: round 1 of 2, arm base: 250.0; ETA 4 min 30 s\n",
                          "mmprof: trial 2/4: round 1 of 2, arm w8: failed; ETA 3 min 00 s\n"}));
}

TEST(ProgressLineTest, QuietWritesNothing) {
  Recorder r;
  ProgressLine p = r.line(ProgressStyle::none);
  p.update("pipeline", 1, 1, 10.0);
  p.unit_done("trial", 1, 1, "done");
  p.finish();
  EXPECT_TRUE(r.writes.empty());
}

TEST(ProgressLineTest, DurationsReadAsAPersonWouldSayThem) {
  EXPECT_EQ(human_duration(0.4), "0 s");
  EXPECT_EQ(human_duration(59.4), "59 s");
  EXPECT_EQ(human_duration(200), "3 min 20 s");
  EXPECT_EQ(human_duration(3900), "1 h 05 min");
}

}  // namespace
}  // namespace mmprof
