// What one trace record costs the producer (bench/README.md, "trace-overhead"): the recording
// points a worker calls per sample (trace::sample: read, decode and augment spans; trace::collate)
// timed in a loop, with one producer and with two on separate regions at once (the shared budget
// counter is the only cache line they both write). Median and min-max over REPS repetitions.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>
#include <vector>

#include "probe/clock.hpp"
#include "stats/descriptive.hpp"
#include "trace/trace_arena.hpp"
#include "trace/tracer.hpp"

namespace {

using namespace mmprof;

constexpr int kSamples = 200'000;  // 4 records each: 800k records per repetition and producer

// ns per sample for `producers` threads recording at once into a fresh arena.
double ns_per_sample(int producers) {
  trace::TraceArena arena(trace::kFirstWorkerRegion + static_cast<uint32_t>(producers),
                          static_cast<uint64_t>(producers) * kSamples * 4, 1);
  trace::set_active(&arena, nullptr);
  std::vector<double> per_thread(static_cast<size_t>(producers));
  std::vector<std::thread> threads;
  for (int w = 0; w < producers; ++w) {
    threads.emplace_back([w, &per_thread] {
      const int64_t t0 = monotonic_ns();
      for (int i = 0; i < kSamples; ++i) {
        const auto batch = static_cast<uint64_t>(i / 32);
        trace::sample(w, batch, static_cast<uint32_t>(i), i, 10, 20, 30, -1);
        trace::collate(w, batch, static_cast<uint32_t>(i), i + 60, i + 61);
      }
      per_thread[static_cast<size_t>(w)] = static_cast<double>(monotonic_ns() - t0) / kSamples;
    });
  }
  for (auto& t : threads)
    t.join();
  trace::set_active(nullptr, nullptr);
  if (arena.dropped_total() != 0) std::abort();  // the budget was sized to keep everything
  double worst = 0;
  for (double v : per_thread)
    worst = std::max(worst, v);
  return worst;
}

void report(const char* name, std::vector<double> v) {
  const Distribution d = describe(std::move(v));
  std::printf("  %-26s median %7.1f ns/sample (%5.1f ns/record)  min %7.1f  max %7.1f\n", name,
              d.p50, d.p50 / 4, d.min, d.max);
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 7;
  ns_per_sample(1);  // warm-up: first touch of the arena's pages happens in every repetition
  std::vector<double> one, two;
  for (int r = 0; r < reps; ++r) {
    one.push_back(ns_per_sample(1));
    two.push_back(ns_per_sample(2));
  }
  std::printf("trace recording cost, %d samples x 4 records per producer, %d repetitions:\n",
              kSamples, reps);
  report("1 producer", one);
  report("2 producers at once", two);
  return 0;
}
