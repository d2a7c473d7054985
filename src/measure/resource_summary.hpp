#pragma once
// summary.json's memory, cpu and io parts from the resource sampler's aggregate, for every
// producer of runs (mmprof's phases, a user's job): memory peaks over the whole run, CPU, I/O and
// faults per measured window.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mmprof/summary.hpp"
#include "probe/resource_usage.hpp"

namespace mmprof {

// `windows`: (name, data samples delivered in it) of each measured window the sampler opened
// (for faults per sample; 0 when not counted). The top-level cpu and io figures are those of
// `top_window`, or of the whole run when that window never opened; `phases` has each window.
void add_resource_parts(Summary& s, const ResourceUsage& r,
                        const std::vector<std::pair<std::string, int64_t>>& windows,
                        const std::string& top_window);

}  // namespace mmprof
