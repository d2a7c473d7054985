#pragma once
// Test-only fault injection for the reliability tests, read once from the environment when a
// worker's BatchFiller is made; with neither variable set, before_sample() is one branch.
//   MMPROF_TEST_CRASH_AT=<key>  the worker raises SIGSEGV when it starts that sample
//   MMPROF_TEST_HANG_AT=<key>   the worker sleeps forever when it starts that sample
//   MMPROF_TEST_NO_FDS_AT=<key> the worker's open-files limit drops to 3, so opening that
//                               sample's file fails with EMFILE
// Meant for process workers: in thread mode a crash takes the whole process, as it would in
// PyTorch's DataLoader with threads.
#include <string>

namespace mmprof {

class FaultHooks {
 public:
  FaultHooks();
  void before_sample(const std::string& key) const {
    if (armed_) fire(key);
  }

 private:
  void fire(const std::string& key) const;
  std::string crash_at_, hang_at_, no_fds_at_;
  bool armed_ = false;
};

}  // namespace mmprof
