// The key table drives defaults, typing, ranges, choices and configs/default.yaml.
#include "config/config_keys.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "mmprof/config.hpp"
#include "mmprof/error.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

using test::text_or_empty;

using config::KeyType;
using nlohmann::json;

TEST(ConfigKeys, DefaultYamlIsWhatTheTableWrites) {
  const auto file = test::source_dir() / "configs/default.yaml";
  const std::string expected = config::default_config_yaml();
  if (text_or_empty(file) != expected) {
    const auto fresh = std::filesystem::temp_directory_path() / "mmprof-default.yaml";
    std::ofstream(fresh) << expected;
    FAIL() << "configs/default.yaml differs from the key table (src/config/config_keys.cpp); the "
              "table's version is in "
           << fresh << ": cp " << fresh << " " << file;
  }
  // And it parses back to the defaults.
  EXPECT_EQ(load_config_tree(file.string()), default_config_tree());
}

TEST(ConfigKeys, EveryChoiceOfEveryKeyResolves) {
  for (const auto& k : config::key_table()) {
    if (k.type != KeyType::choice) continue;
    for (const auto& value : k.choices) {
      json tree = default_config_tree();
      apply_override(tree, std::string(k.key) + "=" + value);
      if (k.key == "step.kind" && value == "gemm") apply_override(tree, "step.ms=1");
      try {
        (void)resolve_config(tree);
      } catch (const UnavailableError&) {
        // Known and mapped, only not possible on this machine.
      } catch (const std::exception& e) {
        ADD_FAILURE() << k.key << "=" << value << ": " << e.what();
      }
    }
  }
}

TEST(ConfigKeys, IntegerRangesAreEnforcedWithTheKeyInTheMessage) {
  for (const auto& k : config::key_table()) {
    if (k.type != KeyType::integer || !k.env.empty()) continue;
    for (const double outside : {k.min - 1, k.max + 1}) {
      json tree = default_config_tree();
      apply_override(tree, fmt::format("{}={}", k.key, static_cast<long long>(outside)));
      try {
        (void)resolve_config(tree);
        ADD_FAILURE() << k.key << "=" << outside << " was accepted";
      } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find(std::string(k.key) + " must be in ["),
                  std::string::npos)
            << e.what();
      }
    }
  }
}

TEST(ConfigKeys, EveryKeyHasOneRowAndASection) {
  std::set<std::string_view> seen;
  for (const auto& k : config::key_table()) {
    EXPECT_TRUE(seen.insert(k.key).second) << k.key << " twice";
    EXPECT_NE(k.key.find('.'), std::string_view::npos) << k.key;
    EXPECT_EQ(config::find_key(k.key), &k);
  }
  EXPECT_EQ(config::find_key("loader.nope"), nullptr);
}

}  // namespace
}  // namespace mmprof
