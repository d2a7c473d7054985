#include "util/did_you_mean.hpp"

#include <algorithm>

namespace mmprof {

size_t edit_distance(std::string_view a, std::string_view b) {
  // d[i][j]: distance between a's first i and b's first j characters (rows kept as a flat table).
  const size_t w = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * w);
  for (size_t i = 0; i <= a.size(); ++i)
    d[i * w] = i;
  for (size_t j = 0; j <= b.size(); ++j)
    d[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t v =
          std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1, d[(i - 1) * w + j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        v = std::min(v, d[(i - 2) * w + j - 2] + 1);
      d[i * w + j] = v;
    }
  }
  return d.back();
}

std::optional<std::string> nearest_name(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  if (word.empty()) return std::nullopt;
  const size_t limit = std::min(std::max<size_t>(1, word.size() / 3), word.size() - 1);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates,
                         std::string_view prefix, std::string_view lead) {
  const auto near = nearest_name(word, candidates);
  if (!near) return "";
  return std::string(lead) + "did you mean '" + std::string(prefix) + *near + "'?";
}

}  // namespace mmprof
