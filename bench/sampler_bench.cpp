// Resource sampler cost. Protocol (bench/README.md): (1) the time of one sample of a tree of
// 1 main + 2 worker processes, median of R batches of K samples; (2) pipeline throughput with the
// sampler at 100 ms and without it, one warm-up pass of each, then R interleaved repetitions
// (off, on, off, on...); medians, min-max, and the on/off ratio per adjacent pair.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "gen/generator.hpp"
#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "mmprof/loader.hpp"
#include "probe/clock.hpp"
#include "probe/procfs.hpp"
#include "probe/resource_sampler.hpp"
#include "rundir/resource_rows.hpp"
#include "stats/descriptive.hpp"

namespace {

using namespace mmprof;

// Two children with 64 MiB of touched memory each, alive until the object dies: the shape of a
// loader's workers as the sampler sees them (smaps_rollup walks their mappings).
class IdleWorkers {
 public:
  IdleWorkers() {
    for (int i = 0; i < 2; ++i) {
      int fds[2];
      if (pipe(fds) != 0) std::abort();
      const pid_t pid = fork();
      if (pid == 0) {
        close(fds[1]);
        const size_t n = 64u << 20;
        auto* p = static_cast<char*>(
            mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        for (size_t off = 0; off < n; off += 4096)
          p[off] = 1;
        char c;
        [[maybe_unused]] const auto r = read(fds[0], &c, 1);  // EOF when the parent is done
        _exit(0);
      }
      close(fds[0]);
      pids.push_back(pid);
      release_fds.push_back(fds[1]);
    }
  }
  ~IdleWorkers() {
    for (int fd : release_fds)
      close(fd);
  }
  std::vector<int> pids;
  std::vector<int> release_fds;
};

void print_row(const char* name, const std::vector<double>& v) {
  const Distribution d = describe(v);
  std::printf("%-34s median %9.2f  min %9.2f  max %9.2f  (n=%zu)\n", name, d.p50, d.min, d.max,
              d.count);
}

double pipeline_rate(const Config& c, const Dataset& ds, int epochs, int interval_ms) {
  Loader loader(c, ds);
  procfs::ProcFs fs;
  MonotonicClock clock;
  std::optional<ResourceSampler> sampler;
  if (interval_ms > 0) {
    sampler.emplace(fs, clock, ResourceSampler::Options{interval_ms, 0}, nullptr);
    sampler->set_workers(loader.stats().worker_pids);
    sampler->start();
  }
  loader.next();  // start-up is not throughput
  const int64_t t0 = monotonic_ns();
  int64_t samples = 0;
  const size_t batches = loader.batches_per_epoch() * static_cast<size_t>(epochs) - 1;
  for (size_t b = 0; b < batches; ++b)
    samples += loader.next().size;
  const double wall_s = static_cast<double>(monotonic_ns() - t0) / 1e9;
  return static_cast<double>(samples) / wall_s;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 2;
  const int per_batch = 200;

  // (1) Time per sample.
  {
    IdleWorkers workers;
    usleep(300'000);  // let the children touch their memory
    procfs::ProcFs fs;
    MonotonicClock clock;
    ResourceSampler sampler(fs, clock, {0, 0}, [](const Snapshot& s) {
      static std::string sink;
      sink = resources_csv_rows(s) + host_csv_row(s);  // the runner's formatting cost too
    });
    sampler.set_workers(workers.pids);
    sampler.sample_now("warm-up");
    std::vector<double> us, us_scan;
    for (int r = 0; r < reps; ++r) {
      for (bool scan : {false, true}) {
        const int64_t t0 = monotonic_ns();
        for (int i = 0; i < per_batch; ++i)
          sampler.sample_now("", scan);
        (scan ? us_scan : us).push_back(static_cast<double>(monotonic_ns() - t0) / 1e3 / per_batch);
      }
    }
    // Periodic samples make the /proc pass once in 10.
    std::vector<double> periodic;
    for (int r = 0; r < reps; ++r)
      periodic.push_back(0.9 * us[static_cast<size_t>(r)] + 0.1 * us_scan[static_cast<size_t>(r)]);
    const size_t procs = fs.all_processes().size();
    std::printf(
        "mmprof sampler bench: tree of 1 main + 2 workers (64 MiB each), %zu processes "
        "on the host (the tree is found by a pass over /proc)\n",
        procs);
    print_row("sample of the known tree (us)", us);
    print_row("sample with a /proc pass (us)", us_scan);
    print_row("periodic sample, mean (us)", periodic);
    std::printf("%-34s %9.3f %%\n", "one core's time at 100 ms (median)",
                describe(periodic).p50 / 1e3 / 100 * 100);
  }

  // (2) Pipeline throughput, sampler off vs on.
  Config c;
  c.loader.num_workers = 2;
  c.loader.pin_memory = PinMemory::off;
  const Dataset ds =
      Dataset::open(ensure_default_dataset() / "files", Layout::files).only(Modality::image);
  std::printf(
      "pipeline: %zu images, batch %d, %d workers, %d epoch(s) per measurement, "
      "%d repetitions interleaved off/on\n",
      ds.size(), c.loader.batch_size, c.loader.num_workers, epochs, reps);
  pipeline_rate(c, ds, 1, 0);  // warm-up: page cache, decoder state
  pipeline_rate(c, ds, 1, 100);
  std::vector<double> off, on, ratio;
  for (int r = 0; r < reps; ++r) {
    off.push_back(pipeline_rate(c, ds, epochs, 0));
    on.push_back(pipeline_rate(c, ds, epochs, 100));
    ratio.push_back(100 * on.back() / off.back());
  }
  print_row("sampler off (samples/s)", off);
  print_row("sampler on, 100 ms (samples/s)", on);
  print_row("on / off (%)", ratio);
  return 0;
}
