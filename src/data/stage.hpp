#pragma once
// `mmprof stage SRC DST`: a dataset's files (what the loader reads: samples and captions, or
// shards) copied to local storage, in parallel, resumable, with stage.json saying what it cost.
// Each file is written as NAME.partial and renamed when whole, so DST never holds a cut file
// under a sample's name; a re-run skips every file already there with the same size and the same
// digest, and copies the others again. Refused before anything is copied when DST's file system
// has less free space than the copy needs.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "mmprof/dataset.hpp"

namespace mmprof {

struct StageOptions {
  std::filesystem::path dest;
  int threads = 4;
  // Bytes copied (or found already there) so far, of the total.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

// Returns stage.json's content (also written to DEST/stage.json). Throws OutputError (no room,
// a write failed: the file is named) or InputError (a source file cannot be read).
nlohmann::json stage_dataset(const Dataset& source, const StageOptions& options);

}  // namespace mmprof
