#include "ab/content_check.hpp"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "mmprof/error.hpp"
#include "mmprof/loader.hpp"

namespace mmprof {
namespace {

// The configuration the PSNR check decodes with: inline loading, 8-bit tensors.
Config inline_uint8(Config c) {
  c.loader.num_workers = 0;
  c.loader.pin_memory = PinMemory::off;
  c.image.dtype = ImageDType::uint8;
  return c;
}

}  // namespace

DigestComparison compare_digests(const DigestMap& base, const DigestMap& arm) {
  DigestComparison c;
  for (const auto& [key, digest] : arm) {
    const auto it = base.find(key);
    if (it == base.end()) continue;
    ++c.compared;
    if (it->second == digest) continue;
    if (c.mismatched++ == 0)
      c.first_mismatch = fmt::format("phase {} batch {}", key.first, key.second);
  }
  return c;
}

double psnr_u8(const uint8_t* a, const uint8_t* b, size_t n) {
  double sse = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    sse += d * d;
  }
  if (sse == 0) return INFINITY;
  return 10.0 * std::log10(255.0 * 255.0 / (sse / static_cast<double>(n)));
}

double batches_psnr(const Config& base, const Config& arm, const Dataset& dataset, int batches) {
  const Config cb = inline_uint8(base), ca = inline_uint8(arm);
  Loader lb(cb, dataset), la(ca, dataset);
  std::vector<uint8_t> all_b, all_a;
  for (int i = 0; i < batches; ++i) {
    const std::vector<uint8_t> b = pixels_on_host(lb.next(), batch_layout(cb));
    const std::vector<uint8_t> a = pixels_on_host(la.next(), batch_layout(ca));
    if (a.size() != b.size()) {
      throw RunError(
          fmt::format("batch {} has {} tensor bytes in the base and {} in the arm: "
                      "the factor changes tensor shapes, PSNR cannot compare them",
                      i, b.size(), a.size()));
    }
    all_b.insert(all_b.end(), b.begin(), b.end());
    all_a.insert(all_a.end(), a.begin(), a.end());
  }
  return psnr_u8(all_b.data(), all_a.data(), all_b.size());
}

}  // namespace mmprof
