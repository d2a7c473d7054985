#pragma once
// Where a run's bytes came from, and the page cache it started each loader phase with
// (summary.json "locality", docs/metrics.md). Before each loader phase data.cache is applied to
// the dataset's files (as-is; warm: read them all; cold: posix_fadvise DONTNEED, no root needed)
// and mincore measures how much of them the page cache holds; after the phase, again. The phase's
// bytes then split into the page cache's and the device's: the loader's own count of what it
// read against the kernel's read_bytes of the run's processes in the phase window.
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"

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

  // The phase's bytes: what the loader read (its own count) and what the kernel read from the
  // device for the run's processes in the phase window (read_bytes; empty when unreadable).
  void phase_bytes(const std::string& phase, uint64_t loader_bytes,
                   std::optional<uint64_t> device_bytes);

  nlohmann::json to_json(std::optional<double> host_memory_mib) const;

 private:
  struct Phase {
    std::string prepared;  // what data.cache did: "as-is", "read", "evicted"
    double prepare_s = 0;
    double resident_before = 0, resident_after = 0;
    std::optional<double> resident_at_window;
    bool after_measured = false;
    uint64_t pages_left_resident = 0;  // cold: pages the eviction could not drop
    std::optional<uint64_t> loader_bytes, device_bytes;
  };
  DataCache cache_;
  std::vector<std::filesystem::path> files_;
  // The files residency is measured on: all of them, or every k-th of a dataset of more than
  // kResidencySample files (mapping a million files at each phase would cost seconds).
  std::vector<std::filesystem::path> measured_;
  uint64_t dataset_bytes_ = 0;
  std::map<std::string, Phase> phases_;
};

std::string to_string(DataCache cache);

}  // namespace mmprof
