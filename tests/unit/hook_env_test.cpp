// What a user's job is started with: --set loader.* as DataLoader arguments, and the hook's
// environment.
#include "external/hook_env.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "mmprof/config.hpp"
#include "mmprof/error.hpp"

namespace mmprof::external {
namespace {

using nlohmann::json;

json overrides_of(const std::vector<std::string>& sets) {
  json tree = default_config_tree();
  for (const auto& s : sets)
    apply_override(tree, s);
  return dataloader_overrides(tree, sets);
}

TEST(HookEnv, LoaderSetsBecomeTypedDataLoaderArguments) {
  EXPECT_TRUE(overrides_of({}).is_null());
  const json o = overrides_of({"loader.num_workers=4", "loader.pin_memory=false",
                               "loader.persistent_workers=true", "loader.timeout_s=30",
                               "metrics.interval_ms=50", "phases.steps=20"});
  EXPECT_EQ(o, json({{"num_workers", 4},
                     {"pin_memory", false},
                     {"persistent_workers", true},
                     {"timeout", 30.0}}));
  // auto leaves the job's own pin_memory alone.
  EXPECT_TRUE(overrides_of({"loader.pin_memory=auto"}).is_null());
}

TEST(HookEnv, MmprofOnlyKeysAreRefusedWithWhatADataLoaderTakes) {
  try {
    overrides_of({"loader.worker_mode=thread"});
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("loader.worker_mode: a PyTorch DataLoader has no such argument"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("num_workers"), std::string::npos) << m;
  }
  EXPECT_THROW(overrides_of({"image.size=128"}), UsageError);
}

TEST(HookEnv, TheJobGetsTheHookFirstOnPythonPathAndItsSettings) {
  HookSettings h;
  h.dir = "/tmp/run/hook";
  h.max_batches = 60;
  h.stop_file = "/tmp/run/hook/stop";
  h.loader = "1";
  h.overrides = {{"num_workers", 2}};
  std::vector<std::string> unavailable;
  const auto env = job_environment(h, std::nullopt, unavailable);
  const auto value = [&](const std::string& k) {
    const auto it =
        std::find_if(env.begin(), env.end(), [&](const auto& kv) { return kv.first == k; });
    return it == env.end() ? std::string("<unset>") : it->second;
  };
  ASSERT_TRUE(hook_python_dir().has_value());  // the source tree's src/external/python
  EXPECT_EQ(value("PYTHONPATH").rfind(hook_python_dir()->string(), 0), 0u) << value("PYTHONPATH");
  EXPECT_TRUE(std::filesystem::exists(*hook_python_dir() / "sitecustomize.py"));
  EXPECT_EQ(value("MMPROF_HOOK_DIR"), "/tmp/run/hook");
  EXPECT_EQ(value("MMPROF_HOOK_MAX_BATCHES"), "60");
  EXPECT_EQ(value("MMPROF_HOOK_STOP_FILE"), "/tmp/run/hook/stop");
  EXPECT_EQ(value("MMPROF_HOOK_LOADER"), "1");
  EXPECT_EQ(json::parse(value("MMPROF_HOOK_OVERRIDES")), json({{"num_workers", 2}}));
  EXPECT_EQ(value("CUDA_INJECTION64_PATH"), "<unset>");  // no GPU tracing asked for
  EXPECT_TRUE(unavailable.empty());
}

}  // namespace
}  // namespace mmprof::external
