#include "workloads/placement.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace dtsim::workloads {
namespace {

ParallelSpec grid(int tp, int cp, int dp, int pp) {
  ParallelSpec p;
  p.tp = tp;
  p.cp = cp;
  p.dp = dp;
  p.pp = pp;
  return p;
}

TEST(Placement, DefaultOrderPutsATensorParallelGroupOnConsecutiveGpus) {
  Placement pl(grid(8, 1, 4, 2), "tp-cp-dp-pp");
  EXPECT_EQ(pl.group(Dim::tp, 19).ranks, (std::vector<int>{16, 17, 18, 19, 20, 21, 22, 23}));
}

TEST(Placement, DataParallelPeersAreOneTensorGroupApart) {
  Placement pl(grid(8, 1, 4, 2), "tp-cp-dp-pp");
  EXPECT_EQ(pl.group(Dim::dp, 3).ranks, (std::vector<int>{3, 11, 19, 27}));
}

TEST(Placement, CustomOrderChangesWhichDimensionIsInnermost) {
  Placement pl(grid(2, 1, 4, 1), "dp-tp-cp-pp");
  EXPECT_EQ(pl.group(Dim::dp, 0).ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(pl.group(Dim::tp, 0).ranks, (std::vector<int>{0, 4}));
}

TEST(Placement, CoordinatesRoundTrip) {
  Placement pl(grid(4, 2, 3, 2), "tp-cp-dp-pp");
  for (int g = 0; g < 48; ++g) EXPECT_EQ(pl.gpu(pl.coord(g)), g);
}

TEST(Placement, RejectsAnOrderMissingADimension) {
  EXPECT_THROW(Placement(grid(2, 1, 2, 1), "tp-dp-pp"), std::invalid_argument);
}

TEST(Placement, ExpertGroupSpansConsecutiveDataParallelRanks) {
  Placement pl(grid(1, 1, 8, 1), "tp-cp-dp-pp");
  EXPECT_EQ(pl.ep_group(5, 4).ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(pl.expert_dp_group(5, 4).ranks, (std::vector<int>{1, 5}));
}

// Megatron-Core's parallel folding: with tp 2 and dp 8 (16 GPUs a stage), ep 8 takes 8
// consecutive ranks of the tp-fastest fold (two tp ranks of four dp ranks), more than dp alone
// could give when ep > dp, and the experts' data-parallel group is every 8th rank.
TEST(Placement, ExpertGroupFoldsTensorAndDataParallelRanks) {
  Placement pl(grid(2, 1, 8, 2), "tp-cp-dp-pp");
  EXPECT_EQ(pl.ep_group(5, 8).ranks, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(pl.expert_dp_group(5, 8).ranks, (std::vector<int>{5, 13}));
  // Stage 1 (GPUs 16-31) folds its own ranks; ep 16 spans the whole stage.
  EXPECT_EQ(pl.ep_group(20, 16).ranks.front(), 16);
  EXPECT_EQ(pl.ep_group(20, 16).ranks.back(), 31);
  EXPECT_EQ(pl.expert_dp_group(20, 16).ranks, (std::vector<int>{20}));
  // Placement dp-tp-cp-pp (dp fastest on the GPUs): the fold still counts tp fastest.
  Placement swapped(grid(2, 1, 4, 1), "dp-tp-cp-pp");
  EXPECT_EQ(swapped.ep_group(0, 4).ranks, (std::vector<int>{0, 4, 1, 5}));
}

}  // namespace
}  // namespace dtsim::workloads
