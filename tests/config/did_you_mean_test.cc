#include "config/did_you_mean.h"

#include <gtest/gtest.h>

namespace dtsim::config {
namespace {

TEST(DidYouMean, DistanceCountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);
  EXPECT_EQ(edit_distance("", "abc"), 3);
  EXPECT_EQ(edit_distance("same", "same"), 0);
}

TEST(DidYouMean, ASwapOfNeighboursIsOneEdit) {
  EXPECT_EQ(edit_distance("ndoes", "nodes"), 1);
}

TEST(DidYouMean, SuggestsTheClosestName) {
  EXPECT_EQ(closest_name("bandwith", {"kind", "count", "bandwidth", "latency"}), "bandwidth");
}

TEST(DidYouMean, PrefersTheSameLengthOnATie) {
  EXPECT_EQ(closest_name("nodez", {"node", "nodes"}), "nodes");
}

TEST(DidYouMean, OffersNothingForUnrelatedNames) {
  EXPECT_EQ(closest_name("zzzzzz", {"cluster", "workload"}), "");
  EXPECT_EQ(did_you_mean("zzzzzz", {"cluster"}), "");
}

TEST(DidYouMean, JoinsNamesForMessages) {
  EXPECT_EQ(join_names({"a", "b", "c"}), "a, b or c");
  EXPECT_EQ(join_names({"a"}), "a");
}

}  // namespace
}  // namespace dtsim::config
