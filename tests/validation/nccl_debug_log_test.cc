#include "validation/nccl_debug_log.h"

#include <gtest/gtest.h>

#include "validation/measurement_reader.h"

namespace dtsim::validation {
namespace {

using collectives::CollectiveKind;

NcclDebugLog sample() {
  return parse_nccl_debug_log(
      read_text_file(std::string(DTSIM_SOURCE_DIR) + "/tests/validation/data/nccl_debug_info_2node.log"));
}

// A number too long for its field skips the line; the reader never throws.
TEST(NcclDebugLog, ANumberTooLongSkipsItsLine) {
  const NcclDebugLog log = parse_nccl_debug_log(
      "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 99999999999999999999999 nNodes 1 localRanks 8\n"
      "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8\n");
  EXPECT_EQ(log.ranks, 16);
  EXPECT_EQ(log.nodes, 2);
}

TEST(NcclDebugLog, ReadsVersionRanksAndNodes) {
  NcclDebugLog log = sample();
  EXPECT_EQ(log.nccl_version, "2.18.5+cuda12.2");
  EXPECT_EQ(log.ranks, 8);
  EXPECT_EQ(log.nodes, 2);
}

TEST(NcclDebugLog, ReadsChannelCountsButNotPerPeerCount) {
  NcclDebugLog log = sample();
  EXPECT_EQ(log.channels.at("coll"), 8);
  EXPECT_EQ(log.channels.at("nvls"), 0);
  EXPECT_EQ(log.channels.at("p2p"), 8);
  EXPECT_EQ(log.channels.at("collnet"), 8);
}

TEST(NcclDebugLog, ReadsRingOrderPerChannelAndIgnoresConnectionLines) {
  NcclDebugLog log = sample();
  ASSERT_EQ(log.rings.size(), 2u);
  EXPECT_EQ(log.rings.at(1), (std::vector<int>{0, 3, 2, 1, 4, 7, 6, 5}));
}

TEST(NcclDebugLog, ReadsTreesPerChannel) {
  NcclDebugLog log = sample();
  ASSERT_EQ(log.trees.size(), 3u);
  EXPECT_EQ(log.trees.at(1), "3/-1/-1->0->4");
}

TEST(NcclDebugLog, ReadsGraphSearchResults) {
  NcclDebugLog log = sample();
  ASSERT_EQ(log.graphs.size(), 3u);
  EXPECT_EQ(log.graphs[0].pattern, 4);
  EXPECT_EQ(log.graphs[0].channels, 8);
  EXPECT_DOUBLE_EQ(log.graphs[1].bw_intra_gbps, 40.0);
  EXPECT_DOUBLE_EQ(log.graphs[1].bw_inter_gbps, 20.0);
  EXPECT_EQ(log.graphs[0].type_intra, "NVL");
  EXPECT_EQ(log.graphs[0].type_inter, "PIX");
}

TEST(NcclDebugLog, ReadsTunerChoicesOncePerSizeInNamedAndNumberedForms) {
  NcclDebugLog log = sample();
  ASSERT_EQ(log.choices.size(), 4u);  // duplicate 8-byte line and Send are dropped
  EXPECT_EQ(log.choices[0].algorithm, "tree");
  EXPECT_EQ(log.choices[0].protocol, "ll");
  EXPECT_EQ(log.choices[2].algorithm, "ring");
  EXPECT_EQ(log.choices[2].channel_hi, 7);
  EXPECT_EQ(log.choices[3].collective, CollectiveKind::all_gather);
  EXPECT_EQ(log.choices[3].algorithm, "ring");  // Algo 1
  EXPECT_EQ(log.choices[3].protocol, "simple");  // proto 2
}

TEST(NcclDebugLog, AllGatherBytesArePerRankInNcclLines) {
  NcclDebugLog log = sample();
  EXPECT_EQ(log.choices[3].test_size(8), 131072 * 8);
  EXPECT_EQ(log.choices[2].test_size(8), 8388608);
}

TEST(NcclDebugLog, NormalisesNcclNamesToDtsimNames) {
  EXPECT_EQ(normalize_nccl_algorithm("NVLSTree"), "nvls_tree");
  EXPECT_EQ(normalize_nccl_algorithm("COLLNET_DIRECT"), "collnet_direct");
  EXPECT_EQ(normalize_nccl_algorithm("5"), "nvls_tree");
  EXPECT_EQ(normalize_nccl_protocol("LL128"), "ll128");
  EXPECT_EQ(normalize_nccl_protocol("Simple"), "simple");
}

TEST(TunerAgreement, ListsOnlySizesWhereThePicksDiffer) {
  NcclDebugLog log = sample();
  // A tuner that always says ring/simple agrees with NCCL on the two large sizes only.
  auto ours = [](CollectiveKind, int64_t, int) { return Prediction{1.0, "ring", "simple", 8}; };
  TunerAgreement a = compare_tuner(log, 8, ours);
  EXPECT_EQ(a.compared, 4u);
  ASSERT_EQ(a.differences.size(), 2u);
  EXPECT_EQ(a.differences[0].nccl.nccl_bytes, 8);
  EXPECT_EQ(a.differences[1].nccl.protocol, "ll128");
}

}  // namespace
}  // namespace dtsim::validation
