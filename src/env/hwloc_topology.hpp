#pragma once
// The machine's CPU topology from hwloc. The only file that calls hwloc; the rest of mmprof sees
// this struct.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mmprof::env {

struct CacheLevel {
  std::string name;  // "L1d", "L1i", "L2", "L3"
  uint64_t size_kb = 0;
  int count = 0;  // instances on the machine
  int line_bytes = 0;
};

struct NumaNode {
  int os_index = 0;
  uint64_t memory_mib = 0;
  std::string cpus;  // the node's CPUs as a list ("0-15,32-47")
};

struct Topology {
  int packages = 0, cores = 0, pus = 0;
  std::vector<NumaNode> numa;
  std::vector<CacheLevel> caches;
  std::string hwloc_version;
};

// Nullopt with `error` set when hwloc cannot load the topology.
std::optional<Topology> read_topology(std::string& error);

}  // namespace mmprof::env
