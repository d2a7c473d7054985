// Where a run's bytes came from (summary.json "locality"), through the binary: data.cache=cold
// empties the page cache of the dataset before the loader phase, so the kernel's read_bytes of
// the run's processes in the window is about what the loader read; warm fills it first, so
// nothing comes from the device. Cross-checked against the files' sizes on disk and the loader's
// own byte count.
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class LocalityCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::TempDir>();
    const auto r = test::run_mmprof("gen --quiet --out " + test::shell_quote(dir_->path() / "ds") +
                                    " --images 96 --videos 0 --seed 9");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  static void TearDownTestSuite() { dir_.reset(); }

  static fs::path data() { return dir_->path() / "ds" / "files"; }

  // One worker, one batch in flight, no warm-up: the window reads what its 8 batches hold, and at
  // most one batch more (prefetched when the window closes).
  static json run(const std::string& cache) {
    const fs::path out = dir_->path() / ("run-" + cache);
    const auto r = test::run_mmprof(
        "baseline --quiet --data " + test::shell_quote(data()) + " --set data.cache=" + cache +
        " --set loader.num_workers=1 --set loader.prefetch_factor=1 --set loader.batch_size=8"
        " --set phases.steps=8 --set phases.warmup_steps=0 --set phases.warmup_s=0 --out " +
        test::shell_quote(out));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return test::read_json(out / "summary.json");
  }

  static bool on_tmpfs() {
    struct statfs st {};
    return statfs(data().c_str(), &st) == 0 && st.f_type == TMPFS_MAGIC;
  }

  static std::unique_ptr<test::TempDir> dir_;
};

std::unique_ptr<test::TempDir> LocalityCli::dir_;

TEST_F(LocalityCli, ColdReadsFromTheDeviceWhatTheLoaderRead) {
  const json s = run("cold");
  const json& l = s.at("locality");
  EXPECT_EQ(l["cache"], "cold");
  uint64_t on_disk = 0;
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(data())) {
    on_disk += fs::file_size(e.path());
    ++files;
  }
  EXPECT_EQ(l["dataset_bytes"].get<uint64_t>(), on_disk);
  EXPECT_EQ(l["dataset_files"].get<size_t>(), files);
  EXPECT_EQ(l["fits_in_ram"], true);
  const json& p = l["phases"]["pipeline"];
  EXPECT_EQ(p["prepared"], "evicted");
  const auto loader = p["loader_bytes"].get<double>();
  EXPECT_EQ(loader, s["phases"]["pipeline"]["bytes"].get<double>());
  EXPECT_LT(loader, static_cast<double>(on_disk));  // 64 of 96 samples: less than an epoch
  if (on_tmpfs()) {
    EXPECT_GT(p["pages_left_resident"].get<uint64_t>(), 0u);  // said, not hidden
    MMPROF_SKIP_WITHOUT("evictable-tmp", data() << " is on tmpfs: its pages cannot be evicted");
  }
  EXPECT_EQ(p["pages_left_resident"], 0);
  EXPECT_EQ(p["resident_before"], 0.0);
  // The device delivered what the loader read: whole pages, plus at most one batch prefetched
  // past the window's end.
  const auto device = p["device_bytes"].get<double>();
  EXPECT_GE(device, 0.95 * loader);
  EXPECT_LE(device, 1.35 * loader);
  EXPECT_EQ(p["page_cache_fraction"], 0.0);
  EXPECT_GT(p["resident_after"].get<double>(), 0.5);  // what was read is cached now
}

TEST_F(LocalityCli, WarmReadsNothingFromTheDevice) {
  const json s = run("warm");
  const json& p = s.at("locality").at("phases").at("pipeline");
  EXPECT_EQ(p["prepared"], "read");
  EXPECT_EQ(p["resident_before"], 1.0);
  EXPECT_EQ(p["resident_at_window"], 1.0);
  // device_bytes is every storage read of the run's processes in the window: on a host short of
  // page cache (a build beside the suite under stress-ng) the kernel drops and reads back pages
  // of the binary and its libraries too, 144 KiB once against 6.7 MB of samples. The dataset
  // itself was resident (above): at most 2 % of the loader's bytes and 256 KiB of those.
  const double loader = p["loader_bytes"].get<double>(), slack = 0.02 * loader + 256 * 1024;
  EXPECT_LE(p["device_bytes"].get<double>(), slack);
  EXPECT_GE(p["page_cache_fraction"].get<double>(), 1 - slack / loader);
}

TEST_F(LocalityCli, AnUnknownCacheRegimeIsAUsageError) {
  const auto r = test::run_mmprof("baseline --quiet --data " + test::shell_quote(data()) +
                                  " --set data.cache=lukewarm --out " +
                                  test::shell_quote(dir_->path() / "bad"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("data.cache"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace mmprof
