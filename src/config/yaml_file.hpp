#pragma once
// Every YAML document mmprof reads (configurations, experiment files, the report's criteria and
// knowledge base) comes through here: one sentence naming the document on any error, and a bound
// on what it expands to. yaml-cpp shares the node an alias names instead of copying it, so a
// "billion laughs" file of a few hundred bytes loads at once, but walking it (validating keys,
// converting it to JSON) would visit 10^9 nodes; the bound is checked before anything walks it.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace mmprof::config {

// Nodes a document may expand to, aliases followed: mmprof's own largest document, the knowledge
// base, has about 1,500; a million leaves room for any real file and stops a bomb in milliseconds.
inline constexpr int64_t kMaxYamlNodes = 1'000'000;

// A YAML file is read whole, a regular file of at most this many bytes (util/files.hpp).
inline constexpr uint64_t kMaxYamlFileBytes = 16u << 20;
// `what` names the kind of document ("config file", "experiment file"): InputError (exit 3)
// "cannot read <what> <path>: <why>" when it cannot be read, else UsageError "<what> <path> is
// not valid YAML: ..." or "... expands to more than ... YAML nodes through its aliases".
YAML::Node load_yaml_file(const std::filesystem::path& path, const std::string& what);
// `name` is how errors name the document ("--gate crit.yaml").
YAML::Node load_yaml_text(const std::string& text, const std::string& name);

}  // namespace mmprof::config
