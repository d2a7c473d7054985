// `mmprof shard` through the binary: a files dataset written as tar shards balanced by bytes (or
// by count), deterministic, read back by mmprof itself (the loader runs on them, the index
// matches the shards' bytes), written whole or not at all; a re-shard of shards; bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gen/reshard.hpp"
#include "gen/tar_writer.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ShardCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::TempDir>();
    const auto r = test::run_mmprof("gen --quiet --out " + test::shell_quote(dir_->path() / "ds") +
                                    " --images 60 --videos 2 --video-max-s 1 --seed 4");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  static void TearDownTestSuite() { dir_.reset(); }
  static fs::path path(const std::string& name) { return dir_->path() / name; }
  static test::CommandResult shard(const fs::path& src, const std::string& out,
                                   const std::string& extra) {
    return test::run_mmprof("shard " + test::shell_quote(src) + " --out " +
                            test::shell_quote(path(out)) + " --json " + extra);
  }
  static std::unique_ptr<test::TempDir> dir_;
};

std::unique_ptr<test::TempDir> ShardCli::dir_;

TEST_F(ShardCli, BalancedByBytesReadBackByTheLoaderAndDeterministic) {
  const fs::path src = path("ds") / "files";
  auto r = shard(src, "s1", "--shard-mb 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json m = json::parse(r.output);
  EXPECT_EQ(m, test::read_json(path("s1") / "shards.json"));
  EXPECT_EQ(m["samples"], 62);
  EXPECT_EQ(m["source_rejected"], 0);
  // Every shard within one sample of the mean (the largest sample bounds the imbalance).
  uint64_t largest_sample = 0, source_bytes = 0;
  for (const auto& e : fs::directory_iterator(src)) {
    largest_sample = std::max<uint64_t>(largest_sample, fs::file_size(e.path()));
    source_bytes += fs::file_size(e.path());
  }
  const double mean = m["bytes"].get<double>() / static_cast<double>(m["shards"].size());
  int samples = 0;
  for (const auto& s : m["shards"]) {
    EXPECT_EQ(s["bytes"].get<uint64_t>(), fs::file_size(path("s1") / s["name"].get<std::string>()));
    EXPECT_LE(std::abs(s["bytes"].get<double>() - mean),
              2.0 * static_cast<double>(largest_sample + 2048))
        << s;
    samples += s["samples"].get<int>();
  }
  EXPECT_EQ(samples, 62);
  EXPECT_GE(m["bytes"].get<uint64_t>(), source_bytes);  // plus headers and padding
  // index.csv: one row per sample, whose media bytes are the source file's, byte for byte.
  std::ifstream index(path("s1") / "index.csv");
  std::string line;
  std::getline(index, line);
  int rows = 0;
  while (std::getline(index, line)) {
    ++rows;
    if (rows != 7) continue;  // one sample checked byte for byte
    const auto f = [&](int i) {
      size_t a = 0;
      for (int k = 0; k < i; ++k)
        a = line.find(',', a) + 1;
      return line.substr(a, line.find(',', a) - a);
    };
    const auto shard_bytes = test::read_bytes(path("s1") / f(1));
    const std::vector<uint8_t> media(shard_bytes.begin() + std::stoll(f(2)),
                                     shard_bytes.begin() + std::stoll(f(2)) + std::stoll(f(3)));
    bool found = false;
    for (const auto& e : fs::directory_iterator(src)) {
      found |= e.path().stem() == f(0) && e.path().extension() != ".txt" &&
               test::read_bytes(e.path()) == media;
    }
    EXPECT_TRUE(found) << line;
  }
  EXPECT_EQ(rows, 62);
  // The loader reads them (tar layout) with nothing refused.
  r = test::run_mmprof("baseline --quiet --data " + test::shell_quote(path("s1")) +
                       " --set data.layout=tar --steps 2 --warmup-steps 0 --out " +
                       test::shell_quote(path("run")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(test::read_json(path("run") / "manifest.json")["data"]["samples"], 62);
  EXPECT_EQ(test::read_text(path("run") / "errors.jsonl"), "");  // shards.json, index.csv: known
  // Deterministic: the same command gives the same bytes.
  ASSERT_EQ(shard(src, "s2", "--shard-mb 1").exit_code, 0);
  for (const auto& s : m["shards"]) {
    const std::string name = s["name"];
    EXPECT_EQ(test::read_bytes(path("s1") / name), test::read_bytes(path("s2") / name)) << name;
  }
}

TEST_F(ShardCli, ByCountAndReshardingShards) {
  ASSERT_EQ(shard(path("ds") / "files", "s3", "--shard-mb 1").exit_code, 0);
  const auto r = shard(path("s3"), "s4", "--by-count --shard-mb 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json m = json::parse(r.output);
  EXPECT_EQ(m["source_layout"], "tar");
  EXPECT_EQ(m["balance"], "count");
  int lo = 1 << 30, hi = 0;
  for (const auto& s : m["shards"]) {
    lo = std::min(lo, s["samples"].get<int>());
    hi = std::max(hi, s["samples"].get<int>());
  }
  EXPECT_LE(hi - lo, 1);  // equal sample counts, give or take one
}

TEST_F(ShardCli, AnExistingOutNeedsForceAndBadInputExitsThree) {
  ASSERT_EQ(shard(path("ds") / "files", "s5", "").exit_code, 0);
  auto r = shard(path("ds") / "files", "s5", "");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--force"), std::string::npos) << r.output;
  r = shard(path("ds") / "files", "s5", "--force --by-count");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(test::read_json(path("s5") / "shards.json")["balance"], "count");
  EXPECT_FALSE(fs::exists(path(".s5.partial")));
  EXPECT_FALSE(fs::exists(path(".s5.old")));
  r = shard(path("nothing-here"), "s6", "");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("nothing-here"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("s6")));
  r = shard(path("ds") / "files", "s7", "--by-count --by-size");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// Names ustar cannot hold (a key of 180 bytes, one of 250 under a folder, a non-ASCII one) are
// sharded, as baseline reads them, with a pax header each; one that a '/' splits into ustar's
// prefix and name is not. The shard's size is the planned bytes (its file size, independently),
// and every sample reads back and decodes.
TEST_F(ShardCli, NamesUstarCannotHoldAreShardedAndReadBack) {
  const fs::path src = path("names");
  const fs::path jpg = path("ds") / "files" / "000000.jpg";
  const std::vector<std::string> keys = {
      "short", std::string(180, 'a'), "deep/" + std::string(250, 'c'),
      std::string(60, 'p') + "/" + std::string(80, 'b'), "caf\xc3\xa9-\xc3\xbc"};
  uint64_t planned = 1024;  // the two zero blocks that end a tar
  for (const auto& key : keys) {
    fs::create_directories((src / key).parent_path());
    fs::copy_file(jpg, src / (key + ".jpg"));
    test::write_text(src / (key + ".txt"), "a caption");
    planned += gen::tar_member_bytes(key + ".jpg", fs::file_size(jpg)) +
               gen::tar_member_bytes(key + ".txt", 9);
  }
  EXPECT_EQ(gen::tar_member_bytes(std::string(60, 'p') + "/" + std::string(80, 'b') + ".jpg", 1),
            1024u);
  EXPECT_EQ(gen::tar_member_bytes(std::string(180, 'a') + ".jpg", 1), 2048u);
  const auto r = shard(src, "names-shards", "");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json m = json::parse(r.output);
  ASSERT_EQ(m["shards"].size(), 1u);
  EXPECT_EQ(m["source_rejected"], 0);
  EXPECT_EQ(fs::file_size(path("names-shards") / "shard-000000.tar"), planned);
  const std::string index = test::read_text(path("names-shards") / "index.csv");
  for (const auto& key : keys)
    EXPECT_NE(index.find("\n" + key + ",shard-000000.tar,"), std::string::npos) << key;
  const auto inspect =
      test::run_mmprof("inspect --json --data " + test::shell_quote(path("names-shards")));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  const json mix = json::parse(inspect.output)["data_mix"];
  EXPECT_EQ(mix["counts"]["samples"], keys.size());
  EXPECT_EQ(mix["errors"]["count"], 0) << mix["errors"];
}

// A full disk under --out stops with exit 6 naming the shard and why, and leaves nothing: no
// partial folder, no --out.
TEST_F(ShardCli, AFullDiskExitsSixAndLeavesNothing) {
  if (test::run_command("unshare -m true").exit_code != 0) {
    MMPROF_SKIP_WITHOUT("mountns", "no private mount namespace here (needs CAP_SYS_ADMIN)");
  }
  const fs::path script = path("full-disk.sh");
  test::write_text(script, fmt::format("d=$(mktemp -d) && mount -t tmpfs -o size=256k tmpfs "
                                       "\"$d\" || exit 99\n{} shard {} --out \"$d/s\" "
                                       "</dev/null\necho \"exit $?\"\nls -A \"$d\" | wc -l\n",
                                       test::shell_quote(test::mmprof_bin()),
                                       test::shell_quote(path("ds") / "files")));
  const auto r = test::run_command("unshare -m sh " + test::shell_quote(script));
  EXPECT_NE(r.output.find("exit 6"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cannot write shard"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n0\n"), std::string::npos) << r.output;  // nothing left in the folder
}

// The plan itself: by bytes each shard is within one sample of total / n; by count, within one
// sample of samples / n; n from the asked size.
TEST(ShardPlan, BalancesBytesOrCounts) {
  const std::vector<uint64_t> bytes = {100, 900, 100, 100, 500, 500, 100, 700, 300, 200};
  const auto by_bytes = gen::plan_shards(bytes, 1000, gen::ShardBalance::bytes);  // 3.5 -> 4
  // Middles at 50, 550 | 1050, 1150, 1450 | 1950, 2250 | 2650, 3150, 3400 of 3500 bytes.
  EXPECT_EQ(by_bytes, (std::vector<size_t>{0, 0, 1, 1, 1, 2, 2, 3, 3, 3}));
  std::vector<double> sums(4);
  for (size_t i = 0; i < bytes.size(); ++i)
    sums.at(by_bytes[i]) += static_cast<double>(bytes[i]);
  for (const double s : sums)
    EXPECT_LE(std::abs(s - 875.0), 900.0);  // half a sample at each end at most
  const auto by_count = gen::plan_shards(bytes, 1000, gen::ShardBalance::count);
  EXPECT_EQ(by_count, (std::vector<size_t>{0, 0, 0, 1, 1, 2, 2, 2, 3, 3}));
  EXPECT_EQ(gen::plan_shards(bytes, 1 << 30, gen::ShardBalance::bytes),
            std::vector<size_t>(10, 0));  // one shard when it all fits
  EXPECT_TRUE(gen::plan_shards({}, 1000, gen::ShardBalance::bytes).empty());
}

}  // namespace
}  // namespace mmprof
