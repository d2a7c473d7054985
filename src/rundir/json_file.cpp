#include "rundir/json_file.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "mmprof/error.hpp"

namespace mmprof::rundir {

namespace fs = std::filesystem;
using nlohmann::json;

json read_json_object(const fs::path& file, const std::string& why) {
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    throw InputError(fmt::format("{} is missing{}{}", file.string(), why.empty() ? "" : ": ", why));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read {}", file.string()));
  std::ostringstream text;
  text << in.rdbuf();
  json j;
  try {
    j = json::parse(text.str());
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number no double holds (1e999).
    throw InputError(
        fmt::format("{} is not valid JSON (corrupt or cut short: {})", file.string(), e.what()));
  }
  if (!j.is_object()) {
    throw InputError(fmt::format("{} is not valid JSON for mmprof (not an object)", file.string()));
  }
  return j;
}

std::optional<json> read_json_if_present(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  return read_json_object(file, "");
}

void check_schema(const json& j, const char* schema, const fs::path& file) {
  const auto it = j.find("schema");
  const std::string found = it != j.end() && it->is_string() ? it->get<std::string>() : "";
  if (found == schema) return;
  throw InputError(fmt::format("{} is not an {} file (schema '{}')", file.string(), schema, found));
}

}  // namespace mmprof::rundir
