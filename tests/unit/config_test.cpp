// The configuration: defaults, YAML files, --set overrides, validation and "env" resolution.
#include "mmprof/config.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

#include "config/config_keys.hpp"
#include "mmprof/error.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

// Sets (or unsets) an environment variable for the scope of a test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value == nullptr) {
      ::unsetenv(name);
    } else {
      ::setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Every test runs with RANK and WORLD_SIZE unset unless it sets them itself.
class ConfigTest : public ::testing::Test {
 protected:
  ScopedEnv rank_{"RANK", nullptr};
  ScopedEnv world_size_{"WORLD_SIZE", nullptr};
  test::TempDir dir_;

  std::string write_yaml(const std::string& text) {
    const auto path = dir_.path() / "config.yaml";
    std::ofstream(path) << text;
    return path.string();
  }
};

using test::message_of;

json with_override(const std::string& assignment) {
  json tree = default_config_tree();
  apply_override(tree, assignment);
  return tree;
}

std::string override_error(const std::string& assignment) {
  return message_of<UsageError>([&] { (void)with_override(assignment); });
}

std::string resolve_usage_error(const std::string& assignment) {
  json tree = with_override(assignment);
  return message_of<UsageError>([&] { (void)resolve_config(tree); });
}

TEST_F(ConfigTest, DefaultsResolveToTheDesignValues) {
  json tree = default_config_tree();
  const Config c = resolve_config(tree);
  EXPECT_FALSE(c.data.path.has_value());
  EXPECT_EQ(c.data.layout, Layout::auto_detect);
  EXPECT_EQ(c.loader.batch_size, 32);
  EXPECT_EQ(c.loader.num_workers, 2);
  EXPECT_EQ(c.loader.worker_mode, WorkerMode::process);
  EXPECT_EQ(c.loader.prefetch_factor, 2);
  EXPECT_TRUE(c.loader.persistent_workers);
  EXPECT_TRUE(c.loader.in_order);
  EXPECT_EQ(c.loader.pin_memory, PinMemory::auto_detect);
  EXPECT_TRUE(c.loader.shuffle);
  EXPECT_EQ(c.loader.seed, 0u);
  EXPECT_EQ(c.loader.on_error, OnError::skip);
  EXPECT_EQ(c.image.size, 224);
  EXPECT_EQ(c.image.dtype, ImageDType::float32);
  EXPECT_TRUE(c.image.dct_scaling);
  EXPECT_EQ(c.image.resizer, ImageResizer::mmprof);
  EXPECT_TRUE(c.loader.buffer_reuse);
  EXPECT_FALSE(c.loader.huge_pages);
  EXPECT_FALSE(c.loader.pin_workers);
  EXPECT_FALSE(c.video.reuse_decoder);
  EXPECT_TRUE(c.video.skip_nonref);
  EXPECT_EQ(c.video.frames, 8);
  EXPECT_EQ(c.video.size, 224);
  EXPECT_EQ(c.video.sampling, VideoSampling::uniform);
  EXPECT_EQ(c.video.decoder_threads, 1);
  EXPECT_EQ(c.text.seq_len, 77);
  EXPECT_EQ(c.step.kind, StepKind::none);
  EXPECT_EQ(c.step.ms, 0.0);
  EXPECT_FALSE(c.step.model.has_value());
  EXPECT_EQ(c.step.accum_steps, 1);
  EXPECT_EQ(c.step.device, "cpu");
  EXPECT_EQ(c.phases.warmup_steps, 10);
  EXPECT_EQ(c.phases.steps, 100);
  EXPECT_EQ(c.dist.rank, 0);
  EXPECT_EQ(c.dist.world_size, 1);
  EXPECT_EQ(c.dist.sync, "none");
  // The resolved tree records what "env" became, for the manifest.
  EXPECT_EQ(tree["dist"]["rank"], 0);
  EXPECT_EQ(tree["dist"]["world_size"], 1);
}

TEST_F(ConfigTest, EveryDesignKeyIsInTheDefaultTree) {
  const json tree = default_config_tree();
  const char* const keys[] = {"/data/path",
                              "/data/layout",
                              "/loader/batch_size",
                              "/loader/num_workers",
                              "/loader/worker_mode",
                              "/loader/prefetch_factor",
                              "/loader/persistent_workers",
                              "/loader/in_order",
                              "/loader/pin_memory",
                              "/loader/shuffle",
                              "/loader/seed",
                              "/loader/on_error",
                              "/image/size",
                              "/image/dtype",
                              "/image/dct_scaling",
                              "/video/frames",
                              "/video/size",
                              "/video/sampling",
                              "/video/decoder_threads",
                              "/text/seq_len",
                              "/step/kind",
                              "/step/ms",
                              "/step/model",
                              "/step/accum_steps",
                              "/step/device",
                              "/phases/warmup_steps",
                              "/phases/steps",
                              "/dist/rank",
                              "/dist/world_size",
                              "/dist/sync"};
  for (const char* key : keys)
    EXPECT_TRUE(tree.contains(json::json_pointer(key))) << key;
}

TEST_F(ConfigTest, YamlFileOverridesDefaultsAndKeepsTheRest) {
  const std::string path = write_yaml(
      "data:\n  path: /datasets/laion\n  layout: tar\n"
      "loader:\n  batch_size: 8\n  num_workers: 6\n  worker_mode: thread\n  shuffle: false\n"
      "step:\n  kind: sleep\n  ms: 12.5\n"
      "phases: {warmup_steps: 3, steps: 20}\n");
  json tree = load_config_tree(path);
  const Config c = resolve_config(tree);
  ASSERT_TRUE(c.data.path.has_value());
  EXPECT_EQ(*c.data.path, "/datasets/laion");
  EXPECT_EQ(c.data.layout, Layout::tar);
  EXPECT_EQ(c.loader.batch_size, 8);
  EXPECT_EQ(c.loader.num_workers, 6);
  EXPECT_EQ(c.loader.worker_mode, WorkerMode::thread);
  EXPECT_FALSE(c.loader.shuffle);
  EXPECT_EQ(c.step.kind, StepKind::sleep);
  EXPECT_DOUBLE_EQ(c.step.ms, 12.5);
  EXPECT_EQ(c.phases.warmup_steps, 3);
  EXPECT_EQ(c.phases.steps, 20);
  // Untouched keys keep their defaults.
  EXPECT_EQ(c.loader.prefetch_factor, 2);
  EXPECT_EQ(c.text.seq_len, 77);
  EXPECT_EQ(c.image.size, 224);
}

TEST_F(ConfigTest, EmptyYamlFileGivesDefaults) {
  EXPECT_EQ(load_config_tree(write_yaml("")), default_config_tree());
}

TEST_F(ConfigTest, MissingYamlFileIsAnInputErrorNamingIt) {
  const std::string path = (dir_.path() / "missing.yaml").string();
  const std::string msg = message_of<InputError>([&] { (void)load_config_tree(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST_F(ConfigTest, InvalidYamlIsAUsageErrorNamingTheFile) {
  const std::string path = write_yaml("loader: [unclosed\n");
  const std::string msg = message_of<UsageError>([&] { (void)load_config_tree(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST_F(ConfigTest, UnknownKeyInFileNamesTheFileAndTheKey) {
  const std::string path = write_yaml("loader:\n  batch_size: 8\n  nope: 1\n");
  const std::string msg = message_of<UsageError>([&] { (void)load_config_tree(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("loader.nope"), std::string::npos) << msg;
}

TEST_F(ConfigTest, UnknownSectionInFileNamesTheFileAndTheKey) {
  const std::string path = write_yaml("lodaer:\n  batch_size: 8\n");
  const std::string msg = message_of<UsageError>([&] { (void)load_config_tree(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("lodaer"), std::string::npos) << msg;
}

TEST_F(ConfigTest, WrongTypeInFileNamesTheFileAndTheKey) {
  const std::string path = write_yaml("loader:\n  num_workers: \"two\"\n");
  const std::string msg = message_of<UsageError>([&] { (void)load_config_tree(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("loader.num_workers"), std::string::npos) << msg;
}

TEST_F(ConfigTest, QuotedNumberInFileIsAStringNotAnInteger) {
  const std::string path = write_yaml("loader:\n  num_workers: \"4\"\n");
  const std::string msg = message_of<UsageError>([&] { (void)load_config_tree(path); });
  EXPECT_NE(msg.find("loader.num_workers"), std::string::npos) << msg;
}

TEST_F(ConfigTest, ScalarWhereASectionBelongsIsRejected) {
  const std::string path = write_yaml("loader: 3\n");
  const std::string msg = message_of<UsageError>([&] { (void)load_config_tree(path); });
  EXPECT_NE(msg.find("loader"), std::string::npos) << msg;
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST_F(ConfigTest, OverrideSetsAnInteger) {
  const json tree = with_override("loader.num_workers=4");
  EXPECT_EQ(tree["loader"]["num_workers"], 4);
  EXPECT_TRUE(tree["loader"]["num_workers"].is_number_integer());
}

TEST_F(ConfigTest, OverrideSetsANullableStringPath) {
  json tree = with_override("data.path=/x");
  EXPECT_EQ(tree["data"]["path"], "/x");
  EXPECT_EQ(*resolve_config(tree).data.path, "/x");
}

TEST_F(ConfigTest, OverrideSetsAFloat) {
  json tree = with_override("step.ms=2.5");
  EXPECT_DOUBLE_EQ(tree["step"]["ms"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(resolve_config(tree).step.ms, 2.5);
}

TEST_F(ConfigTest, OverrideStoresAnIntegerIntoAFloatKeyAsAFloat) {
  json tree = with_override("step.ms=3");
  EXPECT_TRUE(tree["step"]["ms"].is_number_float());
  EXPECT_DOUBLE_EQ(resolve_config(tree).step.ms, 3.0);
}

TEST_F(ConfigTest, OverrideSetsABoolean) {
  json tree = with_override("loader.shuffle=false");
  EXPECT_EQ(tree["loader"]["shuffle"], false);
  EXPECT_FALSE(resolve_config(tree).loader.shuffle);
}

TEST_F(ConfigTest, OverridesApplyInOrderLastWins) {
  json tree = default_config_tree();
  apply_override(tree, "loader.batch_size=8");
  apply_override(tree, "loader.batch_size=16");
  EXPECT_EQ(resolve_config(tree).loader.batch_size, 16);
}

TEST_F(ConfigTest, OverrideWithUnknownNestedKeyNamesIt) {
  const std::string msg = override_error("loader.nope=1");
  EXPECT_NE(msg.find("loader.nope"), std::string::npos) << msg;
}

TEST_F(ConfigTest, AMistypedKeyIsAnsweredWithTheNearestKnownOne) {
  EXPECT_NE(override_error("loader.num_worker=2").find("; did you mean 'loader.num_workers'?"),
            std::string::npos)
      << override_error("loader.num_worker=2");
  EXPECT_NE(override_error("lodaer.num_workers=2").find("; did you mean 'loader'?"),
            std::string::npos)
      << override_error("lodaer.num_workers=2");
  // The same check for a config file's keys, and none when nothing is near.
  const std::string msg = message_of<UsageError>(
      [&] { (void)load_config_tree(write_yaml("loader:\n  prefetch_factr: 4\n")); });
  EXPECT_NE(msg.find("did you mean 'loader.prefetch_factor'?"), std::string::npos) << msg;
  EXPECT_EQ(override_error("loader.nope=1").find("did you mean"), std::string::npos);
}

TEST_F(ConfigTest, OverrideWithUnknownSectionNamesIt) {
  const std::string msg = override_error("nope.x=1");
  EXPECT_NE(msg.find("nope"), std::string::npos) << msg;
}

TEST_F(ConfigTest, OverrideWithWrongTypeNamesTheKey) {
  const std::string msg = override_error("loader.num_workers=two");
  EXPECT_NE(msg.find("loader.num_workers"), std::string::npos) << msg;
  EXPECT_NE(msg.find("two"), std::string::npos) << msg;
}

TEST_F(ConfigTest, OverrideOfAWholeSectionIsRejected) {
  const std::string msg = override_error("loader=3");
  EXPECT_NE(msg.find("loader"), std::string::npos) << msg;
}

TEST_F(ConfigTest, MalformedOverridesAreUsageErrors) {
  for (const char* bad : {"=3", "loader", "", "loader..batch_size=3", ".loader=3"}) {
    SCOPED_TRACE(bad);
    json tree = default_config_tree();
    EXPECT_THROW(apply_override(tree, bad), UsageError);
  }
}

TEST_F(ConfigTest, EmptyValueIsAStringAndRejectedForAnInteger) {
  const std::string msg = override_error("loader.batch_size=");
  EXPECT_NE(msg.find("loader.batch_size"), std::string::npos) << msg;
}

TEST_F(ConfigTest, FailedOverrideLeavesTheTreeUsable) {
  json tree = default_config_tree();
  EXPECT_THROW(apply_override(tree, "loader.nope=1"), UsageError);
  EXPECT_EQ(tree, default_config_tree());
}

TEST_F(ConfigTest, WorkerModeEnumListsTheChoices) {
  const std::string msg = resolve_usage_error("loader.worker_mode=fiber");
  EXPECT_NE(msg.find("loader.worker_mode"), std::string::npos) << msg;
  EXPECT_NE(msg.find("process | thread"), std::string::npos) << msg;
  EXPECT_NE(msg.find("fiber"), std::string::npos) << msg;
}

TEST_F(ConfigTest, EveryEnumRejectsAnUnknownValueNamingItsKey) {
  for (const char* key :
       {"data.layout", "loader.worker_mode", "loader.pin_memory", "loader.on_error", "image.dtype",
        "image.resizer", "video.sampling", "step.kind"}) {
    SCOPED_TRACE(key);
    const std::string msg = resolve_usage_error(std::string(key) + "=bogus");
    EXPECT_NE(msg.find(key), std::string::npos) << msg;
  }
}

TEST_F(ConfigTest, EnumValuesMapToTheirEnumerators) {
  json tree = default_config_tree();
  for (const char* set : {"data.layout=files", "loader.worker_mode=thread", "loader.on_error=fail",
                          "image.dtype=uint8", "image.resizer=swscale",
                          "video.sampling=random_window", "step.kind=spin"}) {
    apply_override(tree, set);
  }
  const Config c = resolve_config(tree);
  EXPECT_EQ(c.data.layout, Layout::files);
  EXPECT_EQ(c.loader.worker_mode, WorkerMode::thread);
  EXPECT_EQ(c.loader.on_error, OnError::fail);
  EXPECT_EQ(c.image.dtype, ImageDType::uint8);
  EXPECT_EQ(c.image.resizer, ImageResizer::swscale);
  EXPECT_EQ(c.video.sampling, VideoSampling::random_window);
  EXPECT_EQ(c.step.kind, StepKind::spin);
}

TEST_F(ConfigTest, HugePagesWithoutBufferReuseIsRejectedNamingBoth) {
  json tree = default_config_tree();
  apply_override(tree, "loader.huge_pages=true");
  apply_override(tree, "loader.buffer_reuse=false");
  const std::string msg = message_of<UsageError>([&] { (void)resolve_config(tree); });
  EXPECT_NE(msg.find("loader.huge_pages"), std::string::npos) << msg;
  EXPECT_NE(msg.find("loader.buffer_reuse"), std::string::npos) << msg;
}

// pin_memory is auto | true | false (PyTorch's DataLoader takes a boolean); an unquoted YAML
// boolean must work on the command line and in a file, not only the quoted string "true".
TEST_F(ConfigTest, PinMemoryAcceptsAutoTrueAndFalse) {
  const std::pair<const char*, PinMemory> cases[] = {
      {"true", PinMemory::on}, {"false", PinMemory::off}, {"auto", PinMemory::auto_detect}};
  for (const auto& [value, expected] : cases) {
    SCOPED_TRACE(value);
    json tree = default_config_tree();
    try {
      apply_override(tree, std::string("loader.pin_memory=") + value);
      EXPECT_EQ(resolve_config(tree).loader.pin_memory, expected);
    } catch (const Error& e) {
      ADD_FAILURE() << "--set loader.pin_memory=" << value << " threw: " << e.what();
    }
  }
}

TEST_F(ConfigTest, PinMemoryBooleanInAFileIsAccepted) {
  const std::string path = write_yaml("loader:\n  pin_memory: false\n");
  try {
    json tree = load_config_tree(path);
    EXPECT_EQ(resolve_config(tree).loader.pin_memory, PinMemory::off);
  } catch (const Error& e) {
    ADD_FAILURE() << "threw: " << e.what();
  }
}

TEST_F(ConfigTest, RangesAreCheckedNamingTheKey) {
  for (const char* bad :
       {"loader.batch_size=0", "loader.batch_size=-4", "loader.num_workers=-1",
        "loader.prefetch_factor=0", "image.size=0", "video.frames=0", "text.seq_len=0",
        "step.accum_steps=0", "phases.steps=0", "phases.warmup_steps=-1"}) {
    SCOPED_TRACE(bad);
    const std::string assignment = bad;
    const std::string key = assignment.substr(0, assignment.find('='));
    const std::string msg = resolve_usage_error(assignment);
    EXPECT_NE(msg.find(key), std::string::npos) << msg;
  }
}

TEST_F(ConfigTest, ZeroWorkersAndZeroWarmupAreValid) {
  json tree = default_config_tree();
  apply_override(tree, "loader.num_workers=0");
  apply_override(tree, "phases.warmup_steps=0");
  const Config c = resolve_config(tree);
  EXPECT_EQ(c.loader.num_workers, 0);
  EXPECT_EQ(c.phases.warmup_steps, 0);
}

TEST_F(ConfigTest, NegativeStepTimeIsRejected) {
  const std::string msg = resolve_usage_error("step.ms=-1");
  EXPECT_NE(msg.find("step.ms"), std::string::npos) << msg;
}

// Every number and integer key has a finite range in the table (issue 34: step.ms=1e13 overflowed
// int64 nanoseconds and spun forever, data.remote.timeout_s=1e-9 rounded to libcurl's "no
// timeout", loader.timeout_s=1e30 was an undefined cast): each hostile value is refused naming the
// key and its range.
TEST_F(ConfigTest, EveryNumberIsRangedAndAHostileValueNamesItsKey) {
  for (const config::KeySpec& k : config::key_table()) {
    if (k.type != config::KeyType::number && k.type != config::KeyType::integer) continue;
    EXPECT_TRUE(std::isfinite(k.min) && std::isfinite(k.max)) << k.key;
  }
  const struct {
    const char* set;
    const char* says;
  } cases[] = {
      {"step.ms=1e13", "step.ms must be in [0, 3600000], got 10000000000000"},
      {"step.ms=1e308", "step.ms must be in [0, 3600000], got 1e+308"},
      {"data.remote.timeout_s=1e-9", "data.remote.timeout_s must be in [0.001, 86400], got 1e-09"},
      {"data.remote.timeout_s=1e30", "data.remote.timeout_s must be in [0.001, 86400], got 1e+30"},
      {"loader.timeout_s=1e30", "loader.timeout_s must be in [0.001, 604800], got 1e+30"},
      {"phases.warmup_s=1e300", "phases.warmup_s must be in [0, 86400], got 1e+300"},
      {"dist.timeout_s=0", "dist.timeout_s must be in [0.001, 86400], got 0"},
      {"dist.allreduce_mb=0", "dist.allreduce_mb must be in [0.001, 65536], got 0"},
  };
  for (const auto& c : cases)
    EXPECT_EQ(resolve_usage_error(c.set), c.says) << c.set;
}

// A step time that is not a finite number would make a sleep step never end (inf) or undefined
// (nan); the value is a user typo and must be refused like a negative one.
TEST_F(ConfigTest, NonFiniteStepTimeIsRejected) {
  for (const char* bad : {"step.ms=nan", "step.ms=inf"}) {
    SCOPED_TRACE(bad);
    json tree = default_config_tree();
    try {
      apply_override(tree, bad);
    } catch (const UsageError&) {
      continue;  // refused at --set time: fine
    }
    EXPECT_THROW((void)resolve_config(tree), UsageError);
  }
}

// A directory may be named like a number ("2024"); data.path is a path, so a number-looking value
// is still a path.
TEST_F(ConfigTest, NumericLookingPathIsAcceptedAsAString) {
  json tree = default_config_tree();
  ASSERT_NO_THROW(apply_override(tree, "data.path=2024"));
  const Config c = resolve_config(tree);
  ASSERT_TRUE(c.data.path.has_value());
  EXPECT_EQ(*c.data.path, "2024");
}

TEST_F(ConfigTest, NullResetsTheDataPathToTheDefaultDataset) {
  json tree = with_override("data.path=/x");
  apply_override(tree, "data.path=null");
  EXPECT_FALSE(resolve_config(tree).data.path.has_value());
}

TEST_F(ConfigTest, RankAndWorldSizeComeFromTheEnvironment) {
  ScopedEnv rank("RANK", "2");
  ScopedEnv world("WORLD_SIZE", "4");
  json tree = default_config_tree();
  const Config c = resolve_config(tree);
  EXPECT_EQ(c.dist.rank, 2);
  EXPECT_EQ(c.dist.world_size, 4);
  EXPECT_EQ(tree["dist"]["rank"], 2);
  EXPECT_EQ(tree["dist"]["world_size"], 4);
}

TEST_F(ConfigTest, ExplicitRankAndWorldSizeBeatTheEnvironment) {
  ScopedEnv rank("RANK", "2");
  ScopedEnv world("WORLD_SIZE", "4");
  json tree = default_config_tree();
  apply_override(tree, "dist.rank=1");
  apply_override(tree, "dist.world_size=3");
  const Config c = resolve_config(tree);
  EXPECT_EQ(c.dist.rank, 1);
  EXPECT_EQ(c.dist.world_size, 3);
}

TEST_F(ConfigTest, RankAtOrAboveWorldSizeIsRejected) {
  ScopedEnv rank("RANK", "4");
  ScopedEnv world("WORLD_SIZE", "4");
  json tree = default_config_tree();
  const std::string msg = message_of<UsageError>([&] { (void)resolve_config(tree); });
  EXPECT_NE(msg.find("dist.rank"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dist.world_size"), std::string::npos) << msg;
}

TEST_F(ConfigTest, RankWithoutWorldSizeIsRejected) {
  ScopedEnv rank("RANK", "1");
  json tree = default_config_tree();
  EXPECT_THROW((void)resolve_config(tree), UsageError);
}

TEST_F(ConfigTest, MalformedEnvironmentIsRejectedNamingTheVariable) {
  ScopedEnv world("WORLD_SIZE", "four");
  json tree = default_config_tree();
  const std::string msg = message_of<UsageError>([&] { (void)resolve_config(tree); });
  EXPECT_NE(msg.find("WORLD_SIZE"), std::string::npos) << msg;
}

TEST_F(ConfigTest, NegativeRankEnvironmentIsRejected) {
  ScopedEnv rank("RANK", "-1");
  ScopedEnv world("WORLD_SIZE", "2");
  json tree = default_config_tree();
  EXPECT_THROW((void)resolve_config(tree), UsageError);
}

TEST_F(ConfigTest, NegativeRankOverrideIsRejected) {
  json tree = default_config_tree();
  apply_override(tree, "dist.world_size=2");
  try {
    apply_override(tree, "dist.rank=-1");
  } catch (const UsageError&) {
    return;  // refused at --set time: fine
  }
  EXPECT_THROW((void)resolve_config(tree), UsageError);
}

TEST_F(ConfigTest, ZeroWorldSizeIsRejected) {
  json tree = with_override("dist.world_size=0");
  EXPECT_THROW((void)resolve_config(tree), UsageError);
}

TEST_F(ConfigTest, SyncModesResolveWithTheirBufferAndTimeout) {
  for (const char* set : {"dist.sync=allreduce", "dist.sync=barrier"}) {
    SCOPED_TRACE(set);
    json tree = with_override(set);
    const Config c = resolve_config(tree);
    EXPECT_EQ(c.dist.sync, std::string(set).substr(10));
    EXPECT_DOUBLE_EQ(c.dist.allreduce_mb, 25);
    EXPECT_DOUBLE_EQ(c.dist.timeout_s, 120);
  }
  EXPECT_NE(resolve_usage_error("dist.allreduce_mb=0").find("dist.allreduce_mb"),
            std::string::npos);
  EXPECT_NE(resolve_usage_error("dist.timeout_s=-1").find("dist.timeout_s"), std::string::npos);
}

// DESIGN.md: dist.sync is none | barrier | allreduce. A typo is a usage error listing the choices,
// not "unavailable" (which tells the user to wait for a feature that will never exist).
TEST_F(ConfigTest, UnknownSyncModeIsAUsageErrorListingTheChoices) {
  const std::string msg = resolve_usage_error("dist.sync=alreduce");
  EXPECT_NE(msg.find("dist.sync"), std::string::npos) << msg;
  EXPECT_NE(msg.find("allreduce"), std::string::npos) << msg;
}

TEST_F(ConfigTest, StepKindNamesRoundTrip) {
  EXPECT_STREQ(to_string(StepKind::none), "none");
  EXPECT_STREQ(to_string(StepKind::sleep), "sleep");
  EXPECT_STREQ(to_string(StepKind::spin), "spin");
  EXPECT_STREQ(to_string(StepKind::torch), "torch");
}

}  // namespace
}  // namespace mmprof
