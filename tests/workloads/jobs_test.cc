// Jobs on one fabric, below the runner: where each job goes, the GPUs its nodes hold, background
// traffic as a job, and a job's op graph placed among others.
#include "workloads/jobs.h"

#include <gtest/gtest.h>

#include <vector>

#include "topology/catalog.h"

namespace dtsim::workloads {
namespace {

using V = std::vector<int>;

TEST(PlaceJobs, RangesGoWhereAskedAndPoliciesFillTheRestInListOrder) {
  const auto placed = place_jobs({{.policy = PlacementPolicy::packed, .count = 2},
                                  {.policy = PlacementPolicy::range, .first = 1, .count = 2},
                                  {.policy = PlacementPolicy::spread, .count = 2}},
                                 8);
  EXPECT_EQ(placed[1], (V{1, 2}));
  EXPECT_EQ(placed[0], (V{3, 4}));  // the first two consecutive free nodes after the range
  EXPECT_EQ(placed[2], (V{0, 6}));  // free: 0, 5, 6, 7; every other one
}

TEST(PlaceJobs, SpreadSpacesTheNodesEvenlyOverTheFreeOnes) {
  EXPECT_EQ(place_jobs({{.policy = PlacementPolicy::spread, .count = 4}}, 16)[0], (V{0, 4, 8, 12}));
  const auto two = place_jobs({{.policy = PlacementPolicy::spread, .count = 2},
                               {.policy = PlacementPolicy::spread, .count = 2}},
                              4);
  EXPECT_EQ(two[0], (V{0, 2}));
  EXPECT_EQ(two[1], (V{1, 3}));
}

TEST(PlaceJobs, RefusesOverlapsSizesAndRangesItCannotMeet) {
  auto error = [](const std::vector<NodeRequest>& r, int nodes) -> std::pair<size_t, int> {
    try {
      place_jobs(r, nodes);
    } catch (const PlacementError& e) {
      return {e.job(), e.other()};
    }
    return {99, 99};
  };
  const NodeRequest range01{.policy = PlacementPolicy::range, .first = 0, .count = 2};
  const NodeRequest range12{.policy = PlacementPolicy::range, .first = 1, .count = 2};
  EXPECT_EQ(error({range01, range12}, 4), (std::pair<size_t, int>{1, 0}));
  EXPECT_EQ(error({{.count = 5}}, 4), (std::pair<size_t, int>{0, -1}));
  EXPECT_EQ(error({range12, {.policy = PlacementPolicy::range, .first = 3, .count = 2}}, 4),
            (std::pair<size_t, int>{1, -1}));
  EXPECT_EQ(error({range12, {.count = 2}}, 4),
            (std::pair<size_t, int>{1, -1}));  // free 0 and 3: not consecutive
  EXPECT_EQ(error({range12, {.policy = PlacementPolicy::spread, .count = 2}}, 4),
            (std::pair<size_t, int>{99, 99}));
}

TEST(JobGpus, AreTheNodesGpusInNodeOrder) {
  EXPECT_EQ(job_gpus({1, 3}, 2), (V{2, 3, 6, 7}));
  EXPECT_EQ(node_list({0, 1, 2, 3, 6, 8, 9}), "0-3,6,8-9");
  EXPECT_EQ(node_list({5}), "5");
}

TEST(AddJob, PutsTheJobsRanksAndCommunicatorsOnItsGpusApartFromThoseThere) {
  Workload all;
  add_job(all, generate_traffic({.repeat = 3}, 2), {4, 5});
  add_job(all, generate_traffic({}, 2), {0, 1});
  ASSERT_EQ(all.ranks.size(), 4u);
  ASSERT_EQ(all.comms.size(), 2u);
  EXPECT_EQ(all.comms[0].ranks, (V{4, 5}));
  EXPECT_EQ(all.comms[1].ranks, (V{0, 1}));
  EXPECT_EQ(all.ranks[1].gpu, 5);
  EXPECT_EQ(all.ranks[2].gpu, 0);
  EXPECT_EQ(all.ranks[0].ops[0].comm, 0);
  EXPECT_EQ(all.ranks[0].ops[0].repeat, 3);
  EXPECT_EQ(all.ranks[3].ops[0].comm, 1);
  EXPECT_EQ(all.ranks[3].ops[0].collective, collectives::CollectiveKind::all_to_all);
  EXPECT_EQ(all.misfit(8), "");
}

// Every send and collective takes 10 us.
class TenMicroseconds final : public collectives::CollectiveCostModel {
 public:
  collectives::CollectiveEstimate estimate(collectives::CollectiveKind, Bytes,
                                           const collectives::Communicator&) const override {
    return {Time::us(10)};
  }
};

// Rank 0 computes 5 us and sends to rank 1, which computes 3 us on what it received. Three
// iterations back to back: rank 0's computes at 0, 5 and 10 us; its sends one after the other on
// their stream, ending at 15, 25 and 35 us; each receive ends with the send of its own iteration,
// and rank 1's last compute ends at 38 us (one iteration alone: 18 us).
TEST(RepeatIterations, RunsEachRanksProgramAgainWithItsSendsPairedInTheirIteration) {
  Workload w;
  w.total_gpus = 2;
  const int pair = w.add_comm({{0, 1}});
  w.ranks.resize(2);
  w.ranks[1].gpu = 1;
  Op compute;
  compute.measured = Time::us(5);
  const uint32_t c = w.ranks[0].add(compute);
  Op send;
  send.kind = OpKind::send;
  send.stream = Stream::pp;
  send.comm = pair;
  send.peer_rank = 1;
  send.bytes = Bytes(1024);
  const uint32_t s = w.ranks[0].add(send, {c});
  Op recv = send;
  recv.kind = OpKind::recv;
  recv.peer_rank = 0;
  recv.peer_op = static_cast<int32_t>(s);
  const uint32_t r = w.ranks[1].add(recv);
  compute.measured = Time::us(3);
  w.ranks[1].add(compute, {r});

  ComputeModelParams params;
  params.comm_overlap_slowdown = 0;  // rank 0 computes while it sends: at full speed here
  const ComputeModel cm(*topology::find_gpu_preset("h100-sxm"), params);
  const TenMicroseconds cost;
  const Executor ex(cm, cost);
  EXPECT_EQ(ex.run(w).iteration, Time::us(18));
  repeat_iterations(w, 3);
  ASSERT_EQ(w.ranks[0].ops.size(), 6u);
  EXPECT_EQ(w.ranks[1].ops[2].peer_op, 3);
  EXPECT_EQ(w.ranks[1].ops[4].peer_op, 5);
  EXPECT_EQ(ex.run(w).iteration, Time::us(38));
}

TEST(JobTime, IsTheLastEndOfItsRanks) {
  ExecutionResult run;
  run.rank_end = {Time::us(5), Time::us(9), Time::us(2), Time::us(3)};
  EXPECT_EQ(job_time(run, 0, 2), Time::us(9));
  EXPECT_EQ(job_time(run, 2, 2), Time::us(3));
}

}  // namespace
}  // namespace dtsim::workloads
