// Reliability of the loader with real worker processes: the bad-input corpus is skipped sample by
// sample with key and stage; a worker killed, crashing or hanging is detected in bounded time,
// named with its pid and the sample it held, and replaced (its batches retried, a repeat crasher
// quarantined) or fails the run, as loader.on_worker_failure says.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <map>
#include <string>

#include "integration/loader_fixture.hpp"
#include "loader/memory_plan.hpp"
#include "mmprof/error.hpp"
#include "support/bad_corpus.hpp"
#include "support/test_support.hpp"

namespace mmprof::test {
namespace {

namespace fs = std::filesystem;

const BadCorpus& corpus() {
  static TempDir dir;
  static const BadCorpus c = make_bad_corpus(loader_fixture().root / "files", dir.path());
  return c;
}

// Sets a test hook variable for the workers of loaders made while it lives.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

struct EpochResult {
  std::map<std::string, SampleFailure> failed;
  size_t delivered = 0;
};

EpochResult one_epoch(Loader& loader) {
  EpochResult r;
  for (size_t b = 0; b < loader.batches_per_epoch(); ++b) {
    const Batch& batch = loader.next();
    r.delivered += batch.size;
    for (const auto& f : batch.failures)
      r.failed[f.key] = f;
  }
  return r;
}

TEST(BadInput, EveryDamagedFileIsSkippedWithItsKeyAndStage) {
  const Dataset ds = Dataset::open(corpus().files, Layout::files);
  Config c = small_config();
  c.text.max_bytes = 1 << 20;
  Loader loader(c, ds);
  const EpochResult r = one_epoch(loader);
  std::map<std::string, std::string> stages;
  for (const auto& [key, f] : r.failed)
    stages[key] = f.stage;
  EXPECT_EQ(stages, corpus().files_bad);
  EXPECT_EQ(r.delivered, corpus().files_good);
  EXPECT_NE(r.failed.at("bad-huge-header-jpeg").message.find("image.max_pixels"),
            std::string::npos);
  EXPECT_NE(r.failed.at("bad-caption-not-utf8")
                .message.find("not valid UTF-8 (byte 0xE9 at "
                              "offset 3)"),
            std::string::npos);
  EXPECT_NE(r.failed.at("bad-caption-huge").message.find("3145728 bytes, above text.max_bytes"),
            std::string::npos);
  EXPECT_NE(r.failed.at("bad-zero-bytes").message.find("0 bytes"), std::string::npos);
}

TEST(BadInput, UnsafeTarMembersAndACutShardAreRefusedAtIndexTime) {
  const Dataset ds = Dataset::open(corpus().shards, Layout::tar);
  std::map<std::string, std::string> rejected;
  for (const auto& r : ds.rejected()) {
    rejected[r.key] = "index";
    EXPECT_FALSE(r.reason.empty()) << r.key;
    EXPECT_EQ(r.file.rfind("shard-", 0), 0u) << r.file;
  }
  EXPECT_EQ(rejected, corpus().shards_bad);
  ASSERT_EQ(ds.size(), corpus().shards_good);
  for (const auto& s : ds.samples())
    EXPECT_EQ(s.key.rfind("s-good-", 0), 0u) << s.key;
  Loader loader(small_config(), ds);
  const EpochResult r = one_epoch(loader);
  EXPECT_TRUE(r.failed.empty());
  EXPECT_EQ(r.delivered, corpus().shards_good);
}

// Every file under --data is a sample, a caption, or listed: names with extra dots keep their
// media, a second media file of a key is refused naming both, the rest is ignored with a reason.
TEST(BadInput, EveryFileIsASampleACaptionOrListed) {
  TempDir dir;
  const auto jpeg = read_bytes(loader_fixture().root / "files" / "000000.jpg");
  for (const char* name : {"my.photo.jpg", "x.jpg", "x.png", "sub/deep.name.v2.jpg"}) {
    fs::create_directories((dir.path() / name).parent_path());
    write_bytes(dir.path() / name, jpeg);
  }
  for (const char* name : {"my.photo.txt", "orphan.txt", "clip.ogv", ".DS_Store", "notes"})
    write_bytes(dir.path() / name, {'a'});
  const Dataset ds = Dataset::open(dir.path(), Layout::files);
  std::vector<std::string> keys;
  for (const auto& s : ds.samples())
    keys.push_back(s.key + "." + s.ext + (s.has_caption ? "+txt" : ""));
  EXPECT_EQ(keys, (std::vector<std::string>{"my.photo.jpg+txt", "sub/deep.name.v2.jpg", "x.jpg"}));
  ASSERT_EQ(ds.rejected().size(), 1u);
  EXPECT_EQ(ds.rejected()[0].file, "x.png");
  EXPECT_NE(ds.rejected()[0].reason.find("x.png has the key 'x' of x.jpg"), std::string::npos)
      << ds.rejected()[0].reason;
  std::map<std::string, std::string> ignored;
  for (const auto& f : ds.ignored())
    ignored[f.file] = f.reason;
  ASSERT_EQ(ignored.size(), 4u);
  EXPECT_NE(ignored["clip.ogv"].find("extension .ogv is not a format mmprof reads (it reads: jpg"),
            std::string::npos)
      << ignored["clip.ogv"];
  EXPECT_NE(ignored[".DS_Store"].find("no extension"), std::string::npos);
  EXPECT_NE(ignored["notes"].find("no extension"), std::string::npos);
  EXPECT_EQ(ignored["orphan.txt"], "a caption with no image or video of key 'orphan'");
  EXPECT_EQ(ds.summary()["ignored_files"], 4);
}

// A tar-layout dataset reads only its top-level shards: any other file is listed, as is a member
// that is neither media nor a caption.
TEST(BadInput, BesideTarShardsOtherFilesAreListed) {
  TempDir dir;
  std::vector<uint8_t> tar;
  append_tar_member(tar, "a.jpg", read_bytes(loader_fixture().root / "files" / "000000.jpg"));
  append_tar_member(tar, "a.json", {'{', '}'});
  tar.resize(tar.size() + 1024, 0);  // end-of-archive blocks
  write_bytes(dir.path() / "shard-0.tar", tar);
  write_bytes(dir.path() / "README", {'x'});
  const Dataset ds = Dataset::open(dir.path(), Layout::tar);
  ASSERT_EQ(ds.size(), 1u);
  std::map<std::string, std::string> ignored;
  for (const auto& f : ds.ignored())
    ignored[f.file] = f.reason;
  EXPECT_EQ(ignored.size(), 2u);
  EXPECT_NE(ignored["shard-0.tar:a.json"].find("extension .json"), std::string::npos);
  EXPECT_EQ(ignored["README"], "not a top-level .tar shard of a tar-layout dataset");
}

// A file above its modality's max_bytes fails at stage read, named with its size and the key,
// before a byte of it is read (before: a 3 GiB file was read whole into each worker). The image
// here is a 300 MiB sparse file: refused, it costs nothing.
TEST(BadInput, AFileAboveMaxBytesIsRefusedBeforeItIsRead) {
  TempDir dir;
  const fs::path files = loader_fixture().root / "files";
  write_bytes(dir.path() / "a.jpg", read_bytes(files / "000000.jpg"));
  fs::path mp4;
  for (const auto& e : fs::directory_iterator(files))
    if (e.path().extension() == ".mp4") mp4 = e.path();
  ASSERT_FALSE(mp4.empty());
  fs::copy_file(mp4, dir.path() / "clip.mp4");
  write_bytes(dir.path() / "huge.jpg", {});
  fs::resize_file(dir.path() / "huge.jpg", 300ull << 20);
  const Dataset ds = Dataset::open(dir.path(), Layout::files);
  Config c = small_config();
  c.video.max_bytes = 1000;
  Loader loader(c, ds);
  const EpochResult r = one_epoch(loader);
  EXPECT_EQ(r.delivered, 1u);
  ASSERT_EQ(r.failed.size(), 2u);
  EXPECT_EQ(r.failed.at("huge").stage, "read");
  EXPECT_EQ(r.failed.at("huge").message,
            "huge.jpg is 314572800 bytes (300.0 MiB), above image.max_bytes=268435456: refused "
            "before it is read");
  EXPECT_NE(r.failed.at("clip").message.find("above video.max_bytes=1000: refused before it is "
                                             "read"),
            std::string::npos)
      << r.failed.at("clip").message;
}

TEST(WorkerFaults, AKilledWorkerIsReplacedAndTheSequenceIsUnchanged) {
  const Dataset ds = files_dataset();
  Config reference = small_config();
  reference.loader.num_workers = 0;
  const Delivered expected = drain(reference, ds, 2);

  Config c = small_config();
  Loader loader(c, ds);
  Delivered got;
  const size_t batches = 2 * loader.batches_per_epoch();
  for (size_t b = 0; b < batches; ++b) {
    const Batch& batch = loader.next();
    for (const auto& s : batch.samples)
      got.indices.push_back(s.index);
    got.digests.push_back(batch.digest);
    if (b == 0) {
      ASSERT_EQ(kill(loader.stats().worker_pids.at(1), SIGKILL), 0);
    }
  }
  EXPECT_EQ(got.indices, expected.indices);
  EXPECT_EQ(got.digests, expected.digests);
  EXPECT_EQ(loader.stats().respawns, 1);
  ASSERT_EQ(loader.stats().worker_faults.size(), 1u);
  EXPECT_NE(loader.stats().worker_faults[0].find("signal 9"), std::string::npos);
  EXPECT_EQ(loader.stats().worker_pids.size(), 2u);
}

TEST(WorkerFaults, ASampleThatCrashesItsWorkerTwiceIsQuarantined) {
  const Dataset ds = files_dataset();
  const std::string victim = ds.samples()[7].key;
  ScopedEnv hook("MMPROF_TEST_CRASH_AT", victim);
  Config c = small_config();
  Loader loader(c, ds);
  const EpochResult first = one_epoch(loader);
  ASSERT_EQ(first.failed.size(), 1u);
  const SampleFailure& f = first.failed.at(victim);
  EXPECT_EQ(f.stage, "worker");
  EXPECT_NE(f.message.find("signal 11"), std::string::npos) << f.message;
  EXPECT_EQ(first.delivered, ds.size() - 1);
  // Twice, plus once more if the next epoch's copy of the sample was already dispatched when it
  // was quarantined (prefetch runs across the epoch boundary).
  const int respawns = loader.stats().respawns;
  EXPECT_GE(respawns, 2);
  EXPECT_LE(respawns, 3);
  // Later epochs skip it without taking down another worker.
  const EpochResult second = one_epoch(loader);
  EXPECT_EQ(second.failed.count(victim), 1u);
  EXPECT_EQ(loader.stats().respawns, respawns);
}

TEST(WorkerFaults, PolicyFailNamesTheWorkerItsPidAndTheSample) {
  const Dataset ds = files_dataset();
  const std::string victim = ds.samples()[3].key;
  ScopedEnv hook("MMPROF_TEST_CRASH_AT", victim);
  Config c = small_config();
  c.loader.on_worker_failure = WorkerFailure::fail;
  Loader loader(c, ds);
  try {
    one_epoch(loader);
    FAIL() << "a crashed worker went unnoticed";
  } catch (const RunError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("loader worker "), std::string::npos) << what;
    EXPECT_NE(what.find("(pid "), std::string::npos) << what;
    EXPECT_NE(what.find("signal 11"), std::string::npos) << what;
    EXPECT_NE(what.find("while processing sample " + victim), std::string::npos) << what;
    EXPECT_NE(what.find("loader.on_worker_failure=fail"), std::string::npos) << what;
  }
}

TEST(WorkerFaults, RespawnsAreBounded) {
  const Dataset ds = files_dataset();
  ScopedEnv hook("MMPROF_TEST_CRASH_AT", ds.samples()[2].key);
  Config c = small_config();
  c.loader.max_respawns = 1;
  Loader loader(c, ds);
  try {
    one_epoch(loader);
    FAIL() << "more respawns than loader.max_respawns";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("loader.max_respawns=1"), std::string::npos) << e.what();
  }
}

TEST(WorkerFaults, AHungWorkerIsKilledAfterTheTimeoutAndReplaced) {
  const Dataset ds = files_dataset();
  const std::string victim = ds.samples()[5].key;
  ScopedEnv hook("MMPROF_TEST_HANG_AT", victim);
  Config c = small_config();
  c.loader.timeout_s = 5;  // far above a healthy worker's batch on a loaded (or TSan) machine
  const auto t0 = std::chrono::steady_clock::now();
  Loader loader(c, ds);
  const EpochResult r = one_epoch(loader);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.failed.count(victim), 1u);
  EXPECT_EQ(r.failed.at(victim).stage, "worker");
  EXPECT_EQ(r.delivered, ds.size() - 1);
  // Twice, or three times when the next epoch's copy was already dispatched (see above).
  EXPECT_GE(loader.stats().hung_workers, 2);
  EXPECT_LE(loader.stats().hung_workers, 3);
  EXPECT_EQ(loader.stats().respawns, loader.stats().hung_workers);
  EXPECT_LT(s, 120.0) << "two 5 s timeouts took " << s << " s";
  ASSERT_FALSE(loader.stats().worker_faults.empty());
  EXPECT_NE(loader.stats().worker_faults[0].find("loader.timeout_s=5 s"), std::string::npos)
      << loader.stats().worker_faults[0];
}

TEST(WorkerFaults, AHungWorkerThreadFailsTheRunInsteadOfHangingIt) {
  const Dataset ds = files_dataset();
  ScopedEnv hook("MMPROF_TEST_HANG_AT", ds.samples()[1].key);
  Config c = small_config();
  c.loader.worker_mode = WorkerMode::thread;
  c.loader.timeout_s = 1;
  try {
    Loader loader(c, ds);
    one_epoch(loader);
    FAIL() << "a hung worker thread went unnoticed";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be stopped from outside"), std::string::npos)
        << e.what();
  }
}

// The --max-host-memory arithmetic against the ring a loader actually maps.
TEST(HostMemory, ThePlannedRingIsTheRingTheLoaderMaps) {
  const Dataset ds = files_dataset();
  for (const int workers : {0, 1, 3}) {
    Config c = small_config();
    c.loader.num_workers = workers;
    c.loader.prefetch_factor = 3;
    const HostMemoryPlan plan = plan_host_memory(c, false);
    Loader loader(c, ds);
    EXPECT_EQ(plan.ring_bytes(), loader.stats().ring_bytes) << workers << " workers";
    EXPECT_EQ(plan.pinned_bytes, 0u);
    EXPECT_EQ(plan.total_bytes(), plan.ring_bytes() + plan.scratch_bytes() +
                                      plan.read_buffer_bytes() + plan.decoded_bytes());
  }
}

TEST(HostMemory, ALimitBelowThePlanIsRefusedWithTheArithmetic) {
  Config c = small_config();
  const HostMemoryPlan plan = plan_host_memory(c, true);
  EXPECT_NO_THROW(check_host_memory(plan, plan.total_bytes()));
  try {
    check_host_memory(plan, plan.total_bytes() - 1);
    FAIL() << "not refused";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--max-host-memory"), std::string::npos) << what;
    EXPECT_NE(what.find("2 workers x 3 slots"), std::string::npos) << what;
    EXPECT_NE(what.find("pinned"), std::string::npos) << what;
  }
}

// A worker reads a whole media file into memory: its worst case, the larger of the two
// max_bytes plus a caption of text.max_bytes, is in the plan for every worker.
TEST(HostMemory, EachWorkersLargestReadIsInThePlan) {
  Config c = small_config();
  c.loader.num_workers = 3;
  c.image.max_bytes = 100 << 20;
  c.video.max_bytes = 300 << 20;
  c.text.max_bytes = 1 << 20;
  const HostMemoryPlan plan = plan_host_memory(c, false);
  EXPECT_EQ(plan.read_buffer_per_worker, 301ull << 20);
  EXPECT_EQ(plan.read_buffer_bytes(), 3 * (301ull << 20));
  EXPECT_NE(plan.arithmetic().find("+ read buffers 3 x 301.0 MiB (the larger of image.max_bytes "
                                   "and video.max_bytes, plus text.max_bytes) = 903.0 MiB + "),
            std::string::npos)
      << plan.arithmetic();
  c.image.max_bytes = 1ll << 40;  // a 1 TiB limit counts as such
  EXPECT_EQ(plan_host_memory(c, false).read_buffer_per_worker, (1ull << 40) + (1 << 20));
}

// And the image it decodes: at most image.max_pixels of FFmpeg's frame (up to 8 bytes a pixel,
// a 16-bit RGBA PNG) and of its RGB copy (3), 11 bytes a pixel (docs/reliability.md measures a
// 13000x13000 RGBA PNG at 7.2).
TEST(HostMemory, EachWorkersLargestDecodedImageIsInThePlan) {
  Config c = small_config();
  c.loader.num_workers = 3;
  c.image.max_pixels = 1'000'000;
  const HostMemoryPlan plan = plan_host_memory(c, false);
  EXPECT_EQ(plan.decoded_per_worker, 11'000'000u);
  EXPECT_EQ(plan.decoded_bytes(), 33'000'000u);
  EXPECT_NE(plan.arithmetic().find("+ decoded images 3 x 10.5 MiB (image.max_pixels x 11 B: a "
                                   "16-bit RGBA frame and its RGB copy) = 31.5 MiB = "),
            std::string::npos)
      << plan.arithmetic();
}

TEST(HostMemory, SizesParseInPowersOf1024) {
  EXPECT_EQ(parse_byte_size("2000", "--m"), 2000u);
  EXPECT_EQ(parse_byte_size("512M", "--m"), 512ull << 20);
  EXPECT_EQ(parse_byte_size("1.5GiB", "--m"), 3ull << 29);
  EXPECT_EQ(parse_byte_size("16g", "--m"), 16ull << 30);
  for (const char* bad : {"0", "-1G", "12Q", "G", "", "1e400"})
    EXPECT_THROW(parse_byte_size(bad, "--m"), UsageError) << bad;
}

}  // namespace
}  // namespace mmprof::test
