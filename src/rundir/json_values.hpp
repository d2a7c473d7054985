#pragma once
// Writing optional figures into the JSON of a run or experiment: an absent figure is null, never
// 0 ("not measured", docs/architecture.md).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace mmprof::rundir {

template <class T>
nlohmann::json nullable(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// A text that is empty when there is none: null in the file.
inline nlohmann::json text_or_null(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

}  // namespace mmprof::rundir
