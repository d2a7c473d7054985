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
  if (!v.is_string()) refuse(at + pointer, v, "a string");
  return v.get<std::string>();
}

std::vector<std::string> FigureReader::texts(const nlohmann::json& j, const std::string& pointer,
                                             const std::string& at) const {
  std::vector<std::string> out;
  const nlohmann::json v = value_at(j, pointer);
  if (v.is_null()) return out;
  if (!v.is_array()) refuse(at + pointer, v, "an array of strings");
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(text(v, fmt::format("/{}", i), at + pointer));
  return out;
}

std::optional<bool> FigureReader::optional_flag(const nlohmann::json& j, const std::string& pointer,
                                                const std::string& at) const {
  const nlohmann::json v = value_at(j, pointer);
  if (v.is_null()) return std::nullopt;
  if (!v.is_boolean()) refuse(at + pointer, v, "true or false");
  return v.get<bool>();
}

void FigureReader::refuse(const std::string& pointer, const nlohmann::json& v,
                          std::string_view belongs) const {
  throw InputError(fmt::format("{}: key {} is {}, where {} belongs", file_.string(), pointer,
                               v.dump().substr(0, 80), belongs));
}

void FigureReader::out_of_range(const std::string& pointer, double v) const {
  throw InputError(fmt::format("{}: key {} is {}, outside the whole numbers it can hold",
                               file_.string(), pointer, v));
}

bool FigureReader::flag(const nlohmann::json& j, const std::string& pointer) {
  return value_at(j, pointer) == true;
}

}  // namespace mmprof::rundir
