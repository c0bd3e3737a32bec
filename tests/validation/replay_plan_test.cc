#include "validation/replay_plan.h"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/error.h"
#include "validation/measurement_csv.h"

namespace dtsim::validation {
namespace {

using collectives::CollectiveKind;

TEST(ReplayPlan, SizesFollowTheFactorFromMinToMax) {
  ReplayPlan p = make_replay_plan(CollectiveKind::all_reduce, Bytes(8), Bytes(1024), 2, 8);
  ASSERT_EQ(p.steps.size(), 8u);
  EXPECT_EQ(p.steps.front().size_bytes, 8);
  EXPECT_EQ(p.steps.back().size_bytes, 1024);
  EXPECT_EQ(p.steps.back().call_count, 256);
}

TEST(ReplayPlan, SplitCollectivesRoundToAMultipleOfTheRankCount) {
  ReplayPlan p = make_replay_plan(CollectiveKind::all_gather, Bytes(8), Bytes(1024), 2, 3);
  for (const ReplayStep& s : p.steps) {
    EXPECT_EQ(s.recv_count % 3, 0);
    EXPECT_EQ(s.send_count * 3, s.recv_count);
  }
  EXPECT_EQ(p.steps.front().size_bytes, 12);  // 8 and 16 bytes both round to 3 floats... once
}

TEST(ReplayPlan, BadRangeIsAnInputError) {
  EXPECT_THROW(make_replay_plan(CollectiveKind::all_reduce, Bytes(64), Bytes(8), 2, 8), InputError);
  EXPECT_THROW(make_replay_plan(CollectiveKind::all_reduce, Bytes(8), Bytes(64), 1, 8), InputError);
}

// Simulates every rank's receive buffer by the collective's definition and checks it against the
// expected pattern: the host-side version of what the CUDA check kernel does.
std::vector<float> simulate(CollectiveKind kind, int rank, int ranks, const ReplayStep& s) {
  std::vector<float> out(static_cast<size_t>(s.recv_count));
  for (int64_t i = 0; i < s.recv_count; ++i) {
    float v = 0;
    switch (kind) {
      case CollectiveKind::all_reduce:
        for (int r = 0; r < ranks; ++r) v += replay_input(r, i);
        break;
      case CollectiveKind::reduce_scatter:
        for (int r = 0; r < ranks; ++r) v += replay_input(r, rank * s.call_count + i);
        break;
      case CollectiveKind::all_gather:
        v = replay_input(static_cast<int>(i / s.call_count), i % s.call_count);
        break;
      case CollectiveKind::all_to_all:
        v = replay_input(static_cast<int>(i / s.call_count), rank * s.call_count + i % s.call_count);
        break;
      case CollectiveKind::send_recv: v = replay_input((rank + ranks - 1) % ranks, i); break;
      case CollectiveKind::gather:  // the root's buffer: every rank's part in rank order
        v = replay_input(static_cast<int>(i / s.call_count), i % s.call_count);
        break;
      case CollectiveKind::scatter:  // the root's part for this rank
        v = replay_input(0, rank * s.call_count + i);
        break;
      default: v = replay_input(0, i);
    }
    out[static_cast<size_t>(i)] = v;
  }
  return out;
}

TEST(ReplayPattern, CorrectResultsHaveNoWrongElements) {
  for (CollectiveKind k : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                           CollectiveKind::all_gather, CollectiveKind::all_to_all,
                           CollectiveKind::send_recv, CollectiveKind::broadcast}) {
    ReplayPlan p = make_replay_plan(k, Bytes(96), Bytes(96), 2, 4);
    for (int rank = 0; rank < 4; ++rank)
      EXPECT_EQ(count_wrong(k, rank, 4, 0, p.steps[0], simulate(k, rank, 4, p.steps[0])), 0)
          << collectives::name(k) << " rank " << rank;
  }
}

// nccl-tests' gather and scatter: the size is the root's whole buffer, each NCCL call moves one
// rank's part of it, and only the root's receive buffer holds the gathered parts.
TEST(ReplayPlan, GatherAndScatterMoveOneRanksPartOfTheRootsBuffer) {
  const ReplayPlan g =
      make_replay_plan(CollectiveKind::gather, Bytes(1 << 20), Bytes(1 << 20), 2, 4);
  ASSERT_EQ(g.steps.size(), 1u);
  EXPECT_EQ(g.steps[0].call_count, (1 << 20) / 4 / 4);
  EXPECT_EQ(g.steps[0].send_count, g.steps[0].call_count);
  EXPECT_EQ(g.steps[0].recv_count, 4 * g.steps[0].call_count);
  const ReplayPlan s =
      make_replay_plan(CollectiveKind::scatter, Bytes(1 << 20), Bytes(1 << 20), 2, 4);
  EXPECT_EQ(s.steps[0].send_count, 4 * s.steps[0].call_count);
  EXPECT_EQ(s.steps[0].recv_count, s.steps[0].call_count);

  EXPECT_EQ(count_wrong(CollectiveKind::gather, 0, 4, 0, g.steps[0],
                        simulate(CollectiveKind::gather, 0, 4, g.steps[0])),
            0);
  for (int rank = 0; rank < 4; ++rank) {
    const auto got = simulate(CollectiveKind::scatter, rank, 4, s.steps[0]);
    EXPECT_EQ(count_wrong(CollectiveKind::scatter, rank, 4, 0, s.steps[0], got), 0) << rank;
    // Another rank's part is wrong everywhere.
    EXPECT_EQ(count_wrong(CollectiveKind::scatter, (rank + 1) % 4, 4, 0, s.steps[0], got),
              s.steps[0].recv_count);
  }
}

// hypercube gathers like all_gather (each rank ends with every rank's part) on power-of-two
// rank counts only, as nccl-tests.
TEST(ReplayPlan, HypercubeIsAnAllGatherOnAPowerOfTwoRankCount) {
  const ReplayPlan h =
      make_replay_plan(CollectiveKind::hypercube, Bytes(1 << 20), Bytes(1 << 20), 2, 8);
  EXPECT_EQ(h.steps[0].recv_count, 8 * h.steps[0].call_count);
  for (int rank = 0; rank < 8; ++rank) {
    EXPECT_EQ(count_wrong(CollectiveKind::hypercube, rank, 8, 0, h.steps[0],
                          simulate(CollectiveKind::all_gather, rank, 8, h.steps[0])),
              0);
  }
  EXPECT_THROW(make_replay_plan(CollectiveKind::hypercube, Bytes(8), Bytes(64), 2, 6), InputError);
}

TEST(ReplayPattern, ACorruptedElementIsCounted) {
  ReplayPlan p = make_replay_plan(CollectiveKind::all_reduce, Bytes(4096), Bytes(4096), 2, 4);
  std::vector<float> got = simulate(CollectiveKind::all_reduce, 1, 4, p.steps[0]);
  got[17] += 1;
  got[500] = 0;
  EXPECT_EQ(count_wrong(CollectiveKind::all_reduce, 1, 4, 0, p.steps[0], got), 2);
}

TEST(ReplayPattern, SumsOverManyRanksStayExactInFloat) {
  float sum = 0;
  for (int r = 0; r < 4096; ++r) sum += replay_input(r, 12345);
  double exact = 0;
  for (int r = 0; r < 4096; ++r) exact += replay_input(r, 12345);
  EXPECT_EQ(static_cast<double>(sum), exact);
}

TEST(ReplayCsv, TimedStepsWriteTheMeasuredCsvFormat) {
  ReplayPlan p = make_replay_plan(CollectiveKind::all_reduce, Bytes(1 << 20), Bytes(1 << 20), 2, 8);
  MeasurementSet set;
  set.collective = p.collective;
  set.header = {"Ranks: 8", "nccl-replay"};
  set.points.push_back(replay_point(p, p.steps[0], 50.0, Placement::out_of_place, 0));
  EXPECT_NEAR(set.points[0].algbw_gbps, 1048576.0 / 50.0 / 1e3, 1e-9);
  EXPECT_NEAR(set.points[0].busbw_gbps, set.points[0].algbw_gbps * 1.75, 1e-9);
  std::ostringstream out;
  write_measurement_csv(out, set);
  EXPECT_NE(out.str().find("all_reduce,1048576,50.00,20.972,36.700,out"), std::string::npos);
  std::vector<MeasurementSet> back = read_measurement_csv(out.str(), "replay.csv");
  EXPECT_EQ(back.at(0).ranks, 8);
}

}  // namespace
}  // namespace dtsim::validation
