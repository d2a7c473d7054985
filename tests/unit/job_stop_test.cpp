// The stop of a user's job under fake time (external/job_stop.hpp): the hook's own stop, the
// --duration stop file, Ctrl-C, and the grace periods before SIGINT and SIGKILL.
#include "external/job_stop.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace mmprof::external {
namespace {

constexpr int64_t kS = 1'000'000'000;

// A hook that has written records, with measured batches since `since_s`.
StopInputs measuring(int64_t since_s) {
  StopInputs in;
  in.hook_heard = true;
  in.measured_since_ns = since_s * kS;
  return in;
}

bool nothing(const StopActions& a) {
  return !a.write_stop_file && !a.signal_group && !a.kill;
}

TEST(JobStop, ADurationStopAsksTheHookThenSignalsAfterTheGraceThenKills) {
  JobStop stop(10, 5.0, 0);
  StopInputs in = measuring(2);
  EXPECT_TRUE(nothing(stop.poll(6 * kS, in)));  // 4 s measured of 5
  EXPECT_EQ(stop.reason(), StopReason::none);
  const StopActions first = stop.poll(7 * kS, in);
  EXPECT_TRUE(first.write_stop_file);
  EXPECT_FALSE(first.signal_group);  // the hook hears the file: no signal yet
  EXPECT_EQ(stop.reason(), StopReason::duration);
  EXPECT_TRUE(nothing(stop.poll(16 * kS, in)));  // within the grace period
  const StopActions second = stop.poll(17 * kS, in);
  EXPECT_TRUE(second.signal_group);
  EXPECT_FALSE(second.kill);
  EXPECT_FALSE(second.write_stop_file);  // asked once
  EXPECT_TRUE(nothing(stop.poll(26 * kS, in)));
  EXPECT_FALSE(stop.forced());
  const StopActions third = stop.poll(27 * kS, in);
  EXPECT_TRUE(third.kill);
  EXPECT_TRUE(stop.forced());
  EXPECT_TRUE(stop.poll(28 * kS, in).kill);  // whatever is left, at every poll
  EXPECT_EQ(stop.reason(), StopReason::duration);
}

TEST(JobStop, DurationCountsMeasuredTimeNotTheWarmUp) {
  JobStop stop(10, 5.0, 0);
  StopInputs warming;
  warming.hook_heard = true;  // records, but no measured batch yet
  EXPECT_TRUE(nothing(stop.poll(60 * kS, warming)));
  EXPECT_TRUE(nothing(stop.poll(64 * kS, measuring(60))));
  EXPECT_TRUE(stop.poll(65 * kS, measuring(60)).write_stop_file);
}

TEST(JobStop, ASilentHookStopsByDurationFromTheLaunchWithASignal) {
  JobStop stop(10, 5.0, 1 * kS);
  const StopInputs silent;  // no record at all: no torch in the job, or no hook
  EXPECT_TRUE(nothing(stop.poll(30 * kS, silent)));  // under 30 s of silence: it may be starting
  const StopActions a = stop.poll(31 * kS + 1, silent);
  EXPECT_TRUE(a.write_stop_file);
  EXPECT_TRUE(a.signal_group);  // nothing would hear the file
  EXPECT_TRUE(nothing(stop.poll(40 * kS, silent)));
  EXPECT_TRUE(stop.poll(42 * kS, silent).kill);  // signalled already: the grace ends in SIGKILL
}

TEST(JobStop, CtrlCSignalsAtOnceEvenDuringAnotherStop) {
  JobStop stop(10, 5.0, 0);
  StopInputs in = measuring(0);
  EXPECT_TRUE(stop.poll(5 * kS, in).write_stop_file);
  in.interrupted = true;
  const StopActions a = stop.poll(6 * kS, in);
  EXPECT_TRUE(a.signal_group);
  EXPECT_EQ(stop.reason(), StopReason::interrupt);
  EXPECT_TRUE(nothing(stop.poll(7 * kS, in)));  // one SIGINT, not one a poll
  EXPECT_TRUE(stop.poll(16 * kS, in).kill);     // the grace counts from the SIGINT
  EXPECT_STREQ(stop_name(stop.reason()), "interrupt");
}

TEST(JobStop, TheHooksOwnStopNeedsNoActionUntilTheGraceIsOver) {
  JobStop stop(2, std::nullopt, 0);
  StopInputs in = measuring(0);
  in.hook_stopped = true;
  EXPECT_TRUE(nothing(stop.poll(1 * kS, in)));
  EXPECT_EQ(stop.reason(), StopReason::hook_steps);
  EXPECT_TRUE(nothing(stop.poll(2 * kS, in)));
  EXPECT_TRUE(stop.poll(3 * kS, in).signal_group);  // a job that ignores the hook's stop
  EXPECT_TRUE(stop.poll(5 * kS, in).kill);
  EXPECT_STREQ(stop_name(stop.reason()), "steps");
}

TEST(JobStop, AStopRecordReadAfterTheExitStillSaysMmprofEndedIt) {
  JobStop stop(10, std::nullopt, 0);
  StopInputs in = measuring(0);
  EXPECT_TRUE(nothing(stop.poll(1 * kS, in)));
  in.hook_stopped = true;
  stop.job_exited(in);
  EXPECT_EQ(stop.reason(), StopReason::hook_steps);
  EXPECT_FALSE(stop.forced());
}

TEST(JobStop, WithoutDurationOrStopTheJobRunsOnUntouched) {
  JobStop stop(10, std::nullopt, 0);
  for (int64_t t = 0; t < 3600; t += 60)
    EXPECT_TRUE(nothing(stop.poll(t * kS, measuring(0))));
  stop.job_exited(measuring(0));
  EXPECT_STREQ(stop_name(stop.reason()), "none");
}

}  // namespace
}  // namespace mmprof::external
