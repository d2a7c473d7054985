#include "rundir/figure_reader.hpp"

#include <fmt/format.h>

#include "rundir/json_read.hpp"

namespace mmprof::rundir {

std::optional<double> FigureReader::number(const nlohmann::json& j, const std::string& pointer,
                                           const std::string& at) const {
  try {
    return number_at(j, pointer);
  } catch (const FigureTypeError& e) {
    throw InputError(
        fmt::format("{}: {}", file_.string(), FigureTypeError(at + pointer, e.value()).what()));
  }
}

std::string FigureReader::text(const nlohmann::json& j, const std::string& pointer,
                               const std::string& at) const {
  const nlohmann::json v = value_at(j, pointer);
  if (v.is_null()) return "";
  if (!v.is_string()) {
    throw InputError(fmt::format("{}: key {}{} is {}, where a string belongs", file_.string(), at,
                                 pointer, v.dump().substr(0, 80)));
  }
  return v.get<std::string>();
}

void FigureReader::out_of_range(const std::string& pointer, double v) const {
  throw InputError(fmt::format("{}: key {} is {}, outside the whole numbers it can hold",
                               file_.string(), pointer, v));
}

bool FigureReader::flag(const nlohmann::json& j, const std::string& pointer) {
  return value_at(j, pointer) == true;
}

}  // namespace mmprof::rundir
