// libFuzzer target: adopt/rollback criteria (`report --gate FILE`, configs/report/criteria.yaml):
// a user's YAML. Every input is refused with one of mmprof's errors naming the file and key, or
// reads into criteria whose numbers are what a gate can apply (finite; the exit code of an
// inconclusive gate 0, 1 or 5).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "mmprof/error.hpp"
#include "report/criteria.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const mmprof::report::Criteria c = mmprof::report::parse_criteria(text, "criteria.yaml");
    for (const double v : {c.min_throughput_gain_pct, c.max_p99_regression_pct,
                           c.memory_budget_host_fraction, c.run_max_stall_fraction,
                           c.compare_max_throughput_drop_pct, c.rollback_throughput_drop_pct}) {
      if (!std::isfinite(v)) std::abort();
    }
    if (c.inconclusive_exit != 0 && c.inconclusive_exit != 1 && c.inconclusive_exit != 5)
      std::abort();
    (void)mmprof::report::memory_budget(c, 1024.0);
  } catch (const mmprof::Error&) {
  }
  return 0;
}
