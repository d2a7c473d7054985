#pragma once
// When and how mmprof stops a user's job, as gently as the job allows: a pure state machine on
// the time it is given (no clock, no process), so that its timing is tested under fake time.
//  - the hook stops the job itself after the warm-up and measured batches asked (its `stop`
//    record says so);
//  - --duration over: the stop file asks the hook to stop at its next batch (a job without the
//    hook's records gets SIGINT at once: nothing would hear the file);
//  - Ctrl-C or SIGTERM to mmprof: SIGINT to the job's group at once;
// then, while the job runs on: SIGINT to its group after the grace period, SIGKILL after another.
#include <cstdint>
#include <optional>
#include <string>

namespace mmprof::external {

// How the job ended, from mmprof's side.
enum class StopReason { none, hook_steps, duration, interrupt };
// summary.json's job.stopped_by: "steps", "duration", "interrupt" or "none".
const char* stop_name(StopReason reason);

// What the run saw at one poll.
struct StopInputs {
  bool interrupted = false;                  // Ctrl-C or SIGTERM reached mmprof
  bool hook_heard = false;                   // the hook wrote a record (it hears the stop file)
  bool hook_stopped = false;                 // the hook's `stop` record: its batch count was met
  std::optional<int64_t> measured_since_ns;  // the first measured batch's call
};

// What the run must do now.
struct StopActions {
  bool write_stop_file = false;  // ask the hook to stop at its next batch
  bool signal_group = false;     // SIGINT to the job's process group
  bool kill = false;             // SIGKILL to the job's group and every process left
};

class JobStop {
 public:
  // grace_s: how long a stopped job may take before the next, harder step; duration_s:
  // --duration (measured seconds, from the first measured batch, or from the launch when the
  // hook stays silent for kSilentHookNs).
  JobStop(double grace_s, std::optional<double> duration_s, int64_t launch_ns);

  static constexpr int64_t kSilentHookNs = 30'000'000'000;

  // While the job runs: every poll.
  StopActions poll(int64_t now_ns, const StopInputs& in);
  // After the job exited: a `stop` record read only now still says mmprof's steps ended it.
  void job_exited(const StopInputs& in);

  StopReason reason() const noexcept { return reason_; }
  // The stop took SIGKILL: records of the job's last moments may be lost.
  bool forced() const noexcept { return forced_; }

 private:
  bool duration_reached(int64_t now_ns, const StopInputs& in) const;
  StopActions begin(StopReason why, int64_t now_ns, const StopInputs& in);
  StopActions escalate(int64_t now_ns);

  int64_t grace_ns_;
  std::optional<double> duration_s_;
  int64_t launch_ns_;
  StopReason reason_ = StopReason::none;
  int64_t since_ns_ = 0;  // the last step of the stop (its start, or the SIGINT)
  bool signalled_ = false, forced_ = false;
};

}  // namespace mmprof::external
