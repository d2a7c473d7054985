#include "stats/shuffle_quality.hpp"

#include <algorithm>
#include <cmath>

namespace mmprof {

ShuffleQuality shuffle_quality(const std::vector<uint32_t>& p,
                               const std::vector<uint32_t>& batch_sizes) {
  ShuffleQuality q;
  q.samples = p.size();
  const size_t n = p.size();
  if (n < 3) return q;
  double gaps = 0;
  size_t pairs = 0, at = 0;
  for (uint32_t size : batch_sizes) {
    for (size_t i = at + 1; i < at + size && i < n; ++i, ++pairs)
      gaps += std::abs(static_cast<double>(p[i]) - static_cast<double>(p[i - 1]));
    at += size;
  }
  q.pairs = pairs;
  if (pairs == 0) return q;
  const double observed = gaps / static_cast<double>(pairs);
  // The mean |a - b| over all pairs of the same values, which is the expected gap of a random
  // order: over sorted values v, sum_{i<j} (v_j - v_i) = sum_j v_j (2j - n + 1).
  std::vector<double> v(p.begin(), p.end());
  std::sort(v.begin(), v.end());
  double pair_sum = 0;
  for (size_t j = 0; j < n; ++j)
    pair_sum += v[j] * (2.0 * static_cast<double>(j) - static_cast<double>(n) + 1.0);
  const double expected = pair_sum / (static_cast<double>(n) * static_cast<double>(n - 1) / 2.0);
  q.gap_ratio = expected > 0 ? observed / expected : 0;
  double mi = 0, mp = 0;
  for (size_t i = 0; i < n; ++i) {
    mi += static_cast<double>(i);
    mp += v[i];
  }
  mi /= static_cast<double>(n);
  mp /= static_cast<double>(n);
  double sip = 0, sii = 0, spp = 0;
  for (size_t i = 0; i < n; ++i) {
    const double di = static_cast<double>(i) - mi, dp = static_cast<double>(p[i]) - mp;
    sip += di * dp;
    sii += di * di;
    spp += dp * dp;
  }
  q.order_correlation = spp > 0 ? sip / std::sqrt(sii * spp) : 0;
  return q;
}

}  // namespace mmprof
