// The loader with real worker processes, threads and generated files: every sample exactly once,
// identical content across worker counts, modes and layouts, errors and dead workers reported.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>

#include "data/tokenizer.hpp"
#include "integration/loader_fixture.hpp"
#include "mmprof/error.hpp"
#include "support/test_support.hpp"

namespace mmprof::test {
namespace {

std::vector<uint32_t> iota_n(size_t n) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

std::vector<uint32_t> sorted(std::vector<uint32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

struct PoolShape {
  int workers;
  WorkerMode mode;
};

class LoaderEverySampleOnce : public ::testing::TestWithParam<PoolShape> {};

TEST_P(LoaderEverySampleOnce, EachEpochDeliversEverySampleOnceWithIdenticalDigests) {
  const Dataset ds = files_dataset();
  Config reference = small_config();
  reference.loader.num_workers = 0;
  const Delivered expected = drain(reference, ds, 2);

  Config c = small_config();
  c.loader.num_workers = GetParam().workers;
  c.loader.worker_mode = GetParam().mode;
  const Delivered got = drain(c, ds, 2);
  const size_t n = ds.size();
  ASSERT_EQ(got.indices.size(), 2 * n);
  EXPECT_EQ(sorted({got.indices.begin(), got.indices.begin() + static_cast<long>(n)}), iota_n(n));
  EXPECT_EQ(sorted({got.indices.begin() + static_cast<long>(n), got.indices.end()}), iota_n(n));
  // Same seed: the same batches, bit for bit, whatever the worker count or mode.
  EXPECT_EQ(got.indices, expected.indices);
  EXPECT_EQ(got.digests, expected.digests);
}

INSTANTIATE_TEST_SUITE_P(Pools, LoaderEverySampleOnce,
                         ::testing::Values(PoolShape{0, WorkerMode::process},
                                           PoolShape{1, WorkerMode::process},
                                           PoolShape{3, WorkerMode::process},
                                           PoolShape{1, WorkerMode::thread},
                                           PoolShape{3, WorkerMode::thread}));

TEST(Loader, ThreeRanksAreDisjointAndComplete) {
  const Dataset ds = files_dataset();
  std::vector<uint32_t> all;
  std::set<uint32_t> seen;
  for (int rank = 0; rank < 3; ++rank) {
    Config c = small_config();
    c.dist.rank = rank;
    c.dist.world_size = 3;
    const Delivered d = drain(c, ds, 1);
    for (uint32_t i : d.indices)
      EXPECT_TRUE(seen.insert(i).second) << "sample " << i << " twice";
    all.insert(all.end(), d.indices.begin(), d.indices.end());
  }
  EXPECT_EQ(sorted(all), iota_n(ds.size()));
}

TEST(Loader, AnotherSeedGivesAnotherOrderAndOtherContent) {
  const Dataset ds = files_dataset();
  Config a = small_config();
  Config b = small_config();
  b.loader.seed = a.loader.seed + 1;
  const Delivered da = drain(a, ds, 1), db = drain(b, ds, 1);
  EXPECT_NE(da.indices, db.indices);
  EXPECT_EQ(sorted(da.indices), sorted(db.indices));
  EXPECT_NE(da.digests, db.digests);
  EXPECT_EQ(drain(a, ds, 1).digests, da.digests);  // and the same seed repeats exactly
}

TEST(Loader, TarShardsDeliverTheSameBatchesAsFiles) {
  const Dataset files = files_dataset();
  const Dataset shards = Dataset::open(loader_fixture().root / "shards", Layout::auto_detect);
  ASSERT_EQ(shards.layout(), Layout::tar);
  ASSERT_GT(shards.files().size(), 1u) << "the fixture should span several shards";
  ASSERT_EQ(shards.size(), files.size());
  const Config c = small_config();
  const Delivered a = drain(c, files, 1), b = drain(c, shards, 1);
  EXPECT_EQ(a.indices, b.indices);
  EXPECT_EQ(a.digests, b.digests);
}

TEST(Loader, OutOfOrderDeliveryStillDeliversEverySampleOnce) {
  const Dataset ds = files_dataset();
  Config c = small_config();
  c.loader.in_order = false;
  c.loader.num_workers = 3;
  const Delivered d = drain(c, ds, 1);
  EXPECT_EQ(sorted(d.indices), iota_n(ds.size()));
}

TEST(Loader, NonPersistentWorkersAreReplacedEachEpoch) {
  const Dataset ds = files_dataset();
  Config c = small_config();
  c.loader.persistent_workers = false;
  Loader loader(c, ds);
  const auto first_pids = loader.stats().worker_pids;
  std::vector<uint32_t> indices;
  for (size_t b = 0; b < 2 * loader.batches_per_epoch(); ++b) {
    for (const auto& s : loader.next().samples)
      indices.push_back(s.index);
  }
  EXPECT_EQ(loader.stats().worker_restarts, 1);
  EXPECT_NE(loader.stats().worker_pids, first_pids);
  EXPECT_EQ(indices.size(), 2 * ds.size());

  c.loader.persistent_workers = true;
  Loader persistent(c, ds);
  const auto pids = persistent.stats().worker_pids;
  for (size_t b = 0; b < 2 * persistent.batches_per_epoch(); ++b)
    persistent.next();
  EXPECT_EQ(persistent.stats().worker_restarts, 0);
  EXPECT_EQ(persistent.stats().worker_pids, pids);
}

TEST(Loader, BatchTensorsAndTokensMatchTheirSamples) {
  const Dataset ds = files_dataset();
  Config c = small_config();
  Loader loader(c, ds);
  const Batch& batch = loader.next();
  ASSERT_EQ(batch.size, batch.n_images + batch.n_videos);
  ASSERT_EQ(batch.samples.size(), batch.size);
  std::vector<int32_t> expected(static_cast<size_t>(c.text.seq_len));
  for (size_t i = 0; i < batch.samples.size(); ++i) {
    const auto& entry = ds.samples()[batch.samples[i].index];
    ASSERT_TRUE(entry.has_caption);
    const auto caption = read_bytes(ds.root() / ds.files()[entry.caption.file]);
    tokenize_bytes({reinterpret_cast<const char*>(caption.data()), caption.size()}, expected.data(),
                   c.text.seq_len);
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(),
                           batch.tokens + i * static_cast<size_t>(c.text.seq_len)))
        << "tokens of sample " << entry.key;
    EXPECT_EQ(batch.samples[i].bytes, entry.media.size + entry.caption.size);
  }
  // Rows are dense per modality, in delivery order.
  int32_t images = 0, videos = 0;
  for (const auto& s : batch.samples) {
    EXPECT_EQ(s.row, s.modality == Modality::image ? images++ : videos++);
  }
}

TEST(Loader, BadSamplesAreSkippedAndNamedWithTheirStage) {
  const Dataset ds = Dataset::open(loader_fixture().bad_root, Layout::files);
  Config c = small_config();
  c.loader.shuffle = false;
  Loader loader(c, ds);
  std::map<std::string, std::string> failed;  // key -> stage
  size_t delivered = 0;
  for (size_t b = 0; b < loader.batches_per_epoch(); ++b) {
    const Batch& batch = loader.next();
    delivered += batch.size;
    for (const auto& f : batch.failures) {
      failed[f.key] = f.stage;
      EXPECT_FALSE(f.message.empty());
    }
  }
  EXPECT_EQ(failed.size(), 4u);
  EXPECT_EQ(failed["zz-corrupt"], "decode");
  EXPECT_EQ(failed["zz-truncated"], "decode");
  EXPECT_EQ(failed["zz-wrong-ext"], "decode");
  EXPECT_EQ(failed["zz-empty"], "read");
  EXPECT_EQ(delivered + failed.size(), ds.size());
}

TEST(Loader, OnErrorFailStopsAtTheFirstBadSampleNamingIt) {
  const Dataset ds = Dataset::open(loader_fixture().bad_root, Layout::files);
  Config c = small_config();
  c.loader.shuffle = false;
  c.loader.on_error = OnError::fail;
  Loader loader(c, ds);
  try {
    for (size_t b = 0; b < loader.batches_per_epoch(); ++b)
      loader.next();
    FAIL() << "on_error=fail did not stop";
  } catch (const SampleError& e) {
    EXPECT_EQ(e.failure().key.rfind("zz-", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(e.failure().key), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("on_error=fail"), std::string::npos);
  }
}

TEST(Loader, AKilledWorkerIsReportedWithItsPidAndSignal) {
  const Dataset ds = files_dataset();
  Config c = small_config();
  c.loader.on_worker_failure = WorkerFailure::fail;  // respawn (the default): reliability_test
  Loader loader(c, ds);
  loader.next();
  const int victim = loader.stats().worker_pids.at(1);
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  try {
    for (int i = 0; i < 100; ++i)
      loader.next();
    FAIL() << "a dead worker went unnoticed";
  } catch (const RunError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(victim)), std::string::npos) << what;
    EXPECT_NE(what.find("signal 9"), std::string::npos) << what;
  }
}

TEST(Loader, RankWithoutSamplesIsAClearError) {
  const Dataset ds = files_dataset();
  Config c = small_config();
  c.dist.world_size = static_cast<int>(ds.size()) + 1;
  c.dist.rank = static_cast<int>(ds.size());
  EXPECT_THROW(Loader(c, ds), InputError);
}

}  // namespace
}  // namespace mmprof::test
