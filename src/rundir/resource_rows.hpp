#pragma once
// resources.csv and host.csv rows from the resource sampler's snapshots: one row per process
// per snapshot (an empty field is a value the kernel did not give), one host row per snapshot.
#include <string>
#include <vector>

#include "mmprof/run_dir.hpp"
#include "probe/resource_usage.hpp"

namespace mmprof {

std::vector<ResourceRow> resource_rows(const Snapshot& s);
HostRow host_row(const Snapshot& s);

std::string resources_csv_header();
std::string resources_csv_rows(const Snapshot& s);
std::string host_csv_header();
std::string host_csv_row(const Snapshot& s);

}  // namespace mmprof
