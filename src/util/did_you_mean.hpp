#pragma once
// "did you mean ...?" for a mistyped subcommand, option or key: the nearest candidate by edit
// distance, when it is near enough to be a typo.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mmprof {

// Optimal string alignment distance: insertions, deletions, substitutions and transpositions of
// two adjacent characters each cost 1 ("baselin" and "baseilne" are both 1 from "baseline").
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word`, if its distance is at most max(1, word.size() / 3) and
// smaller than the word itself (no suggestion for a word that shares nothing); ties go to the
// first candidate.
std::optional<std::string> nearest_name(std::string_view word,
                                        const std::vector<std::string>& candidates);

// `lead` + "did you mean '<prefix><nearest>'?", or "" when no candidate is near `word`.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates,
                         std::string_view prefix = {}, std::string_view lead = {});

}  // namespace mmprof
