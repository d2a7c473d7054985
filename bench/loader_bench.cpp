// Loader efficiency benchmark: mmprof's pipeline throughput with N worker processes against the
// hardware-bound limit N x (single-core decode+augment rate), both measured in the same run.
// Protocol (bench/README.md): one warm-up pass of each arm, then R interleaved repetitions
// (single-core, pipeline, single-core, ...); report medians, min-max spread and the ratio.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "data/sampler.hpp"
#include "gen/generator.hpp"
#include "loader/batch_filler.hpp"
#include "loader/batch_slot.hpp"
#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "mmprof/loader.hpp"
#include "probe/clock.hpp"
#include "stats/descriptive.hpp"

namespace {

using namespace mmprof;

// The worker's code path on this thread, no IPC: the per-core rate the pipeline can at best
// multiply by its worker count.
double single_core_rate(const Config& c, const Dataset& ds, const SlotRing& ring, int epochs) {
  BatchFiller filler(c, ds, 0);
  const SlotView slot = ring.slot(0);
  int64_t samples = 0;
  const int64_t t0 = monotonic_ns();
  for (int e = 0; e < epochs; ++e) {
    EpochPlan plan(static_cast<uint32_t>(ds.size()), e,
                   {c.loader.shuffle, c.loader.seed, 0, 1, c.loader.batch_size});
    for (size_t b = 0; b < plan.num_batches(); ++b) {
      SlotHeader& h = slot.header();
      h.batch_id = b;
      h.epoch = e;
      h.planned = static_cast<uint32_t>(plan.batch_size(b));
      for (uint32_t i = 0; i < h.planned; ++i)
        slot.records()[i].index = plan.batch_begin(b)[i];
      filler.fill(slot);
      samples += h.n_ok;
    }
  }
  return static_cast<double>(samples) / (static_cast<double>(monotonic_ns() - t0) / 1e9);
}

struct PipelineResult {
  double samples_per_s;
  double worker_busy;  // sum of per-sample stage times / (wall time x workers)
  double stage_ms_per_sample;
};

PipelineResult pipeline_rate(const Config& c, const Dataset& ds, int epochs) {
  Loader loader(c, ds);
  loader.next();  // start-up is not throughput: time from the first batch on
  const int64_t t0 = monotonic_ns();
  int64_t samples = 0;
  double stage_ms = 0;
  const size_t batches = loader.batches_per_epoch() * static_cast<size_t>(epochs) - 1;
  for (size_t b = 0; b < batches; ++b) {
    const Batch& batch = loader.next();
    samples += batch.size;
    for (const auto& s : batch.samples)
      stage_ms += s.read_ms + s.decode_ms + s.augment_ms;
  }
  const double wall_s = static_cast<double>(monotonic_ns() - t0) / 1e9;
  return {static_cast<double>(samples) / wall_s, stage_ms / 1e3 / (wall_s * c.loader.num_workers),
          stage_ms / static_cast<double>(samples)};
}

void print_row(const char* name, const std::vector<double>& v) {
  const Distribution d = describe(v);
  std::printf("%-28s median %8.1f  min %8.1f  max %8.1f  (n=%zu)\n", name, d.p50, d.min, d.max,
              d.count);
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  const int workers = argc > 2 ? std::atoi(argv[2]) : 2;
  const int epochs = argc > 3 ? std::atoi(argv[3]) : 1;
  Config c;
  c.loader.num_workers = workers;
  c.loader.pin_memory = PinMemory::off;
  const Dataset ds =
      Dataset::open(ensure_default_dataset() / "files", Layout::files).only(Modality::image);
  const SlotRing ring(slot_geometry(c), 1);
  std::printf(
      "mmprof loader bench: %zu images, %dx%d float32, batch %d, %d workers (%s), "
      "%d epoch(s) per measurement, %d repetitions\n",
      ds.size(), c.image.size, c.image.size, c.loader.batch_size, workers,
      c.loader.worker_mode == WorkerMode::process ? "processes" : "threads", epochs, reps);
  single_core_rate(c, ds, ring, 1);  // warm-up: page cache, decoder state, first-touch faults
  pipeline_rate(c, ds, 1);
  std::vector<double> single, pipeline, percent, busy, stage_ms;
  for (int r = 0; r < reps; ++r) {
    single.push_back(single_core_rate(c, ds, ring, epochs));
    const PipelineResult p = pipeline_rate(c, ds, epochs);
    pipeline.push_back(p.samples_per_s);
    percent.push_back(100 * p.samples_per_s / (workers * single.back()));
    busy.push_back(100 * p.worker_busy);
    stage_ms.push_back(p.stage_ms_per_sample);
  }
  print_row("single core (samples/s)", single);
  std::vector<double> limit;
  for (double s : single)
    limit.push_back(s * workers);
  print_row("limit = workers x single", limit);
  print_row("pipeline (samples/s)", pipeline);
  print_row("pipeline / limit (%)", percent);
  print_row("worker busy (%)", busy);
  print_row("worker stage ms per sample", stage_ms);
  std::printf("single-core ms per sample: median %.2f\n", 1e3 / describe(single).p50);
  return 0;
}
