#include "env/storage_probe.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <numeric>
#include <thread>
#include <unordered_set>

#include "env/page_cache.hpp"
#include "util/rng.hpp"

namespace mmprof::env {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr double kColdThreshold = 0.05;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

json pattern_json(const PatternResult& p, const char* unit_note) {
  const double s = p.seconds > 0 ? p.seconds : 0;
  return {{"ops", p.ops},
          {"bytes", p.bytes},
          {"seconds", s},
          {"mb_per_s", s > 0 ? json(double(p.bytes) / 1e6 / s) : json()},
          {"iops", s > 0 ? json(double(p.ops) / s) : json()},
          {"cache", p.resident_before < kColdThreshold ? "cold" : "warm"},
          {"resident_before", p.resident_before},
          {"stopped_by", p.stopped_by_time ? "time limit" : "byte/op limit"},
          {"read_size", unit_note}};
}

// Open file descriptors for the probe (closed on destruction).
struct Fds {
  std::vector<int> fd;
  explicit Fds(const std::vector<ProbeFile>& files) {
    for (const auto& f : files)
      fd.push_back(open(f.path.c_str(), O_RDONLY | O_CLOEXEC));
  }
  ~Fds() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
  Fds(const Fds&) = delete;
  Fds& operator=(const Fds&) = delete;
};

// Fraction of the pages the ops will touch that are resident now (mincore over each file).
double resident_fraction(const Fds& fds, const std::vector<ProbeFile>& files,
                         const std::vector<ReadOp>& ops) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  std::vector<std::vector<unsigned char>> maps(files.size());
  for (const auto& op : ops) {
    auto& m = maps[op.file];
    if (m.empty()) m = resident_pages(fds.fd[op.file], files[op.file].size);
  }
  uint64_t pages = 0, resident = 0;
  for (const auto& op : ops) {
    const auto& m = maps[op.file];
    for (uint64_t p = op.offset / page; p < (op.offset + op.bytes + page - 1) / page; ++p) {
      if (p >= m.size()) break;
      ++pages;
      resident += m[p] & 1;
    }
  }
  return pages == 0 ? 0.0 : double(resident) / double(pages);
}

// Empties the page cache for the files: globally when allowed (root), else per file.
std::string drop_caches(const Fds& fds, std::string& note) {
  sync();
  {
    std::ofstream f("/proc/sys/vm/drop_caches");
    if (f && (f << "1\n") && f.flush()) {
      note = "sync; echo 1 > /proc/sys/vm/drop_caches";
      return "drop_caches";
    }
  }
  bool any = false;
  for (int fd : fds.fd)
    any |= fd >= 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  note =
      "posix_fadvise(POSIX_FADV_DONTNEED) per file (drop_caches not writable); pages mapped "
      "or dirty elsewhere stay cached, resident_before says how many did";
  return any ? "fadvise" : "none";
}

// Runs `ops` with `depth` of them in flight: `depth` threads, thread t reading ops t, t + depth,
// ... (pread is synchronous, so the threads are the queue), until every op is done or limit_s.
PatternResult execute(const Fds& fds, const std::vector<ProbeFile>& files,
                      const std::vector<ReadOp>& ops, double limit_s, int depth = 1) {
  PatternResult r;
  r.resident_before = resident_fraction(fds, files, ops);
  uint64_t max_bytes = 0;
  for (const auto& op : ops)
    max_bytes = std::max(max_bytes, op.bytes);
  const auto n = static_cast<size_t>(std::max(depth, 1));
  std::vector<PatternResult> part(n);
  const auto t0 = Clock::now();
  const auto run = [&](size_t t) {
    std::vector<char> buf(max_bytes);
    for (size_t i = t; i < ops.size(); i += n) {
      if (seconds_since(t0) >= limit_s) {
        part[t].stopped_by_time = true;
        break;
      }
      const ReadOp& op = ops[i];
      const int fd = fds.fd[op.file];
      if (fd < 0) continue;
      const ssize_t got = pread(fd, buf.data(), op.bytes, static_cast<off_t>(op.offset));
      if (got > 0) part[t].bytes += static_cast<uint64_t>(got), part[t].ops++;
    }
  };
  if (n == 1) {
    run(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t t = 0; t < n; ++t)
      threads.emplace_back(run, t);
    for (auto& th : threads)
      th.join();
  }
  r.seconds = seconds_since(t0);
  for (const auto& p : part) {
    r.ops += p.ops;
    r.bytes += p.bytes;
    r.stopped_by_time |= p.stopped_by_time;
  }
  return r;
}

}  // namespace

StoragePlan plan_storage_probe(const std::vector<ProbeFile>& files, const StorageProbeLimits& l) {
  StoragePlan plan;
  uint64_t planned = 0;
  for (size_t i = 0; i < files.size() && planned < l.sequential_bytes; ++i) {
    for (uint64_t off = 0; off < files[i].size && planned < l.sequential_bytes;) {
      const uint64_t n =
          std::min({l.block_bytes, files[i].size - off, l.sequential_bytes - planned});
      plan.sequential.push_back({i, off, n});
      off += n, planned += n;
    }
  }
  // Random reads: a uniform 4 KiB block index over the concatenation of whole blocks of all files.
  std::vector<uint64_t> ends;  // cumulative block counts
  ends.reserve(files.size());
  uint64_t blocks = 0;
  for (const auto& f : files)
    ends.push_back(blocks += f.size / kRandomReadBytes);
  if (blocks == 0) return plan;
  // Distinct blocks only: a block read twice is a page-cache hit, not a device read.
  Rng rng(l.seed);
  std::vector<uint64_t> chosen;
  if (blocks <= 4 * l.random_ops) {
    chosen.resize(blocks);
    std::iota(chosen.begin(), chosen.end(), uint64_t{0});
    const uint64_t n = std::min(blocks, l.random_ops);
    for (uint64_t i = 0; i < n; ++i)
      std::swap(chosen[i], chosen[i + rng.next() % (blocks - i)]);
    chosen.resize(n);
  } else {
    std::unordered_set<uint64_t> seen;
    while (chosen.size() < l.random_ops) {
      const uint64_t b = rng.next() % blocks;
      if (seen.insert(b).second) chosen.push_back(b);
    }
  }
  for (const uint64_t b : chosen) {
    const size_t file =
        static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), b) - ends.begin());
    const uint64_t first = file == 0 ? 0 : ends[file - 1];
    plan.random.push_back({file, (b - first) * kRandomReadBytes, kRandomReadBytes});
  }
  return plan;
}

json storage_probe_summary(const PatternResult& sequential, const PatternResult& random,
                           const std::string& cache_method, const std::string& cache_note,
                           size_t files, const PatternResult* random_qd, int queue_depth) {
  json s = {{"files", files},
            {"cache_method", cache_method},
            {"cache_note", cache_note},
            {"sequential", pattern_json(sequential, "1 MiB reads, files in order")},
            {"random_4k", pattern_json(random, "4 KiB pread at uniform random aligned offsets")}};
  if (random_qd != nullptr && queue_depth > 1) {
    s["random_4k_qd"] = pattern_json(
        *random_qd, "the same 4 KiB reads, queue_depth of them in flight (one thread each)");
    s["random_4k_qd"]["queue_depth"] = queue_depth;
  }
  return s;
}

json run_storage_probe(const std::vector<ProbeFile>& files, const StorageProbeLimits& limits) {
  const StoragePlan plan = plan_storage_probe(files, limits);
  const Fds fds(files);
  std::string note;
  const std::string method = drop_caches(fds, note);
  const PatternResult seq = execute(fds, files, plan.sequential, limits.sequential_s);
  drop_caches(fds, note);  // the sequential pass cached what the random pass would read
  // No readahead: each 4 KiB read must cost one device read, not prefetch its neighbours.
  for (int fd : fds.fd)
    if (fd >= 0) posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
  const PatternResult rnd = execute(fds, files, plan.random, limits.random_s);
  if (limits.queue_depth <= 1) return storage_probe_summary(seq, rnd, method, note, files.size());
  // A device serves many reads at once (NVMe: dozens of queues); QD 1 shows its latency only.
  drop_caches(fds, note);
  const PatternResult qd = execute(fds, files, plan.random, limits.random_s, limits.queue_depth);
  return storage_probe_summary(seq, rnd, method, note, files.size(), &qd, limits.queue_depth);
}

}  // namespace mmprof::env
