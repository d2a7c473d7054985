#pragma once
// Writing optional figures into the JSON of a run or experiment: an absent figure is null, never
// 0 ("not measured", docs/architecture.md).
#include <nlohmann/json.hpp>
#include <optional>

namespace mmprof::rundir {

template <class T>
nlohmann::json nullable(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace mmprof::rundir
