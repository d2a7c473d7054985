// CUPTI time -> CLOCK_MONOTONIC: the calibrated offset from (monotonic, CUPTI, monotonic) brackets.
#include <gtest/gtest.h>

#include <stdexcept>

#include "gpu/cupti_activity.hpp"

namespace mmprof::gpu {
namespace {

TEST(CuptiClockTest, OffsetComesFromTheTightestBracket) {
  // CUPTI (CLOCK_REALTIME-like) = monotonic + 1e18 - 50; the tight bracket [1000, 1010] read
  // CUPTI at monotonic 1005.
  const std::vector<ClockSample> samples{
      {0, 1'000'000'000'000'000'900ull, 2000},  // wide: midpoint 1000 would be off by 100
      {1000, 1'000'000'000'000'000'955ull, 1010},
      {3000, 1'000'000'000'000'002'970ull, 3040},
  };
  const ClockConversion c = calibrate_offset(samples);
  EXPECT_EQ(c.method, "calibrated_offset");
  EXPECT_EQ(c.offset_ns, 1005 - 1'000'000'000'000'000'955ll);
  EXPECT_EQ(c.uncertainty_ns, 5);
  EXPECT_EQ(c.to_monotonic(1'000'000'000'000'000'955ull), 1005);
  EXPECT_EQ(c.to_monotonic(1'000'000'000'000'100'955ull), 101'005);
}

TEST(CuptiClockTest, InvalidBracketsAreSkippedAndNoneIsAnError) {
  const std::vector<ClockSample> bad{{10, 500, 5}, {10, 0, 20}};  // inverted; CUPTI returned 0
  EXPECT_THROW(calibrate_offset(bad), std::invalid_argument);
  EXPECT_THROW(calibrate_offset({}), std::invalid_argument);
  const ClockConversion c = calibrate_offset({{10, 500, 5}, {100, 1000, 120}});
  EXPECT_EQ(c.offset_ns, 110 - 1000);
}

TEST(CuptiClockTest, TimestampCallbackNeedsNoOffset) {
  const ClockConversion c{"timestamp_callback", 0, 0};
  EXPECT_EQ(c.to_monotonic(123'456'789), 123'456'789);
}

}  // namespace
}  // namespace mmprof::gpu
