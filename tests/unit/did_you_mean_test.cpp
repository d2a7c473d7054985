// util/did_you_mean: exact edit distances and when a suggestion is (not) made.
#include "util/did_you_mean.hpp"

#include <gtest/gtest.h>

namespace mmprof {
namespace {

TEST(DidYouMean, EditDistanceCountsTranspositionsAsOne) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("", "ab"), 2u);
  EXPECT_EQ(edit_distance("baselin", "baseline"), 1u);   // deletion
  EXPECT_EQ(edit_distance("baseilne", "baseline"), 1u);  // transposition
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);     // the textbook Levenshtein example
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
}

TEST(DidYouMean, SuggestsOnlyANearName) {
  const std::vector<std::string> commands = {"gen", "baseline", "trace", "ab", "inspect", "report"};
  EXPECT_EQ(nearest_name("baselin", commands), "baseline");
  EXPECT_EQ(nearest_name("repotr", commands), "report");
  EXPECT_EQ(nearest_name("frobnicate", commands), std::nullopt);
  EXPECT_EQ(nearest_name("", commands), std::nullopt);
  // A short word gets a suggestion only one edit away.
  EXPECT_EQ(nearest_name("ac", commands), "ab");
  EXPECT_EQ(nearest_name("xy", commands), std::nullopt);
  EXPECT_EQ(nearest_name("abb", commands), "ab");
  EXPECT_EQ(did_you_mean("num_worker", {"batch_size", "num_workers"}, "loader.", "; "),
            "; did you mean 'loader.num_workers'?");
  EXPECT_EQ(did_you_mean("zzz", {"batch_size"}), "");
}

}  // namespace
}  // namespace mmprof
