#pragma once
// The readable tables of `mmprof inspect`: the inventory ("mmprof.inventory/2") as text, one
// section per block (provenance, software, hardware, storage, network, data mix). Pure: JSON in,
// text out, beside the report's Markdown and HTML writers.
#include <nlohmann/json.hpp>
#include <string>

namespace mmprof::report {

std::string format_inventory(const nlohmann::json& inventory);

}  // namespace mmprof::report
