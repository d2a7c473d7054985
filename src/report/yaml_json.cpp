#include "report/yaml_json.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

#include "config/yaml_file.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

json scalar(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted in the file: a string
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  if (s == "true") return true;
  if (s == "false") return false;
  // A whole number that int64 holds stays whole; any other number is a double; what no double
  // holds (inf, nan, 1e999) stays a string, refused where a number belongs.
  const char* const last = s.data() + s.size();
  int64_t whole = 0;
  if (const auto [end, ec] = std::from_chars(s.data(), last, whole);
      ec == std::errc() && end == last) {
    return whole;
  }
  double v = 0;
  if (const auto [end, ec] = std::from_chars(s.data(), last, v);
      ec == std::errc() && end == last && std::isfinite(v)) {
    return v;
  }
  return s;
}

json convert(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n)
        o[kv.first.Scalar()] = convert(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& item : n)
        a.push_back(convert(item));
      return a;
    }
    case YAML::NodeType::Scalar:
      return scalar(n);
    default:
      return nullptr;
  }
}

}  // namespace

json yaml_to_json(const std::string& text, const std::string& name) {
  return convert(config::load_yaml_text(text, name));
}

}  // namespace mmprof::report
