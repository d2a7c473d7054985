#include "external/job_stop.hpp"

#include <array>
#include <cstddef>

namespace mmprof::external {

const char* stop_name(StopReason reason) {
  // In the order of StopReason's values.
  static constexpr std::array<const char*, 4> kNames = {"none", "steps", "duration", "interrupt"};
  return kNames.at(static_cast<size_t>(reason));
}

JobStop::JobStop(double grace_s, std::optional<double> duration_s, int64_t launch_ns)
    : grace_ns_(static_cast<int64_t>(grace_s * 1e9)),
      duration_s_(duration_s),
      launch_ns_(launch_ns) {}

StopActions JobStop::poll(int64_t now_ns, const StopInputs& in) {
  StopActions a;
  if (in.hook_stopped && reason_ == StopReason::none) a = begin(StopReason::hook_steps, now_ns, in);
  if (in.interrupted && reason_ != StopReason::interrupt)
    a = begin(StopReason::interrupt, now_ns, in);
  if (reason_ == StopReason::none && duration_reached(now_ns, in))
    a = begin(StopReason::duration, now_ns, in);
  const StopActions e = escalate(now_ns);
  a.signal_group = a.signal_group || e.signal_group;
  a.kill = e.kill;
  return a;
}

void JobStop::job_exited(const StopInputs& in) {
  if (in.hook_stopped && reason_ == StopReason::none) reason_ = StopReason::hook_steps;
}

// --duration counts measured time: from the first measured batch, or, when the hook never
// reports (no torch in the job), from the launch.
bool JobStop::duration_reached(int64_t now_ns, const StopInputs& in) const {
  if (!duration_s_) return false;
  const bool hook_silent = !in.hook_heard && now_ns - launch_ns_ > kSilentHookNs;
  if (!in.measured_since_ns && !hook_silent) return false;
  const int64_t since = in.measured_since_ns.value_or(launch_ns_);
  return static_cast<double>(now_ns - since) / 1e9 >= *duration_s_;
}

StopActions JobStop::begin(StopReason why, int64_t now_ns, const StopInputs& in) {
  reason_ = why;
  since_ns_ = now_ns;
  signalled_ = false;
  StopActions a;
  if (why == StopReason::duration) {
    a.write_stop_file = true;
    a.signal_group = !in.hook_heard;  // no hook to hear it
  } else if (why == StopReason::interrupt) {
    a.signal_group = true;
  }
  signalled_ = a.signal_group;
  return a;
}

StopActions JobStop::escalate(int64_t now_ns) {
  StopActions a;
  if (reason_ == StopReason::none || now_ns - since_ns_ < grace_ns_) return a;
  if (!signalled_) {
    a.signal_group = true;
    signalled_ = true;
    since_ns_ = now_ns;
  } else {
    a.kill = true;
    forced_ = true;
  }
  return a;
}

}  // namespace mmprof::external
