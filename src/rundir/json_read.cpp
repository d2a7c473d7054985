#include "rundir/json_read.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace mmprof::rundir {
namespace {

using nlohmann::json;

// "/a/b" -> {"a", "b"} (our pointers never hold "~" escapes).
std::vector<std::string> split(const std::string& pointer) {
  std::vector<std::string> tokens;
  size_t start = 1;
  while (start <= pointer.size()) {
    const size_t end = std::min(pointer.find('/', start), pointer.size());
    tokens.push_back(pointer.substr(start, end - start));
    start = end + 1;
  }
  return tokens;
}

}  // namespace

json value_at(const json& j, const std::string& pointer) {
  // contains() of a pointer through a scalar throws in some versions: walk it.
  const json* node = &j;
  for (const auto& token : split(pointer)) {
    if (node->is_array()) {
      // Array elements by index ("/ci_pct/0").
      const bool digits =
          !token.empty() && token.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || std::stoul(token) >= node->size()) return nullptr;
      node = &(*node)[std::stoul(token)];
      continue;
    }
    if (!node->is_object() || !node->contains(token)) return nullptr;
    node = &node->at(token);
  }
  return *node;
}

FigureTypeError::FigureTypeError(std::string pointer, json value)
    : InputError(
          fmt::format("key {} is {}, where a number belongs", pointer, value.dump().substr(0, 80))),
      pointer_(std::move(pointer)),
      value_(std::move(value)) {}

std::optional<double> number_at(const json& j, const std::string& pointer) {
  json v = value_at(j, pointer);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number()) throw FigureTypeError(pointer, std::move(v));
  return v.get<double>();
}

std::string string_at(const json& j, const std::string& pointer, const std::string& fallback) {
  const json v = value_at(j, pointer);
  return v.is_string() ? v.get<std::string>() : fallback;
}

json followed_loader(const json& job) {
  const json loaders = value_at(job, "/dataloader/loaders");
  if (!loaders.is_array()) return nullptr;
  for (const auto& l : loaders)
    if (l.is_object() && l.value("followed", false)) return l;
  return nullptr;
}

}  // namespace mmprof::rundir
