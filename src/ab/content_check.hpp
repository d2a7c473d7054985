#pragma once
// Correctness checks of `mmprof ab`: batch digest sequences (digests.csv of each trial) for
// content-preserving factors, and PSNR of decoded batches for lossy ones.
#include <cstddef>
#include <cstdint>
#include <string>

#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "mmprof/run_dir.hpp"

namespace mmprof {

struct DigestComparison {
  size_t compared = 0, mismatched = 0;
  std::string first_mismatch;  // "phase P batch B" of the first differing batch
};

// Compares the batches both trials delivered (warm-up lengths differ between trials, so only
// the common (phase, batch_id) pairs are compared).
DigestComparison compare_digests(const DigestMap& base, const DigestMap& arm);

// Peak signal-to-noise ratio of two 8-bit buffers in dB (infinity when identical).
double psnr_u8(const uint8_t* a, const uint8_t* b, size_t n);

// Builds the first `batches` batches of `base` and `arm` in this process (no worker processes,
// uint8 tensors, same seed) and returns the PSNR of their image and video tensors together.
// Throws RunError when the batches do not have the same shape.
double batches_psnr(const Config& base, const Config& arm, const Dataset& dataset, int batches);

}  // namespace mmprof
