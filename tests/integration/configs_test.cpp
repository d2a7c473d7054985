// The checked-in configurations: every file in configs/ loads, and configs/default.yaml says
// exactly what the built-in defaults are (so the two cannot drift apart).
#include <gtest/gtest.h>

#include <filesystem>

#include "mmprof/config.hpp"
#include "support/test_support.hpp"

namespace mmprof::test {
namespace {

std::filesystem::path configs_dir() {
  return source_dir() / "configs";
}

TEST(Configs, DefaultYamlEqualsTheBuiltInDefaults) {
  EXPECT_EQ(load_config_tree((configs_dir() / "default.yaml").string()), default_config_tree());
}

TEST(Configs, EveryCheckedInConfigLoadsAndResolves) {
  int count = 0;
  for (const auto& e : std::filesystem::directory_iterator(configs_dir())) {
    if (e.path().extension() != ".yaml") continue;
    SCOPED_TRACE(e.path().string());
    auto tree = load_config_tree(e.path().string());
    EXPECT_NO_THROW(resolve_config(tree));
    ++count;
  }
  EXPECT_GE(count, 2);
}

}  // namespace
}  // namespace mmprof::test
