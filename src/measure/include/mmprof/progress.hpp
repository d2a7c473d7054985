#pragma once
// How work that takes a while (a run's phases, an experiment's trials, a generated dataset)
// reports its progress on stderr: --quiet, --verbose, a terminal or a log.
namespace mmprof {

enum class ProgressStyle {
  none,   // --quiet or --json: nothing
  live,   // stderr is a terminal: one line redrawn in place (step, rate, ETA)
  lines,  // stderr is a log (CI), or --verbose: one plain line per finished phase or trial
};

}  // namespace mmprof
