#pragma once
// `mmprof inspect --probe-storage`: sequential and random 4 KiB read throughput on the files of
// the data path, bounded in bytes and time. The plan (which bytes to read) and the summary are
// pure functions; only run_storage_probe touches the disk and the clock.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mmprof::env {

struct StorageProbeLimits {
  uint64_t sequential_bytes = 256ull << 20;  // at most this much read sequentially
  double sequential_s = 2.0;                 // ... or for this long
  uint64_t random_ops = 100000;              // at most this many 4 KiB reads
  double random_s = 2.0;                     // ... or for this long
  int queue_depth = 16;  // the random reads again, this many in flight (threads); 1: not run
  uint64_t block_bytes = 1 << 20;  // sequential read size
  uint64_t seed = 0;
};

inline constexpr uint64_t kRandomReadBytes = 4096;

struct ProbeFile {
  std::string path;
  uint64_t size = 0;
};

struct ReadOp {
  size_t file = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

// Sequential: the files in order, whole, in block_bytes reads, until sequential_bytes. Random:
// min(random_ops, blocks) distinct 4 KiB-aligned blocks drawn uniformly over all
// the files' whole blocks (so a file is hit in proportion to its size), from a seeded generator;
// the I/O layer turns readahead off (POSIX_FADV_RANDOM) for them. Files smaller than 4 KiB get no
// random reads.
struct StoragePlan {
  std::vector<ReadOp> sequential;
  std::vector<ReadOp> random;
};
StoragePlan plan_storage_probe(const std::vector<ProbeFile>& files, const StorageProbeLimits& l);

// What the I/O layer measured for one pattern.
struct PatternResult {
  uint64_t ops = 0, bytes = 0;
  double seconds = 0;
  double resident_before = 0;  // fraction of the planned pages in the page cache before reading
  bool stopped_by_time = false;
};

// How caches were emptied before each pattern: "drop_caches" (root: sync + echo 1 >
// /proc/sys/vm/drop_caches), "fadvise" (posix_fadvise DONTNEED per file) or "none".
// Pure: the JSON block, labelling each pattern "cold" when under 5% of its pages were cached
// before reading and "warm" otherwise. `random_qd`: the random reads with `queue_depth` in
// flight (absent when queue_depth <= 1).
nlohmann::json storage_probe_summary(const PatternResult& sequential, const PatternResult& random,
                                     const std::string& cache_method, const std::string& cache_note,
                                     size_t files, const PatternResult* random_qd = nullptr,
                                     int queue_depth = 1);

// Runs the plan on `files` and returns storage_probe_summary's block.
nlohmann::json run_storage_probe(const std::vector<ProbeFile>& files,
                                 const StorageProbeLimits& limits = {});

}  // namespace mmprof::env
