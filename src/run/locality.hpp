#pragma once
// Where a run's bytes came from, and the page cache it started each loader phase with
// (summary.json "locality", docs/metrics.md). Before each loader phase data.cache is applied to
// the dataset's files (as-is; warm: read them all; cold: posix_fadvise DONTNEED, no root needed)
// and mincore measures how much of them the page cache holds; after the phase, again. The phase's
// bytes then split into the page cache's and the device's: the loader's own count of what it
// read against the kernel's read_bytes of the run's processes in the phase window. A remote
// dataset (an http(s) data.path) has no local pages: its bytes are the network's, at the rate
// the loader got over the phase window, with the requests retried.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "mmprof/summary_loading.hpp"

namespace mmprof {

class DataLocality {
 public:
  static constexpr size_t kResidencySample = 4096;

  DataLocality(DataCache cache, const Dataset& dataset);

  // Applies data.cache and measures the residency the phase starts with.
  void before_phase(const std::string& phase);
  // The residency when the phase's measured window opens (its warm-up may have filled the cache).
  void window_begins(const std::string& phase);
  void after_phase(const std::string& phase);

  // The phase's bytes: what the loader read (its own count; its samples' reads spanned
  // `read_span_s`, with `retries` remote requests retried) and what the kernel read from the
  // device for the run's processes in the phase window (read_bytes; empty when unreadable).
  struct PhaseBytes {
    uint64_t loader_bytes = 0;
    std::optional<uint64_t> device_bytes;
    double read_span_s = 0;
    uint64_t retries = 0;
  };
  void phase_bytes(const std::string& phase, const PhaseBytes& bytes);

  Locality figures(std::optional<double> host_memory_mib) const;

 private:
  struct Phase {
    std::string prepared;  // what data.cache did: "as-is", "read", "evicted"
    double prepare_s = 0;
    double resident_before = 0, resident_after = 0;
    std::optional<double> resident_at_window;
    bool after_measured = false;
    uint64_t pages_left_resident = 0;  // cold: pages the eviction could not drop
    std::optional<PhaseBytes> bytes;
  };
  DataCache cache_;
  std::string url_;  // a remote dataset's root, else empty
  std::vector<std::filesystem::path> files_;
  // The files residency is measured on: all of them, or every k-th of a dataset of more than
  // kResidencySample files (mapping a million files at each phase would cost seconds).
  std::vector<std::filesystem::path> measured_;
  uint64_t dataset_bytes_ = 0;
  std::map<std::string, Phase> phases_;
};

std::string to_string(DataCache cache);

}  // namespace mmprof
