#pragma once
// A small generated dataset shared by the loader tests (both layouts), plus a copy with bad
// samples: a corrupt JPEG, a truncated MP4, a zero-byte file and an MP4 named .jpg.
#include <filesystem>
#include <vector>

#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "mmprof/loader.hpp"

namespace mmprof::test {

struct LoaderFixtureData {
  std::filesystem::path root;      // generated dataset (files/ and shards/)
  std::filesystem::path bad_root;  // files/ copy with the bad samples added
};

// Generated once per test binary (about a second), removed at exit.
const LoaderFixtureData& loader_fixture();

// The generated dataset's files/ layout.
Dataset files_dataset();

// A configuration small enough for tests: 32x32 images, 4 frames of 32x32, batch 5.
Config small_config();

// Runs `epochs` epochs through a loader and returns every delivered batch's sample indices and
// digests in delivery order.
struct Delivered {
  std::vector<uint32_t> indices;
  std::vector<int64_t> minflt;  // per sample, as indices
  std::vector<uint64_t> digests;
  std::vector<int64_t> epochs;
};
Delivered drain(const Config& config, const Dataset& dataset, int epochs);

}  // namespace mmprof::test
