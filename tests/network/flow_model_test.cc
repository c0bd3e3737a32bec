#include "network/flow/flow_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "network/analytical/analytical_network.h"
#include "network/link_ledger.h"
#include "sim/rng.h"
#include "tests/network/line_cluster.h"
#include "tests/network/star_cluster.h"
#include "tests/topology/spec_helpers.h"

namespace dtsim::network {
namespace {

using testing_support::Recorder;
using testing_support::StarCluster;

// No completion window: a solve at every distinct instant, the model's exact semantics.
FlowModelOptions exact() {
  FlowModelOptions o;
  o.completion_window = Time::zero();
  return o;
}


// Starts transfer i at its start time; completions go to `recorder` with payload i.
struct Driver final : sim::EventHandler {
  Driver(NetworkModel& n, std::vector<std::pair<Time, Transfer>> plan)
      : net(n), transfers(std::move(plan)) {}
  void schedule_all(sim::Engine& e) {
    for (size_t i = 0; i < transfers.size(); ++i) e.schedule_at(transfers[i].first, *this, i);
  }
  void on_event(sim::Engine& e, uint64_t i) override {
    net.start(e, transfers[i].second, recorder, i);
  }
  NetworkModel& net;
  std::vector<std::pair<Time, Transfer>> transfers;
  Recorder recorder;
};

std::vector<std::pair<Time, Transfer>> random_plan(uint64_t seed, int gpus, int count) {
  sim::Rng rng(seed, sim::stream_id("flow-model-plan"));
  std::vector<std::pair<Time, Transfer>> plan;
  for (int i = 0; i < count; ++i) {
    const int src = static_cast<int>(rng.below(static_cast<uint64_t>(gpus)));
    const int dst = static_cast<int>(rng.below(static_cast<uint64_t>(gpus)));
    const auto bytes = Bytes(static_cast<int64_t>(1 + rng.below(8'000'000)));
    plan.push_back(
        {Time::ps(static_cast<int64_t>(rng.below(2'000'000'000))), {src, dst, bytes, rng.next()}});
  }
  return plan;
}

// The same plan on two flow models of `c` with options `first` and `second`, each on its own
// engine: their completions and solves.
struct SideBySide {
  Recorder first, second;
  uint64_t first_solves = 0, second_solves = 0;
};
SideBySide run_side_by_side(const topology::Cluster& c, const FlowModelOptions& first,
                            const FlowModelOptions& second,
                            const std::vector<std::pair<Time, Transfer>>& plan) {
  FlowNetworkModel n1(c, first), n2(c, second);
  sim::Engine e1, e2;
  Driver a(n1, plan), b(n2, plan);
  a.schedule_all(e1);
  b.schedule_all(e2);
  e1.run();
  e2.run();
  return {a.recorder, b.recorder, n1.solves(), n2.solves()};
}

// Like the packet model: an empty transfer between two GPUs is a message that takes the route's
// latencies (two 1 us links of the star); the 8-byte all_reduce row of a sweep was 0 us without it.
TEST(FlowNetworkModel, EmptyTransferBetweenTwoGpusTakesItsRoutesLatency) {
  const testing_support::StarCluster star(2, Bandwidth::gbps(400), Time::us(1));
  FlowNetworkModel net(star);
  sim::Engine engine;
  testing_support::Recorder r;
  net.start(engine, {.src_gpu = 0, .dst_gpu = 1, .bytes = Bytes(0)}, r, 0);
  net.start(engine, {.src_gpu = 1, .dst_gpu = 1, .bytes = Bytes(0)}, r, 1);
  engine.run();
  EXPECT_EQ(r.time_of(0), Time::us(2));
  EXPECT_EQ(r.time_of(1), Time::zero());
}

// A model whose flow slots pass the arena's plain part (12,000 slots of about 100 bytes): three
// groups of equal flows on one link drain in turn, each at the closed form's instant (the link's
// capacity shared equally among those left).
TEST(FlowNetworkModel, ManyFlowsOnOneLinkDrainGroupByGroup) {
  const StarCluster star(2, Bandwidth::gbps(400), Time::us(1));
  FlowNetworkModel net(star);
  sim::Engine engine;
  Recorder r;
  constexpr int kFlows = 12'000;
  constexpr int64_t kUnit = 50'000;
  for (int i = 0; i < kFlows; ++i) {
    net.start(engine, {.src_gpu = 0, .dst_gpu = 1, .bytes = Bytes(kUnit * (1 + i % 3)), .flow_hash = uint64_t(i)}, r,
              static_cast<uint64_t>(i));
  }
  engine.run();
  ASSERT_EQ(r.done.size(), static_cast<size_t>(kFlows));
  const double capacity = Bandwidth::gbps(400).bytes_per_s();
  // Group k (bytes (k + 1) x unit) drains once every flow has moved k + 1 units, the flows of
  // smaller groups having left: unit x (12,000 + 8,000 + 4,000 up to k) / capacity.
  std::vector<double> drained;
  double at = 0;
  for (int left : {kFlows, 2 * kFlows / 3, kFlows / 3}) drained.push_back(at += kUnit * left / capacity);
  for (const auto& [i, t] : r.done) {
    EXPECT_NEAR(t.seconds(), drained[i % 3] + 2e-6, 1e-9) << i;
  }
}

// Transfers that complete at one instant are notified in start order: a batch of drains whose
// start orders are every one in a range (all flows alike), and batches with gaps (two kinds of
// flow interleaved, each kind draining at once).
TEST(FlowNetworkModel, TransfersCompletingTogetherAreNotifiedInStartOrder) {
  const StarCluster star(3, Bandwidth::gbps(400), Time::us(1));
  for (const bool interleaved : {false, true}) {
    FlowNetworkModel net(star);
    sim::Engine engine;
    Recorder r;
    for (int i = 0; i < 300; ++i) {
      const bool other = interleaved && i % 2 == 1;
      net.start(engine, {.src_gpu = 0, .dst_gpu = other ? 2 : 1, .bytes = Bytes(other ? 3'000'000 : 1'000'000)}, r,
                static_cast<uint64_t>(i));
    }
    engine.run();
    ASSERT_EQ(r.done.size(), 300u);
    std::set<Time> instants;
    for (size_t k = 0; k < r.done.size(); ++k) {
      instants.insert(r.done[k].second);
      if (k > 0 && r.done[k].second == r.done[k - 1].second) {
        EXPECT_LT(r.done[k - 1].first, r.done[k].first) << "interleaved " << interleaved;
      }
    }
    EXPECT_EQ(instants.size(), interleaved ? 2u : 1u);
  }
}

TEST(FlowNetworkModel, LoneFlowTakesExactlyTheAnalyticalTime) {
  const testing_support::LineCluster c({{Bandwidth::gbytes_per_s(100), Time::us(1)},
                                        {Bandwidth::gbytes_per_s(25), Time::us(2)},
                                        {Bandwidth::gbps(400), Time::ns(700)}});
  const AnalyticalNetwork analytical(c);
  for (int64_t bytes : {1LL, 4096LL, 25'000'000LL, 123'456'789LL, 1LL << 33}) {
    FlowNetworkModel net(c);
    sim::Engine engine;
    Recorder r;
    const Transfer t{0, 3, Bytes(bytes)};
    net.start(engine, t, r, 7);
    engine.run();
    ASSERT_EQ(r.done.size(), 1u);
    EXPECT_EQ(r.done[0].second, analytical.transfer_time(t)) << bytes << " bytes";
  }
}

TEST(FlowNetworkModel, TwoFlowsSharingABottleneckEachGetHalf) {
  const testing_support::LineCluster c(
      {{Bandwidth::gbytes_per_s(100), Time::us(1)}, {Bandwidth::gbytes_per_s(10), Time::us(1)}});
  FlowNetworkModel net(c, exact());
  sim::Engine engine;
  Recorder r;
  net.start(engine, {0, 2, Bytes(10'000'000)}, r, 1);
  net.start(engine, {1, 2, Bytes(10'000'000)}, r, 2);
  engine.run(Time::zero());
  ASSERT_EQ(net.active_flows(), 2u);
  EXPECT_EQ(net.rate_of(0), 5e9);
  EXPECT_EQ(net.rate_of(1), 5e9);
  engine.run();
  EXPECT_EQ(r.time_of(1), Time::us(2) + Time::ms(2));
  EXPECT_EQ(r.time_of(2), Time::us(1) + Time::ms(2));
}

// A transfer's rate cap (Transfer::max_rate, one channel's thread block) holds it below its
// max-min share; the other flow on the bottleneck takes the rest.
TEST(FlowNetworkModel, CappedTransferRunsAtItsCapAndTheOtherTakesTheRest) {
  const testing_support::LineCluster c(
      {{Bandwidth::gbytes_per_s(100), Time::us(1)}, {Bandwidth::gbytes_per_s(10), Time::us(1)}});
  FlowNetworkModel net(c, exact());
  sim::Engine engine;
  Recorder r;
  net.start(engine, {.src_gpu = 0, .dst_gpu = 2, .bytes = Bytes(10'000'000), .max_rate = 2e9}, r,
            1);
  net.start(engine, {1, 2, Bytes(10'000'000)}, r, 2);
  engine.run(Time::zero());
  ASSERT_EQ(net.active_flows(), 2u);
  EXPECT_EQ(net.rate_of(0), 2e9);
  EXPECT_EQ(net.rate_of(1), 8e9);
}

TEST(FlowNetworkModel, IncastOfNFlowsIntoOneNicTakesNTimesAsLong) {
  constexpr int kSenders = 7;
  const StarCluster c(kSenders + 1, Bandwidth::gbytes_per_s(50), Time::us(1));
  const Bytes bytes(50'000'000);  // 1 ms alone
  FlowNetworkModel net(c);
  sim::Engine engine;
  Recorder r;
  for (int s = 1; s <= kSenders; ++s) net.start(engine, {s, 0, bytes}, r, static_cast<uint64_t>(s));
  engine.run();
  ASSERT_EQ(r.done.size(), static_cast<size_t>(kSenders));
  for (const auto& [payload, at] : r.done)
    EXPECT_EQ(at, Time::us(2) + Time::ms(1) * kSenders) << payload;
}

TEST(FlowNetworkModel, LateFlowSlowsTheFlowAlreadyRunning) {
  const testing_support::LineCluster c({{Bandwidth::gbytes_per_s(10), Time::zero()}});
  FlowNetworkModel net(c, exact());
  sim::Engine engine;
  Driver d(net,
           {{Time::zero(), {0, 1, Bytes(10'000'000)}}, {Time::us(500), {0, 1, Bytes(10'000'000)}}});
  d.schedule_all(engine);
  engine.run();
  // The first flow has 5 MB left when the second joins; both then drain at 5 GB/s.
  EXPECT_EQ(d.recorder.time_of(0), Time::us(1500));
  EXPECT_EQ(d.recorder.time_of(1), Time::us(2000));
}

// With the default window (1 ns) the late flow joins up to a nanosecond after it starts, credited
// from its start: both land within the window of the exact times.
TEST(FlowNetworkModel, CompletionWindowMovesTimesByLessThanItself) {
  const testing_support::LineCluster c({{Bandwidth::gbytes_per_s(10), Time::zero()}});
  FlowNetworkModel net(c);
  sim::Engine engine;
  Driver d(net,
           {{Time::zero(), {0, 1, Bytes(10'000'000)}}, {Time::us(500), {0, 1, Bytes(10'000'000)}}});
  d.schedule_all(engine);
  engine.run();
  const Time window = FlowModelOptions{}.completion_window;
  EXPECT_EQ(window, Time::ns(1));
  EXPECT_LE(std::abs((d.recorder.time_of(0) - Time::us(1500)).ps()), window.ps());
  EXPECT_LE(std::abs((d.recorder.time_of(1) - Time::us(2000)).ps()), window.ps());
}

// A wave of transfers that start and drain picoseconds apart (a collective's step: the receives
// of the step before complete a path latency apart) costs one solve per wave with the window and
// one per distinct instant without it; the completion times agree within the window.
TEST(FlowNetworkModel, AWaveOfTransfersPicosecondsApartSharesOneSolve) {
  const StarCluster c(9, Bandwidth::gbytes_per_s(50), Time::us(1));
  std::vector<std::pair<Time, Transfer>> plan;
  for (int s = 1; s <= 8; ++s) plan.push_back({Time::ps(37 * s), {s, 0, Bytes(1'000'000)}});
  const SideBySide r = run_side_by_side(c, {}, exact(), plan);
  EXPECT_EQ(r.first_solves, 1u);
  EXPECT_GE(r.second_solves, 8u);
  for (uint64_t i = 0; i < plan.size(); ++i) {
    EXPECT_LE(std::abs((r.first.time_of(i) - r.second.time_of(i)).ps()), Time::ns(1).ps()) << i;
  }
}

// With a relative precision a flow that would drain within that share of its run after another
// drains with it, in one solve, and its transfer completes when its bytes drain at its last rate:
// later than the exact model's (which gives it the whole link for its last bytes), never sooner.
TEST(FlowNetworkModel, ADrainBatchedByThePrecisionCompletesAtItsLastRate) {
  const testing_support::LineCluster c({{Bandwidth::gbytes_per_s(10), Time::zero()}});
  FlowModelOptions relative = exact();
  relative.completion_precision = 1e-4;  // 200 ns at 2 ms
  const SideBySide r = run_side_by_side(c, relative, exact(),
                                        {{Time::zero(), {0, 1, Bytes(10'000'000)}},
                                         {Time::zero(), {0, 1, Bytes(10'000'100)}}});
  // Both at 5 GB/s: the first drains at 2 ms, the second 100 bytes later, 20 ns at 5 GB/s or
  // 10 ns alone on the link.
  EXPECT_EQ(r.first.time_of(0), Time::ms(2));
  EXPECT_EQ(r.first.time_of(1), Time::ms(2) + Time::ns(20));
  EXPECT_EQ(r.second.time_of(1), Time::ms(2) + Time::ns(10));
  EXPECT_EQ(r.first_solves, 1u);
  EXPECT_EQ(r.second_solves, 2u);
}

// The relative window is each flow's own: at a drain, an old flow that drains later but within
// its share of its long run drains in the same solve, while a young flow that would drain sooner
// waits for its own event. One 12 GB/s link: X and C start at 0, B at 1.9 ms; X drains at 2 ms
// (6 GB/s each, then 4 GB/s each for the last 100 us), when C has 60 ns left (its window at
// precision 1e-4: 200 ns) and B 30 ns (its window: 10 ns).
TEST(FlowNetworkModel, TheRelativeWindowIsMeasuredFromEachFlowsOwnStart) {
  const testing_support::LineCluster c({{Bandwidth::gbytes_per_s(12), Time::zero()}});
  FlowModelOptions relative = exact();
  relative.completion_precision = 1e-4;
  const std::vector<std::pair<Time, Transfer>> plan = {{Time::zero(), {0, 1, Bytes(11'800'000)}},   // X
                                                       {Time::zero(), {0, 1, Bytes(11'800'240)}},   // C
                                                       {Time::us(1900), {0, 1, Bytes(400'120)}}};  // B
  const SideBySide r = run_side_by_side(c, relative, exact(), plan);
  const auto near = [](Time a, Time b) { return std::abs((a - b).ps()) <= 1; };
  // Exact: B (120 bytes left, at 6 GB/s once X left) at 2 ms + 20 ns, then C alone at 12 GB/s.
  EXPECT_TRUE(near(r.second.time_of(0), Time::ms(2))) << r.second.time_of(0).ps();
  EXPECT_TRUE(near(r.second.time_of(2), Time::ms(2) + Time::ns(20))) << r.second.time_of(2).ps();
  EXPECT_TRUE(near(r.second.time_of(1), Time::ms(2) + Time::ns(30))) << r.second.time_of(1).ps();
  // Relative: C leaves with X and completes at its last rate, 2 ms + 60 ns; B, alone from 2 ms,
  // drains its 120 bytes at 12 GB/s.
  EXPECT_TRUE(near(r.first.time_of(0), Time::ms(2))) << r.first.time_of(0).ps();
  EXPECT_TRUE(near(r.first.time_of(1), Time::ms(2) + Time::ns(60))) << r.first.time_of(1).ps();
  EXPECT_TRUE(near(r.first.time_of(2), Time::ms(2) + Time::ns(10))) << r.first.time_of(2).ps();
}

// The relative precision's bound, against the exact model on random transfers over an ECMP
// fat-tree (collisions on the spines give unequal rates, so drains spread): every completion
// moves by at most the precision times the run's makespan, and the makespan by at most the
// precision times itself.
TEST(FlowNetworkModel, CompletionPrecisionMovesEveryCompletionByLessThanItsBound) {
  const auto fat_tree = topology::build_cluster(topology::testing::two_spine_fat_tree(topology::Routing::ecmp));
  for (const double precision : {1e-4, 1e-3}) {
    for (uint64_t seed : {11, 12, 13}) {
      const std::vector<std::pair<Time, Transfer>> plan = random_plan(seed, fat_tree->gpu_count(), 400);
      FlowModelOptions relative = exact();
      relative.completion_precision = precision;
      const SideBySide r = run_side_by_side(*fat_tree, relative, exact(), plan);
      ASSERT_EQ(r.first.done.size(), plan.size());
      Time makespan_a, makespan_b;
      for (const auto& [i, at] : r.first.done) makespan_a = std::max(makespan_a, at);
      for (const auto& [i, at] : r.second.done) makespan_b = std::max(makespan_b, at);
      double worst = 0;
      for (uint64_t i = 0; i < plan.size(); ++i) {
        worst = std::max(worst, std::abs((r.first.time_of(i) - r.second.time_of(i)).seconds()));
      }
      EXPECT_LE(worst, precision * makespan_b.seconds()) << "precision " << precision << " seed " << seed;
      EXPECT_LE(std::abs((makespan_a - makespan_b).seconds()), precision * makespan_b.seconds());
      EXPECT_LT(r.first_solves, r.second_solves);
    }
  }
}

TEST(FlowNetworkModel, FlowsStartedAtTheSameInstantShareOneSolve) {
  const StarCluster c(4, Bandwidth::gbytes_per_s(50), Time::us(1));
  FlowNetworkModel net(c);
  sim::Engine engine;
  Recorder r;
  for (int s = 1; s < 4; ++s)
    net.start(engine, {s, 0, Bytes(1'000'000)}, r, static_cast<uint64_t>(s));
  engine.run();
  EXPECT_EQ(net.solves(), 1u);
}

TEST(FlowNetworkModel, BytesDeliveredEqualBytesSent) {
  const StarCluster c(16, Bandwidth::gbytes_per_s(25), Time::us(1));
  FlowNetworkModel net(c);
  sim::Engine engine;
  Driver d(net, random_plan(3, 16, 400));
  d.schedule_all(engine);
  engine.run();
  Bytes sent;
  for (const auto& [at, t] : d.transfers) sent += t.bytes;
  EXPECT_EQ(net.bytes_delivered(), sent);
  EXPECT_EQ(d.recorder.done.size(), d.transfers.size());
  EXPECT_EQ(net.active_flows(), 0u);
}

TEST(FlowNetworkModel, NoLinkRunsAboveItsCapacityAtAnySolve) {
  const StarCluster c(16, Bandwidth::gbytes_per_s(25), Time::us(1));
  FlowNetworkModel net(c);
  sim::Engine engine;
  Driver d(net, random_plan(4, 16, 400));
  d.schedule_all(engine);
  engine.run();
  EXPECT_GT(net.solves(), 100u);
  EXPECT_LE(net.peak_link_utilization(), 1 + 1e-9);
  EXPECT_GE(net.peak_link_utilization(), 1 - 1e-9);  // contention did fill some link
}

TEST(FlowNetworkModel, NoTransferFinishesBeforeItWouldAlone) {
  const StarCluster c(16, Bandwidth::gbytes_per_s(25), Time::us(1));
  const AnalyticalNetwork analytical(c);
  FlowNetworkModel net(c);
  sim::Engine engine;
  Driver d(net, random_plan(5, 16, 300));
  d.schedule_all(engine);
  engine.run();
  for (const auto& [i, at] : d.recorder.done) {
    const auto& [start, t] = d.transfers[i];
    EXPECT_GE(at, start + analytical.transfer_time(t)) << "transfer " << i;
  }
}

// A slot keeps its crossings' room for its next flow and takes new room where the next route is
// longer: transfers inside nodes (NVLink, short routes) that all finish, then transfers between
// nodes (longer routes, capped: one crossing more) on their freed slots, complete exactly when
// the second wave does on a fresh model.
TEST(FlowNetworkModel, FlowsOnReusedSlotsRunAsOnFreshOnes) {
  auto c = topology::build_cluster(topology::testing::hgx(4, topology::FabricKind::fat_tree, 8, 2));
  std::vector<std::pair<Time, Transfer>> first, second;
  for (int g = 0; g < 32; ++g) {
    first.push_back({Time::zero(), {g, g / 8 * 8 + (g + 3) % 8, Bytes::mib(1), static_cast<uint64_t>(g)}});
    Transfer t{g, (g + 13) % 32, Bytes::mib(2), static_cast<uint64_t>(g) * 77};
    t.max_rate = g % 2 == 0 ? 5e9 : 0;
    second.push_back({Time::ms(50), t});
  }
  std::vector<std::pair<Time, Transfer>> both = first;
  both.insert(both.end(), second.begin(), second.end());
  FlowNetworkModel reused_net(*c, exact());
  sim::Engine reused_engine;
  Driver reused(reused_net, both);
  reused.schedule_all(reused_engine);
  reused_engine.run();
  FlowNetworkModel fresh_net(*c, exact());
  sim::Engine fresh_engine;
  Driver fresh(fresh_net, second);
  fresh.schedule_all(fresh_engine);
  fresh_engine.run();
  ASSERT_EQ(fresh.recorder.done.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) EXPECT_LT(reused.recorder.time_of(i), Time::ms(50));
  for (size_t i = 0; i < second.size(); ++i) {
    EXPECT_EQ(reused.recorder.time_of(first.size() + i), fresh.recorder.time_of(i)) << "transfer " << i;
  }
}

TEST(FlowNetworkModel, SameInputGivesTheSameFingerprint) {
  auto run = [] {
    const StarCluster c(16, Bandwidth::gbytes_per_s(25), Time::us(1));
    FlowNetworkModel net(c);
    sim::Engine engine;
    Driver d(net, random_plan(6, 16, 300));
    d.schedule_all(engine);
    engine.run();
    return std::pair(engine.fingerprint(), d.recorder.done);
  };
  const auto first = run();
  const auto second = run();
  EXPECT_EQ(first.first, second.first);
  EXPECT_EQ(first.second, second.second);
}

TEST(FlowNetworkModel, TransferToItselfIsInstant) {
  const testing_support::LineCluster c({{Bandwidth::gbytes_per_s(10), Time::us(1)}});
  FlowNetworkModel net(c);
  sim::Engine engine;
  Recorder r;
  net.start(engine, {1, 1, Bytes(1 << 20)}, r, 1);
  engine.run();
  ASSERT_EQ(r.done.size(), 1u);
  EXPECT_EQ(r.done[0].second, Time::zero());
  EXPECT_EQ(net.bytes_delivered(), Bytes(1 << 20));
}

// Counts the solves handed to it and answers them with the CPU solver.
class CountingSolver final : public flow::FlowSolver {
 public:
  std::string_view name() const override { return "counting"; }
  void solve(const flow::FlowProblem& p, std::span<double> rates) override {
    ++calls;
    cpu.solve(p, rates);
  }
  int calls = 0;
  flow::CpuMaxMinSolver cpu;
};

TEST(FlowNetworkModel, OnlySolvesWithManyFlowsGoToTheAccelerator) {
  const StarCluster c(8, Bandwidth::gbytes_per_s(50), Time::us(1));
  auto accelerator = std::make_shared<CountingSolver>();
  FlowNetworkModel net(c, {.accelerator = accelerator,
                           .accelerator_min_flows = 3,
                           .host_staged_rate = 0,
                           .link_efficiency = {}});
  sim::Engine engine;
  Driver d(net, {{Time::zero(), {1, 0, Bytes(1'000'000)}},
                 {Time::zero(), {2, 0, Bytes(2'000'000)}},
                 {Time::us(1), {3, 0, Bytes(3'000'000)}}});
  d.schedule_all(engine);
  engine.run();
  // Two flows (CPU), three flows (accelerator), then two and one as they drain (CPU).
  EXPECT_EQ(accelerator->calls, 1);
  EXPECT_EQ(net.accelerated_solves(), 1u);
  EXPECT_EQ(net.solves(), 4u);
}

// ECMP keeps one route per transfer; adaptive routing (and `auto` on EFA) sprays a transfer
// between nodes over the equal-cost routes, and never one inside a node.
TEST(TransferPaths, FollowTheClustersRoutingMode) {
  using topology::Routing;
  const Transfer across{.src_gpu = 0, .dst_gpu = 7, .bytes = Bytes::mib(1), .flow_hash = 3};
  auto routes = [&](Routing routing, topology::NicKind nic, const Transfer& t) {
    topology::ClusterSpec spec = topology::testing::two_spine_fat_tree(routing);
    spec.nic.kind = nic;
    return transfer_paths(*topology::build_cluster(spec), t);
  };
  const auto ib = topology::NicKind::infiniband, efa = topology::NicKind::efa;
  EXPECT_EQ(routes(Routing::ecmp, efa, across).size(), 1u);
  EXPECT_EQ(routes(Routing::automatic, ib, across).size(), 1u);
  EXPECT_EQ(routes(Routing::adaptive, ib, across).size(), 2u);
  EXPECT_EQ(routes(Routing::automatic, efa, across).size(), 2u);
  EXPECT_EQ(routes(Routing::adaptive, ib, across).front(), routes(Routing::ecmp, ib, across).front());
  EXPECT_TRUE(routes(Routing::adaptive, ib, {.src_gpu = 0, .dst_gpu = 7, .bytes = Bytes(0)}).empty());
  EXPECT_EQ(spray_share(Bytes(10), 0, 4), Bytes(3));
  EXPECT_EQ(spray_share(Bytes(10), 2, 4), Bytes(2));
}

// Every node sends to the node two leaves away: two senders per leaf, two uplinks. Hashed ECMP
// puts some pairs on one uplink; spraying halves each transfer over both, so every transfer runs
// at its NIC's rate, as the closed form assumes.
std::vector<std::pair<Time, Transfer>> cross_leaf_permutation(Bytes bytes) {
  std::vector<std::pair<Time, Transfer>> plan;
  for (int i = 0; i < 8; ++i) {
    plan.push_back({Time::zero(), {.src_gpu = i, .dst_gpu = (i + 4) % 8, .bytes = bytes, .flow_hash = static_cast<uint64_t>(i)}});
  }
  return plan;
}

Time slowest(topology::Routing routing, const std::vector<std::pair<Time, Transfer>>& plan, Bytes* delivered = nullptr) {
  const auto c = topology::build_cluster(topology::testing::two_spine_fat_tree(routing));
  FlowNetworkModel net(*c);
  Driver d(net, plan);
  sim::Engine engine;
  d.schedule_all(engine);
  engine.run();
  EXPECT_EQ(d.recorder.done.size(), plan.size());
  if (delivered) *delivered = net.bytes_delivered();
  Time last;
  for (const auto& [payload, at] : d.recorder.done) last = std::max(last, at);
  return last;
}

TEST(FlowNetworkModel, SprayingReachesTheNicBoundWhereEcmpCollides) {
  const Bytes bytes = Bytes::mib(64);
  const auto c = topology::build_cluster(topology::testing::two_spine_fat_tree(topology::Routing::ecmp));
  const std::vector<topology::LinkId> route = c->route(0, 4, 0);
  double nic_rate = 1e300, latency = 0;
  for (topology::LinkId l : route) {
    nic_rate = std::min(nic_rate, c->link(l).bandwidth.bytes_per_s());
    latency += c->link(l).latency.seconds();
  }
  ASSERT_EQ(nic_rate, c->spec().nic.bandwidth.bytes_per_s());
  const double nic_bound = bytes.as_double() / nic_rate + latency;
  Bytes delivered;
  const Time adaptive = slowest(topology::Routing::adaptive, cross_leaf_permutation(bytes), &delivered);
  EXPECT_NEAR(adaptive.seconds(), nic_bound, 1e-9 * nic_bound);
  EXPECT_EQ(delivered, bytes * 8);  // each transfer's bytes once, not once per sub-flow
  EXPECT_GT(slowest(topology::Routing::ecmp, cross_leaf_permutation(bytes)).seconds(), 1.5 * nic_bound);
}

// Alone, a sprayed transfer's sub-flows share its NIC and finish together: exactly the time of
// one flow on one route.
TEST(FlowNetworkModel, LoneSprayedTransferTakesExactlyTheAnalyticalTime) {
  const auto c = topology::build_cluster(topology::testing::two_spine_fat_tree(topology::Routing::adaptive));
  const AnalyticalNetwork analytical(*c);
  for (int64_t bytes : {2LL, 4096LL, 25'000'000LL, 1LL << 33}) {
    const Transfer t{.src_gpu = 1, .dst_gpu = 6, .bytes = Bytes(bytes), .flow_hash = 5};
    ASSERT_EQ(transfer_paths(*c, t).size(), 2u);
    Bytes delivered;
    EXPECT_EQ(slowest(topology::Routing::adaptive, {{Time::zero(), t}}, &delivered), analytical.transfer_time(t)) << bytes;
    EXPECT_EQ(delivered, Bytes(bytes));
  }
}

// Fairness is per transfer, not per route: GPU 0 sends 64 MiB to its leaf neighbour (one route)
// and 64 MiB across the spines (sprayed over two) at once. Each gets half of GPU 0's NIC and both
// finish together, as under ECMP; with every sub-flow weighing 1 the sprayed one took two thirds
// of the NIC and finished at 2018 us, the other at 2688 us.
TEST(FlowNetworkModel, SprayedTransferTakesOneShareOfANicItShares) {
  const Bytes bytes = Bytes::mib(64);
  const std::vector<std::pair<Time, Transfer>> plan = {
      {Time::zero(), {.src_gpu = 0, .dst_gpu = 1, .bytes = bytes, .flow_hash = 1}},
      {Time::zero(), {.src_gpu = 0, .dst_gpu = 4, .bytes = bytes, .flow_hash = 2}}};
  for (const auto routing : {topology::Routing::ecmp, topology::Routing::adaptive}) {
    const auto c = topology::build_cluster(topology::testing::two_spine_fat_tree(routing));
    ASSERT_EQ(transfer_paths(*c, plan[1].second).size(), routing == topology::Routing::adaptive ? 2u : 1u);
    FlowNetworkModel net(*c);
    Driver d(net, plan);
    sim::Engine engine;
    d.schedule_all(engine);
    engine.run();
    ASSERT_EQ(d.recorder.done.size(), 2u);
    const double nic = c->spec().nic.bandwidth.bytes_per_s();
    for (const auto& [payload, at] : d.recorder.done) {
      // Both at half the NIC's rate throughout, plus their paths' latencies (a few us).
      EXPECT_NEAR(at.seconds(), 2 * bytes.as_double() / nic, 10e-6) << payload;
    }
  }
}

// The ledger adds each transfer's bytes to the links of its path, both directions apart, and
// leaves the timing to the model it wraps.
TEST(LinkLedger, CountsBytesOnEveryLinkOfThePathAndLeavesTheTimingAlone) {
  const testing_support::LineCluster c(
      {{Bandwidth::gbytes_per_s(10), Time::zero()}, {Bandwidth::gbytes_per_s(10), Time::zero()}});
  FlowNetworkModel flows(c);
  LinkLedger ledger(c, flows);
  EXPECT_EQ(ledger.name(), "flow");
  Driver d(ledger, {{Time::zero(), {0, 2, Bytes(1'000'000)}}, {Time::zero(), {1, 0, Bytes(500'000)}}});
  sim::Engine engine;
  d.schedule_all(engine);
  engine.run();
  ASSERT_EQ(d.recorder.done.size(), 2u);
  const Time elapsed = engine.now();
  EXPECT_EQ(elapsed, Time::us(100));  // 1 MB at 10 GB/s; the reverse transfer shares no link
  const std::vector<LinkLoad> loads = ledger.loads(elapsed);
  ASSERT_EQ(loads.size(), 3u);  // gpu0->gpu1, gpu1->gpu0, gpu1->gpu2
  EXPECT_EQ(loads[0].name, "gpu0->gpu1");
  EXPECT_EQ(loads[0].bytes, Bytes(1'000'000));
  EXPECT_NEAR(loads[0].utilisation, 1.0, 1e-9);
  EXPECT_EQ(loads[1].name, "gpu1->gpu0");
  EXPECT_EQ(loads[1].bytes, Bytes(500'000));
  EXPECT_NEAR(loads[1].utilisation, 0.5, 1e-9);
  EXPECT_EQ(loads[2].name, "gpu1->gpu2");
  EXPECT_EQ(ledger.bytes_delivered(), Bytes(1'500'000));
  ledger.clear();
  EXPECT_TRUE(ledger.loads(elapsed).empty());
}

// The ledger times each link's busy spell: the union of the intervals a transfer crossing it
// was in flight. Two transfers on gpu0->gpu1 at 0 and at 150 us, 1 MB each at 10 GB/s, take 100
// us each: busy 200 us of the 250 elapsed; one of 0.5 MB on gpu1->gpu0 from 20 us, 50 us.
TEST(LinkLedger, TimesHowLongEachLinkHadATransferInFlight) {
  const testing_support::LineCluster c(
      {{Bandwidth::gbytes_per_s(10), Time::zero()}, {Bandwidth::gbytes_per_s(10), Time::zero()}});
  FlowNetworkModel flows(c);
  LinkLedger ledger(c, flows);
  Driver d(ledger, {{Time::zero(), {0, 1, Bytes(1'000'000)}},
                    {Time::us(150), {0, 1, Bytes(1'000'000)}},
                    {Time::us(20), {1, 0, Bytes(500'000)}}});
  sim::Engine engine;
  d.schedule_all(engine);
  engine.run();
  ASSERT_EQ(d.recorder.done.size(), 3u);
  EXPECT_EQ(engine.now(), Time::us(250));
  const std::vector<LinkLoad> loads = ledger.loads(engine.now());
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(loads[0].name, "gpu0->gpu1");
  EXPECT_NEAR(loads[0].busy.us(), 200, 1e-6);
  EXPECT_EQ(loads[1].name, "gpu1->gpu0");
  EXPECT_NEAR(loads[1].busy.us(), 50, 1e-6);
}

// A sprayed transfer's bytes are split over its routes in the ledger as the flow model splits
// them: half through each spine (up from the source's leaf, down to the destination's), the
// whole on every other link.
TEST(LinkLedger, SplitsASprayedTransferOverItsRoutes) {
  const auto c = topology::build_cluster(topology::testing::two_spine_fat_tree(topology::Routing::adaptive));
  FlowNetworkModel flows(*c);
  LinkLedger ledger(*c, flows);
  Driver d(ledger, {{Time::zero(), {.src_gpu = 0, .dst_gpu = 7, .bytes = Bytes(1'000'001)}}});
  sim::Engine engine;
  d.schedule_all(engine);
  engine.run();
  int via_spine = 0;
  for (const LinkLoad& l : ledger.loads(engine.now())) {
    if (c->device(c->link(l.link).from).tier == 0 && c->device(c->link(l.link).to).tier == 0) {
      EXPECT_EQ(l.bytes, Bytes(1'000'001)) << l.name;
      continue;
    }
    ++via_spine;
    EXPECT_NEAR(l.bytes.as_double(), 500'000.5, 0.5) << l.name;
  }
  EXPECT_EQ(via_spine, 4);
}

// Incremental solves. The oracle is one full CpuMaxMinSolver solve of every active flow, built
// here from the transfers as the model's semantics define the problem: each flow on its route
// (transfer_paths), weighing 1 / its transfer's routes; a host-staged copy also on its GPU pair's
// virtual link of host_staged_rate; a capped transfer's sub-flows on one virtual link of its cap.
std::vector<double> full_solve_rates(const topology::Cluster& c, const FlowModelOptions& o,
                                     const FlowNetworkModel& net,
                                     const std::vector<Transfer>& transfers) {
  flow::FlowProblem p;
  std::map<std::pair<int, int64_t>, uint32_t> dense;  // (cluster link 0 | staged pair 1 | cap 2, id)
  auto link = [&](int kind, int64_t id, double capacity) {
    auto [it, fresh] = dense.try_emplace({kind, id}, static_cast<uint32_t>(p.capacity.size()));
    if (fresh) p.capacity.push_back(capacity);
    return it->second;
  };
  std::vector<uint32_t> path;
  for (size_t i = 0; i < net.active_flows(); ++i) {
    const FlowNetworkModel::FlowId id = net.flow_id_of(i);
    const Transfer& t = transfers.at(id.transfer);
    const auto routes = transfer_paths(c, t);
    path.clear();
    for (topology::LinkId l : routes.at(id.route)) {
      path.push_back(link(0, l, c.link(l).bandwidth.bytes_per_s() * o.link_efficiency.of(c.link(l).kind)));
    }
    if (o.host_staged_rate > 0 && c.node_of(t.src_gpu) == c.node_of(t.dst_gpu)) {
      path.push_back(link(1, int64_t{t.src_gpu} * c.gpu_count() + t.dst_gpu, o.host_staged_rate));
    }
    if (t.max_rate > 0) path.push_back(link(2, static_cast<int64_t>(id.transfer), t.max_rate));
    p.add_flow(path, 1.0 / static_cast<double>(routes.size()));
  }
  p.build_link_index();
  std::vector<double> rates(p.flow_count());
  flow::CpuMaxMinSolver().solve(p, rates);
  return rates;
}

// Transfers between distinct GPUs at random instants over `span`, of 1 B .. 8 MB, `capped` in 4
// of them capped at 1..max_cap GB/s.
std::vector<std::pair<Time, Transfer>> random_capped_plan(uint64_t seed, int gpus, int count, Time span,
                                                          uint64_t capped = 1, uint64_t max_cap = 40) {
  sim::Rng rng(seed, sim::stream_id("flow-model-incremental-plan"));
  std::vector<std::pair<Time, Transfer>> plan;
  for (int i = 0; i < count; ++i) {
    const int src = static_cast<int>(rng.below(static_cast<uint64_t>(gpus)));
    const int dst = (src + 1 + static_cast<int>(rng.below(static_cast<uint64_t>(gpus - 1)))) % gpus;
    Transfer t{src, dst, Bytes(static_cast<int64_t>(1 + rng.below(8'000'000))), rng.next()};
    if (rng.below(4) < capped) t.max_rate = static_cast<double>(1 + rng.below(max_cap)) * 1e9;
    plan.push_back({Time::ps(static_cast<int64_t>(rng.below(static_cast<uint64_t>(span.ps())))), t});
  }
  return plan;
}

// Starts the plan's transfers and stops the engine after each start and each completion, so the
// test sees the model between events.
struct SteppedDriver final : sim::EventHandler {
  static constexpr uint64_t kProbe = UINT64_MAX;
  struct Done final : sim::EventHandler {
    void on_event(sim::Engine& e, uint64_t payload) override {
      at.emplace(payload, e.now());
      e.stop();
    }
    std::map<uint64_t, Time> at;
  };
  SteppedDriver(FlowNetworkModel& n, std::vector<std::pair<Time, Transfer>> p)
      : net(n), plan(std::move(p)) {}
  void schedule_all(sim::Engine& e) {
    for (size_t i = 0; i < plan.size(); ++i) e.schedule_at(plan[i].first, *this, i);
  }
  void on_event(sim::Engine& e, uint64_t i) override {
    if (i == kProbe) {
      e.stop();
      return;
    }
    net.start(e, plan[i].second, done, i);
    started.push_back(plan[i].second);  // the model numbers transfers in this order
    e.schedule_at(e.now(), *this, kProbe);  // after the solve a start schedules at this instant
  }
  FlowNetworkModel& net;
  std::vector<std::pair<Time, Transfer>> plan;
  std::vector<Transfer> started;
  Done done;
};

// Runs the plan on the incremental model and, whenever the engine stops with every active flow
// solved, compares each flow's rate with the full solve's; returns how many states it compared.
int expect_full_solve_rates_after_every_event(const topology::Cluster& c, FlowModelOptions o,
                                              std::vector<std::pair<Time, Transfer>> plan) {
  o.incremental = true;
  FlowNetworkModel net(c, o);
  SteppedDriver d(net, std::move(plan));
  sim::Engine engine;
  d.schedule_all(engine);
  int compared = 0;
  while (!engine.idle()) {
    engine.run();
    if (net.awaiting_solve()) continue;
    const std::vector<double> oracle = full_solve_rates(c, o, net, d.started);
    for (size_t i = 0; i < oracle.size(); ++i) {
      EXPECT_NEAR(net.rate_of(i), oracle[i], 1e-9 * oracle[i])
          << "flow " << i << " of " << oracle.size() << " at " << engine.now().ps() << " ps";
    }
    if (testing::Test::HasFailure()) return compared;
    ++compared;
  }
  EXPECT_EQ(d.done.at.size(), d.plan.size());
  EXPECT_EQ(net.active_flows(), 0u);
  return compared;
}

TEST(FlowNetworkModelIncremental, RatesEqualAFullSolveOnAStarAfterEveryEvent) {
  const StarCluster c(32, Bandwidth::gbytes_per_s(25), Time::zero());
  for (uint64_t seed : {1, 2, 3}) {
    EXPECT_GT(expect_full_solve_rates_after_every_event(c, exact(), random_capped_plan(seed, 32, 400, Time::ms(4))), 500)
        << "seed " << seed;
  }
}

// Most transfers capped below a link's rate: links are often slack, and a start that fills one
// has to take in the flows beyond it.
TEST(FlowNetworkModelIncremental, RatesEqualAFullSolveWhenMostTransfersAreCapped) {
  const StarCluster c(16, Bandwidth::gbytes_per_s(25), Time::zero());
  for (uint64_t seed : {11, 12, 13}) {
    EXPECT_GT(expect_full_solve_rates_after_every_event(c, exact(), random_capped_plan(seed, 16, 400, Time::ms(4), 3, 12)), 500)
        << "seed " << seed;
  }
}

TEST(FlowNetworkModelIncremental, RatesEqualAFullSolveOnASprayingFatTreeAfterEveryEvent) {
  const auto c = topology::build_cluster(topology::testing::two_spine_fat_tree(topology::Routing::adaptive));
  for (uint64_t seed : {4, 5}) {
    EXPECT_GT(expect_full_solve_rates_after_every_event(*c, exact(), random_capped_plan(seed, 8, 300, Time::ms(2))), 300)
        << "seed " << seed;
  }
}

// Two 8-GPU nodes: copies inside a node are host-staged (one virtual link per GPU pair), links run
// below line rate, transfers between the nodes are sprayed over their NICs' routes, and the
// default completion window batches starts and drains.
TEST(FlowNetworkModelIncremental, RatesEqualAFullSolveWithHostStagingSprayingAndAWindow) {
  topology::ClusterSpec spec = topology::testing::hgx(2, topology::FabricKind::fat_tree);
  spec.fabric.routing = topology::Routing::adaptive;
  const auto c = topology::build_cluster(spec);
  FlowModelOptions o;
  o.host_staged_rate = 20e9;
  o.link_efficiency = {.nvlink = 0.8, .pcie = 0.9, .network = 0.95};
  EXPECT_GT(expect_full_solve_rates_after_every_event(*c, o, random_capped_plan(6, c->gpu_count(), 300, Time::ms(2))), 100);
}

// Runs a plan with incremental and with full solves; the completion time of every transfer agrees
// within a picosecond or 1e-9 of itself.
void expect_full_and_incremental_runs_agree(const topology::Cluster& c, FlowModelOptions o,
                                            const std::vector<std::pair<Time, Transfer>>& plan) {
  auto run = [&](bool incremental) {
    o.incremental = incremental;
    FlowNetworkModel net(c, o);
    Driver d(net, plan);
    sim::Engine engine;
    d.schedule_all(engine);
    engine.run();
    EXPECT_EQ(d.recorder.done.size(), plan.size());
    EXPECT_EQ(net.active_flows(), 0u);
    std::map<uint64_t, Time> at(d.recorder.done.begin(), d.recorder.done.end());
    return std::pair(at, net.bytes_delivered());
  };
  const auto [full, full_bytes] = run(false);
  const auto [incremental, incremental_bytes] = run(true);
  ASSERT_EQ(full.size(), incremental.size());
  for (const auto& [payload, at] : full) {
    const Time other = incremental.at(payload);
    EXPECT_LE(std::abs((other - at).ps()), std::max<int64_t>(1, std::llround(1e-9 * static_cast<double>(at.ps()))))
        << "transfer " << payload << ": full " << at.ps() << " ps, incremental " << other.ps() << " ps";
  }
  EXPECT_EQ(incremental_bytes, full_bytes);
}

// An all-to-all of equal transfers started together drains fastest first, and a drain leaves
// only slower flows on its links, which those links did not bind: no drain re-solves anything,
// and the rates still equal a full solve's after every event (ECMP collisions on the spines give
// the flows unequal rates, so they drain at distinct instants).
TEST(FlowNetworkModelIncremental, DrainsThatLeaveOnlySlowerFlowsOnTheirLinksSolveNothing) {
  const auto fat_tree = topology::build_cluster(topology::testing::two_spine_fat_tree(topology::Routing::ecmp));
  std::vector<std::pair<Time, Transfer>> plan;
  const int gpus = fat_tree->gpu_count();
  for (int s = 0; s < gpus; ++s) {
    for (int d = 0; d < gpus; ++d) {
      if (s != d) plan.push_back({Time::zero(), {s, d, Bytes(1'000'000), static_cast<uint64_t>(s * gpus + d)}});
    }
  }
  EXPECT_GT(expect_full_solve_rates_after_every_event(*fat_tree, exact(), plan), 2);
  FlowNetworkModel net(*fat_tree, exact());
  sim::Engine engine;
  Driver d(net, plan);
  d.schedule_all(engine);
  engine.run();
  std::set<Time> instants;
  for (const auto& [i, at] : d.recorder.done) instants.insert(at);
  EXPECT_GT(instants.size(), 2u);
  EXPECT_EQ(net.solves(), 1u);
}

// Runs `plan` on a star of 8 GPUs with 25 GB/s links, holding its rates to a full solve's after
// every event, then again up to 100 us, by when one transfer has drained: the model's solves,
// flows solved and the active flows' rates then.
struct AfterOneDrain {
  uint64_t solves = 0;
  uint64_t flows = 0;
  std::vector<double> rates;
};
AfterOneDrain run_past_one_drain(const std::vector<std::pair<Time, Transfer>>& plan) {
  const StarCluster c(8, Bandwidth::gbytes_per_s(25), Time::zero());
  EXPECT_GT(expect_full_solve_rates_after_every_event(c, exact(), plan), 2);
  FlowNetworkModel net(c, exact());
  sim::Engine engine;
  Driver d(net, plan);
  d.schedule_all(engine);
  engine.run(Time::us(100));
  EXPECT_EQ(d.recorder.done.size(), 1u);
  AfterOneDrain r{.solves = net.solves(), .flows = net.counters().flows, .rates = {}};
  for (size_t i = 0; i < net.active_flows(); ++i) r.rates.push_back(net.rate_of(i));
  return r;
}

// GPU 0 sends a short and a long transfer, 12.5 GB/s each on its uplink; GPUs 3 and 4 send four
// each, 6.25 GB/s on theirs, one of each to GPU 2, whose downlink the three transfers to it fill.
// When the short one drains (80 us), the long one beside it is solved again, but not the six
// flows at 6.25 GB/s that GPU 2's full downlink leads to: they run below the level that left,
// which only flows at it or above can gain from. The rates still equal a full solve's.
TEST(FlowNetworkModelIncremental, ADrainSolvesAgainOnlyTheFlowsAtOrAboveItsLevel) {
  std::vector<std::pair<Time, Transfer>> plan = {{Time::zero(), {0, 1, Bytes(1'000'000), 1}},
                                                 {Time::zero(), {0, 2, Bytes(100'000'000), 2}}};
  for (int src : {3, 4}) {
    for (int dst : {2, 5, 6, 7}) {
      plan.push_back({Time::zero(), {src, dst, Bytes(100'000'000), static_cast<uint64_t>(src * 8 + dst)}});
    }
  }
  const AfterOneDrain r = run_past_one_drain(plan);
  EXPECT_EQ(r.solves, 2u);
  EXPECT_EQ(r.flows, 10u + 1u);  // all ten at the start, then the long one alone
}

// A chain of full links at one level: 0 -> 1 and 0 -> 2 share GPU 0's up link, 0 -> 2 and 3 -> 2
// GPU 2's down link, 3 -> 2 and 3 -> 4 GPU 3's up link, and so on to 5 -> 6: every flow runs at
// 12.5 GB/s. When the short 0 -> 1 drains (80 us), 0 -> 2 beside it on the link it left is solved
// again, but not the flows at its level beyond: GPU 2's down link filled at that level and still
// does (nothing left it), so 3 -> 2 and the rest keep their rates, and so does 0 -> 2.
TEST(FlowNetworkModelIncremental, ADrainLeavesFlowsAtItsLevelBeyondTheLinksItLeftAlone) {
  const AfterOneDrain r = run_past_one_drain(
      {{Time::zero(), {0, 1, Bytes(1'000'000), 1}},   {Time::zero(), {0, 2, Bytes(100'000'000), 2}},
       {Time::zero(), {3, 2, Bytes(100'000'000), 3}}, {Time::zero(), {3, 4, Bytes(100'000'000), 4}},
       {Time::zero(), {5, 4, Bytes(100'000'000), 5}}, {Time::zero(), {5, 6, Bytes(100'000'000), 6}}});
  EXPECT_EQ(r.solves, 2u);
  EXPECT_EQ(r.flows, 6u + 1u);  // all six at the start, then 0 -> 2 alone
  EXPECT_EQ(r.rates, std::vector<double>(5, 12.5e9));
}

// An expert layer's dispatch: an all-to-all in which each pair sends what its tokens routed
// (unequal transfers, started together), twice. Most flows run at one of a few levels, and a
// drain leaves flows at its own level both on the links it left and beyond them. On a star and on
// a fat-tree with ECMP collisions, the rates equal a full solve's after every event.
TEST(FlowNetworkModelIncremental, RatesEqualAFullSolveWhenUnequalAllToAllsDrain) {
  const StarCluster star(12, Bandwidth::gbytes_per_s(25), Time::zero());
  const auto fat_tree = topology::build_cluster(topology::testing::two_spine_fat_tree(topology::Routing::ecmp));
  for (const topology::Cluster* c : std::vector<const topology::Cluster*>{&star, fat_tree.get()}) {
    for (uint64_t seed : {31, 32}) {
      sim::Rng rng(seed, sim::stream_id("flow-model-unequal-all-to-all"));
      std::vector<std::pair<Time, Transfer>> plan;
      const int gpus = c->gpu_count();
      for (const Time wave : {Time::zero(), Time::us(300)}) {
        for (int s = 0; s < gpus; ++s) {
          for (int d = 0; d < gpus; ++d) {
            // 0.1 to 2 MB in steps of 0.1 MB: pairs of one size drain together.
            const auto bytes = Bytes(static_cast<int64_t>(100'000 * (1 + rng.below(20))));
            if (s != d) plan.push_back({wave, {s, d, bytes, static_cast<uint64_t>(plan.size())}});
          }
        }
      }
      EXPECT_GT(expect_full_solve_rates_after_every_event(*c, exact(), plan), 20) << "seed " << seed;
    }
  }
}

// Waves of an all-to-all of equal transfers on a star, among capped transfers at random instants
// over the first 3 ms: the flows of a wave that runs alone (the last, at 20 ms) drain at one
// instant and leave every link they crossed empty at once; the earlier waves drain in batches
// beside the capped transfers, which leave their cap links with their last flow. The rates equal
// a full solve's after every event, the links cleared at once being taken up again.
TEST(FlowNetworkModelIncremental, RatesEqualAFullSolveWhenWholeWavesDrainAtOnce) {
  const StarCluster c(12, Bandwidth::gbytes_per_s(25), Time::zero());
  for (uint64_t seed : {21, 22}) {
    std::vector<std::pair<Time, Transfer>> plan = random_capped_plan(seed, 12, 60, Time::ms(3), 2);
    for (const Time wave : {Time::zero(), Time::ms(1), Time::ms(20)}) {
      for (int s = 0; s < 12; ++s) {
        for (int d = 0; d < 12; ++d) {
          if (s != d) plan.push_back({wave, {s, d, Bytes(500'000), static_cast<uint64_t>(s * 12 + d)}});
        }
      }
    }
    EXPECT_GT(expect_full_solve_rates_after_every_event(c, exact(), plan), 60) << "seed " << seed;
  }
}

TEST(FlowNetworkModelIncremental, WholeRunsAgreeWithFullSolves) {
  const StarCluster star(16, Bandwidth::gbytes_per_s(25), Time::us(1));
  for (uint64_t seed : {3, 4, 5, 6}) {
    expect_full_and_incremental_runs_agree(star, {}, random_plan(seed, 16, 400));
    expect_full_and_incremental_runs_agree(star, exact(), random_plan(seed, 16, 400));
  }
  const StarCluster wide(64, Bandwidth::gbytes_per_s(25), Time::us(1));
  expect_full_and_incremental_runs_agree(wide, {}, random_capped_plan(7, 64, 1000, Time::ms(20)));
  const auto fat_tree = topology::build_cluster(topology::testing::two_spine_fat_tree(topology::Routing::adaptive));
  expect_full_and_incremental_runs_agree(*fat_tree, {}, random_capped_plan(8, 8, 300, Time::ms(2)));
  expect_full_and_incremental_runs_agree(*fat_tree, {}, cross_leaf_permutation(Bytes::mib(64)));
  topology::ClusterSpec spec = topology::testing::hgx(2, topology::FabricKind::fat_tree);
  spec.fabric.routing = topology::Routing::adaptive;
  const auto hgx = topology::build_cluster(spec);
  FlowModelOptions staged;
  staged.host_staged_rate = 20e9;
  expect_full_and_incremental_runs_agree(*hgx, staged, random_capped_plan(9, hgx->gpu_count(), 300, Time::ms(2)));
}

// A start re-solves the flows its component reaches and no others: on a star, 0 -> 1 and 2 -> 3
// share no link, so a transfer 4 -> 1 joins the first alone.
TEST(FlowNetworkModelIncremental, AStartReSolvesOnlyTheComponentItJoins) {
  const StarCluster c(5, Bandwidth::gbytes_per_s(10), Time::zero());
  FlowNetworkModel net(c, exact());
  sim::Engine engine;
  Driver d(net, {{Time::zero(), {0, 1, Bytes(10'000'000)}},
                 {Time::zero(), {2, 3, Bytes(20'000'000)}},
                 {Time::us(100), {4, 1, Bytes(1'000'000)}}});
  d.schedule_all(engine);
  engine.run(Time::us(100));
  EXPECT_EQ(net.counters().solves, 2u);
  EXPECT_EQ(net.counters().flows, 2u + 2u);  // both at time 0; then 0 -> 1 and 4 -> 1
  ASSERT_EQ(net.active_flows(), 3u);
  EXPECT_EQ(net.rate_of(0), 5e9);
  EXPECT_EQ(net.rate_of(1), 10e9);
  EXPECT_EQ(net.rate_of(2), 5e9);
  engine.run();
  // 0 -> 1: 1 MB alone, then 1 MB at half rate with 4 -> 1, then the rest alone: 1 ms in all plus
  // the 0.1 ms it shared.
  EXPECT_EQ(d.recorder.time_of(0), Time::us(1100));
  EXPECT_EQ(d.recorder.time_of(1), Time::ms(2));
  EXPECT_EQ(d.recorder.time_of(2), Time::us(300));
}

// On a star of 10 GB/s links, 0 -> 1 capped at `first_cap` from time 0, then 0 -> 2 (capped at
// `second_cap`; 0: not) from 100 us: the model's counters and both rates just after the start.
struct TwoOnOneUpLink {
  uint64_t solves = 0;
  uint64_t flows = 0;
  double first = 0;
  double second = 0;
};
TwoOnOneUpLink start_beside_a_capped_flow(double first_cap, double second_cap) {
  const StarCluster c(3, Bandwidth::gbytes_per_s(10), Time::zero());
  FlowNetworkModel net(c, exact());
  sim::Engine engine;
  Driver d(net, {{Time::zero(), {.src_gpu = 0, .dst_gpu = 1, .bytes = Bytes(10'000'000), .max_rate = first_cap}},
                 {Time::us(100), {.src_gpu = 0, .dst_gpu = 2, .bytes = Bytes(10'000'000), .max_rate = second_cap}}});
  d.schedule_all(engine);
  engine.run(Time::us(100));
  EXPECT_EQ(net.active_flows(), 2u);
  if (net.active_flows() != 2) return {};
  return {.solves = net.counters().solves, .flows = net.counters().flows, .first = net.rate_of(0),
          .second = net.rate_of(1)};
}

// A link with room to spare binds none of its flows: a capped transfer 0 -> 2 that starts beside
// the capped 0 -> 1 on GPU 0's up link is solved alone, with the capacity 0 -> 1 leaves it.
TEST(FlowNetworkModelIncremental, AStartBesideFlowsOnALinkWithRoomReSolvesOnlyItself) {
  const TwoOnOneUpLink r = start_beside_a_capped_flow(2e9, 3e9);
  EXPECT_EQ(r.solves, 2u);
  EXPECT_EQ(r.flows, 2u);
  EXPECT_EQ(r.first, 2e9);
  EXPECT_EQ(r.second, 3e9);
}

// When the new rates fill such a link, the flows beyond it join the solve: 0 -> 2 alone would
// take the 4 GB/s that 0 -> 1 (capped at 6) leaves, which fills GPU 0's up link, so both are
// solved again and share it max-min fairly, 5 GB/s each.
TEST(FlowNetworkModelIncremental, AStartThatFillsALinkWithRoomReSolvesTheFlowsOnIt) {
  const TwoOnOneUpLink r = start_beside_a_capped_flow(6e9, 0);
  EXPECT_EQ(r.solves, 3u);
  EXPECT_EQ(r.flows, 1u + 1u + 2u);
  EXPECT_EQ(r.first, 5e9);
  EXPECT_EQ(r.second, 5e9);
}

// The same with 0 -> 1 capped at 2 GB/s: 0 -> 2 fills GPU 0's up link again, but 0 -> 1 runs
// below the least share a link of 0 -> 2 offers (5 GB/s: the up link's 10 over its two flows),
// under which no start can push a flow, so it keeps its rate and is not solved again.
TEST(FlowNetworkModelIncremental, AStartLeavesFlowsBelowItsLinksLeastShareAlone) {
  const TwoOnOneUpLink r = start_beside_a_capped_flow(2e9, 0);
  EXPECT_EQ(r.solves, 2u);
  EXPECT_EQ(r.flows, 1u + 1u);
  EXPECT_EQ(r.first, 2e9);
  EXPECT_EQ(r.second, 8e9);
}

}  // namespace
}  // namespace dtsim::network
