// A loader started at a batch id (a resumed run) delivers what a loader started at 0 delivers at
// the same ids: the same epoch, samples and digests, across epoch boundaries, for inline, process
// (non-persistent too) and thread workers.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "integration/loader_fixture.hpp"
#include "support/test_support.hpp"

namespace mmprof::test {
namespace {

struct Delivery {
  uint64_t batch_id;
  int64_t epoch;
  uint64_t digest;
  std::vector<uint32_t> indices;
  bool operator==(const Delivery&) const = default;
};

std::vector<Delivery> deliver(const Config& config, const Dataset& dataset, uint64_t first,
                              uint64_t end) {
  Loader loader(config, dataset, first);
  std::vector<Delivery> out;
  for (uint64_t b = first; b < end; ++b) {
    const Batch& batch = loader.next();
    Delivery d{batch.batch_id, batch.epoch, batch.digest, {}};
    for (const auto& s : batch.samples)
      d.indices.push_back(s.index);
    out.push_back(std::move(d));
  }
  return out;
}

struct Shape {
  int workers;
  WorkerMode mode;
  bool persistent;
};

std::string name(const Shape& s) {
  return std::to_string(s.workers) + (s.mode == WorkerMode::thread ? "Threads" : "Processes") +
         (s.persistent ? "Persistent" : "Fresh");
}
// For GoogleTest's listing (its default prints the struct's bytes, padding included).
void PrintTo(const Shape& s, std::ostream* os) {
  *os << name(s);
}

class LoaderStartsAtABatch : public ::testing::TestWithParam<Shape> {};

TEST_P(LoaderStartsAtABatch, DeliversTheBatchesOfALoaderStartedAtZero) {
  const Dataset ds = Dataset::open(loader_fixture().root / "files", Layout::files);
  Config c = small_config();
  c.loader.num_workers = GetParam().workers;
  c.loader.worker_mode = GetParam().mode;
  c.loader.persistent_workers = GetParam().persistent;
  const uint64_t per_epoch = Loader(c, ds).batches_per_epoch();
  ASSERT_GE(per_epoch, 3u);
  const uint64_t end = 3 * per_epoch;
  const std::vector<Delivery> reference = deliver(c, ds, 0, end);
  EXPECT_EQ(reference[per_epoch].epoch, 1);
  // Inside the first epoch, at its last batch, at an epoch start, inside a later epoch.
  for (const uint64_t first : {uint64_t{1}, per_epoch - 1, per_epoch, per_epoch + 2}) {
    const std::vector<Delivery> got = deliver(c, ds, first, end);
    const std::vector<Delivery> expected(reference.begin() + static_cast<long>(first),
                                         reference.end());
    EXPECT_EQ(got, expected) << "started at batch " << first;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Pools, LoaderStartsAtABatch,
    ::testing::Values(Shape{0, WorkerMode::process, true}, Shape{2, WorkerMode::process, true},
                      Shape{2, WorkerMode::process, false}, Shape{2, WorkerMode::thread, true}),
    [](const ::testing::TestParamInfo<Shape>& param) { return name(param.param); });

// What a checkpoint guards a resume with: the same samples give the same fingerprint in both
// layouts; one file a byte longer, or one file fewer, gives another.
TEST(DatasetFingerprint, IsLayoutFreeAndSeesAChangedOrMissingFile) {
  namespace fs = std::filesystem;
  const fs::path root = loader_fixture().root;
  const uint64_t files = Dataset::open(root / "files", Layout::files).fingerprint();
  EXPECT_EQ(Dataset::open(root / "shards", Layout::tar).fingerprint(), files);

  TempDir dir;
  fs::copy(root / "files", dir.path() / "files");
  const Dataset copy = Dataset::open(dir.path() / "files", Layout::files);
  EXPECT_EQ(copy.fingerprint(), files);
  const fs::path changed = copy.root() / copy.files()[copy.samples().front().media.file];
  std::ofstream(changed, std::ios::app) << 'x';
  EXPECT_NE(Dataset::open(dir.path() / "files", Layout::files).fingerprint(), files);
  fs::remove(changed);
  EXPECT_NE(Dataset::open(dir.path() / "files", Layout::files).fingerprint(), files);
}

}  // namespace
}  // namespace mmprof::test
