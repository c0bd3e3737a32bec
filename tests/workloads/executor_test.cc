#include "workloads/executor.h"

#include <gtest/gtest.h>

#include "topology/catalog.h"

namespace dtsim::workloads {
namespace {

// Every collective takes 10 us: the tests below are about scheduling, not pricing.
class FixedCost final : public collectives::CollectiveCostModel {
 public:
  collectives::CollectiveEstimate estimate(collectives::CollectiveKind, Bytes,
                                           const collectives::Communicator&) const override {
    return {Time::us(10)};
  }
};

Op compute(int us) {
  Op op;
  op.measured = Time::us(us);
  return op;
}

Op collective(Stream s, int comm) {
  Op op;
  op.kind = OpKind::collective;
  op.stream = s;
  op.comm = comm;
  op.bytes = Bytes(1024);
  return op;
}

struct Fixture {
  topology::GpuSpec gpu = *topology::find_gpu_preset("h100-sxm");
  ComputeModelParams params = [] {
    ComputeModelParams p;
    p.comm_overlap_slowdown = 0;
    return p;
  }();
  ComputeModel cm{gpu, params};
  FixedCost cost;
  Executor ex{cm, cost};
};

Workload one_rank(int gpus = 2) {
  Workload w;
  w.total_gpus = gpus;
  w.ranks.resize(1);
  w.add_comm({{0, 1}});
  return w;
}

// Prices by size: 1 us per MiB, so different sizes cost differently.
class CostBySize final : public collectives::CollectiveCostModel {
 public:
  collectives::CollectiveEstimate estimate(collectives::CollectiveKind, Bytes bytes,
                                           const collectives::Communicator& comm) const override {
    return {Time::us(static_cast<double>(bytes.count()) / (1 << 20) + comm.size())};
  }
};

// The executor prices each distinct (communicator, collective, size) once. Its key packed them
// into one word by shifts, so an all_reduce and an all_gather whose sizes differed by the
// kinds' bits at 2^44 (16 TiB), or communicators 65,536 apart, shared one price.
TEST(Executor, DistinctCollectivesNeverShareAPrice) {
  Fixture f;
  CostBySize cost;
  Executor ex{f.cm, cost};
  Workload w = one_rank();
  Op a = collective(Stream::dp, 0);
  a.bytes = Bytes(int64_t{1} << 20);
  Op b = a;
  b.collective = collectives::CollectiveKind::all_gather;
  b.bytes = Bytes(a.bytes.count() ^ ((static_cast<int64_t>(a.collective) ^ static_cast<int64_t>(b.collective)) << 44));
  w.ranks[0].add(a);
  w.ranks[0].add(b);
  const Time expected = cost.estimate(a.collective, a.bytes, w.comms[0]).time +
                        cost.estimate(b.collective, b.bytes, w.comms[0]).time;
  EXPECT_EQ(ex.run(w).iteration, expected);
  // Communicators 65,536 apart: the second has 8 ranks, the first 2.
  Workload many = one_rank(8);
  many.comms.resize(65536, many.comms[0]);  // add_comm would fold the copies into one
  many.comms.push_back({{0, 1, 2, 3, 4, 5, 6, 7}});
  Op far = collective(Stream::dp, 65536);
  many.ranks[0].add(collective(Stream::dp, 0));
  many.ranks[0].add(far);
  EXPECT_EQ(ex.run(many).iteration, cost.estimate(far.collective, far.bytes, many.comms[0]).time +
                                        cost.estimate(far.collective, far.bytes, many.comms[65536]).time);
}

TEST(Executor, OpsOnOneStreamRunBackToBack) {
  Fixture f;
  Workload w = one_rank();
  w.ranks[0].add(compute(5));
  w.ranks[0].add(compute(7));
  EXPECT_EQ(f.ex.run(w).iteration, Time::us(12));
}

TEST(Executor, CommunicationOnItsOwnStreamOverlapsCompute) {
  Fixture f;
  Workload w = one_rank();
  w.ranks[0].add(collective(Stream::dp, 0));
  w.ranks[0].add(compute(30));
  const ExecutionResult r = f.ex.run(w);
  EXPECT_EQ(r.iteration, Time::us(30));
  EXPECT_EQ(r.breakdown.exposed_total(), Time::zero());
}

TEST(Executor, DependentCommunicationIsExposedAndChargedToItsParallelism) {
  Fixture f;
  Workload w = one_rank();
  const uint32_t a = w.ranks[0].add(compute(5));
  const uint32_t c = w.ranks[0].add(collective(Stream::tp, 0), {a});
  w.ranks[0].add(compute(5), {c});
  const ExecutionResult r = f.ex.run(w);
  EXPECT_EQ(r.iteration, Time::us(20));
  EXPECT_EQ(r.breakdown.exposed[static_cast<int>(CommCategory::tp)], Time::us(10));
  EXPECT_EQ(r.breakdown.compute, Time::us(10));
}

TEST(Executor, ReceiveCompletesWhenItsSendDoes) {
  Fixture f;
  Workload w;
  w.total_gpus = 2;
  w.ranks.resize(2);
  w.ranks[0].gpu = 0;
  w.ranks[1].gpu = 1;
  const int pair = w.add_comm({{0, 1}});
  const uint32_t a = w.ranks[0].add(compute(20));
  Op send;
  send.kind = OpKind::send;
  send.stream = Stream::pp;
  send.comm = pair;
  const uint32_t s = w.ranks[0].add(send, {a});
  Op recv;
  recv.kind = OpKind::recv;
  recv.stream = Stream::pp;
  recv.peer_rank = 0;
  recv.peer_op = static_cast<int32_t>(s);
  const uint32_t r = w.ranks[1].add(recv);
  w.ranks[1].add(compute(5), {r});
  const ExecutionResult res = f.ex.run(w);
  EXPECT_EQ(res.iteration, Time::us(35));  // 20 compute + 10 send + 5 compute
  // Rank 1 idles 30 us with nothing of its own in flight: that is pipeline bubble.
  EXPECT_EQ(res.per_rank[1].bubble, Time::us(30));
}

TEST(Executor, CollectiveWaitsForItsOtherSimulatedMember) {
  Fixture f;
  Workload w;
  w.total_gpus = 2;
  w.ranks.resize(2);
  w.ranks[0].gpu = 0;
  w.ranks[1].gpu = 1;
  const int comm = w.add_comm({{0, 1}});
  const uint32_t a = w.ranks[0].add(compute(50));
  w.ranks[0].add(collective(Stream::dp, comm), {a});
  w.ranks[1].add(collective(Stream::dp, comm));
  const ExecutionResult r = f.ex.run(w);
  EXPECT_EQ(r.iteration, Time::us(60));
}

TEST(Executor, BreakdownSumsToTheIterationTime) {
  Fixture f;
  Workload w = one_rank();
  const uint32_t a = w.ranks[0].add(compute(5));
  const uint32_t c = w.ranks[0].add(collective(Stream::tp, 0), {a});
  const uint32_t d = w.ranks[0].add(compute(3), {c});
  w.ranks[0].add(collective(Stream::dp, 0), {d});
  const ExecutionResult r = f.ex.run(w);
  EXPECT_EQ(r.breakdown.total(), r.iteration);
}

TEST(Executor, CriticalPathEndsAtTheLastOp) {
  Fixture f;
  Workload w = one_rank();
  const uint32_t a = w.ranks[0].add(compute(5));
  w.ranks[0].add(collective(Stream::dp, 0), {a});
  const ExecutionResult r = f.ex.run(w);
  ASSERT_EQ(r.critical_path.size(), 2u);
  EXPECT_EQ(r.critical_path.back().end, r.iteration);
  EXPECT_EQ(r.critical_split.exposed[static_cast<int>(CommCategory::dp)], Time::us(10));
}

TEST(Executor, ComputeOverlappingCommunicationIsSlowedByTheNamedFactor) {
  Fixture f;
  f.params.comm_overlap_slowdown = 0.5;
  ComputeModel cm(f.gpu, f.params);
  Executor ex(cm, f.cost);
  Workload w = one_rank();
  w.ranks[0].add(collective(Stream::dp, 0));
  w.ranks[0].add(compute(20));
  EXPECT_EQ(ex.run(w).iteration, Time::us(30));
}

}  // namespace
}  // namespace dtsim::workloads
