#include "report/yaml_json.hpp"

#include <charconv>

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
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && end == s.data() + s.size()) {
    if (s.find_first_of(".eE") == std::string::npos) return static_cast<int64_t>(v);
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
