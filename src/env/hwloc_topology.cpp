#include "env/hwloc_topology.hpp"

#include <fmt/format.h>
#include <hwloc.h>

#include <cstdlib>

namespace mmprof::env {
namespace {

// Owns the topology handle (destroyed on every path).
struct TopologyHandle {
  hwloc_topology_t t = nullptr;
  ~TopologyHandle() {
    if (t != nullptr) hwloc_topology_destroy(t);
  }
};

void add_caches(hwloc_topology_t t, hwloc_obj_type_t type, const char* name,
                std::vector<CacheLevel>& out) {
  const int n = hwloc_get_nbobjs_by_type(t, type);
  if (n <= 0) return;
  const hwloc_obj_t first = hwloc_get_obj_by_type(t, type, 0);
  CacheLevel c;
  c.name = name;
  c.count = n;
  c.size_kb = first->attr->cache.size >> 10;
  c.line_bytes = static_cast<int>(first->attr->cache.linesize);
  out.push_back(std::move(c));
}

std::string cpu_list(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  if (set == nullptr || hwloc_bitmap_list_asprintf(&text, set) < 0) return "";
  std::string s(text);
  std::free(text);
  return s;
}

}  // namespace

std::optional<Topology> read_topology(std::string& error) {
  TopologyHandle h;
  if (hwloc_topology_init(&h.t) != 0) {
    error = "hwloc_topology_init failed";
    return std::nullopt;
  }
  if (hwloc_topology_load(h.t) != 0) {
    error = "hwloc_topology_load failed";
    return std::nullopt;
  }
  Topology topo;
  const unsigned v = hwloc_get_api_version();
  topo.hwloc_version = fmt::format("{}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff);
  topo.packages = hwloc_get_nbobjs_by_type(h.t, HWLOC_OBJ_PACKAGE);
  topo.cores = hwloc_get_nbobjs_by_type(h.t, HWLOC_OBJ_CORE);
  topo.pus = hwloc_get_nbobjs_by_type(h.t, HWLOC_OBJ_PU);
  const int nodes = hwloc_get_nbobjs_by_type(h.t, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < nodes; ++i) {
    const hwloc_obj_t o = hwloc_get_obj_by_type(h.t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    topo.numa.push_back(
        {static_cast<int>(o->os_index), o->attr->numanode.local_memory >> 20, cpu_list(o->cpuset)});
  }
  add_caches(h.t, HWLOC_OBJ_L1CACHE, "L1d", topo.caches);
  add_caches(h.t, HWLOC_OBJ_L1ICACHE, "L1i", topo.caches);
  add_caches(h.t, HWLOC_OBJ_L2CACHE, "L2", topo.caches);
  add_caches(h.t, HWLOC_OBJ_L3CACHE, "L3", topo.caches);
  return topo;
}

}  // namespace mmprof::env
