#pragma once
// YAML text to JSON (scalars stay strings unless they read as numbers or booleans), so the
// report's data files are handled like the run directory's JSON. yaml-cpp stays in this file.
#include <nlohmann/json.hpp>
#include <string>

namespace mmprof::report {

// Throws UsageError naming `name` on a YAML syntax error.
nlohmann::json yaml_to_json(const std::string& text, const std::string& name);

}  // namespace mmprof::report
