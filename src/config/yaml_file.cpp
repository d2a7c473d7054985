#include "config/yaml_file.hpp"

#include <fmt/format.h>

#include <vector>

#include "mmprof/error.hpp"
#include "util/files.hpp"

namespace mmprof::config {
namespace {

// Counts the nodes a walk of `root` visits (an alias's node once per reference, as a walk does),
// stopping at the bound; iterative, so a deep document cannot overflow the stack here either.
void check_expansion(const YAML::Node& root, const std::string& name) {
  std::vector<YAML::Node> pending{root};
  int64_t visited = 0;
  while (!pending.empty()) {
    const YAML::Node n = pending.back();
    pending.pop_back();
    if (++visited > kMaxYamlNodes) {
      throw UsageError(
          fmt::format("{} expands to more than {} YAML nodes through its aliases; refused", name,
                      kMaxYamlNodes));
    }
    if (n.IsSequence()) {
      for (const auto& item : n)
        pending.push_back(item);
    } else if (n.IsMap()) {
      for (const auto& kv : n) {
        pending.push_back(kv.first);
        pending.push_back(kv.second);
      }
    }
  }
}

template <class Load>
YAML::Node load_checked(Load load, const std::string& name) {
  YAML::Node root;
  try {
    root = load();
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("{} is not valid YAML: {}", name, e.what()));
  }
  check_expansion(root, name);
  return root;
}

}  // namespace

YAML::Node load_yaml_file(const std::filesystem::path& path, const std::string& what) {
  const std::string text = read_input_file(path, what, kMaxYamlFileBytes);
  return load_checked([&] { return YAML::Load(text); }, what + " " + path.string());
}

YAML::Node load_yaml_text(const std::string& text, const std::string& name) {
  return load_checked([&] { return YAML::Load(text); }, name);
}

}  // namespace mmprof::config
