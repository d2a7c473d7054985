#pragma once
// The what-if bridge: `mmprof baseline --like RUN` configures mmprof's own loader to mimic a
// user's job measured in RUN, so the stand-in's what-if numbers can be compared with the job's
// own (mmprof report shows the two side by side). From the job's followed DataLoader: batch
// size, workers, prefetch, pin_memory, persistent workers; its data (ImageFolder's root) unless
// --data names it; the image size from its transforms when they say it; and its step as a sleep
// of the job's own median compute time, so the stand-in's end-to-end phase has the job's pace.
#include <string>
#include <vector>

#include "mmprof/run_dir.hpp"

namespace mmprof::external {

struct StandIn {
  std::vector<std::string> sets;     // --set assignments, in order
  std::vector<std::string> why;      // one line per derived value: where it came from
  std::vector<std::string> unknown;  // what the job did not say (left at mmprof's defaults)
};

// Throws UsageError when `job` is not a run of a user's job, or has no followed DataLoader.
StandIn stand_in_for(const RunDir& job);

}  // namespace mmprof::external
