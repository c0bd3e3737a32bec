#include "collectives/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "collectives/schedule_executor.h"
#include "network/analytical/analytical_network.h"
#include "network/flow/flow_model.h"
#include "network/packet/packet_model.h"
#include "sim/error.h"
#include "tests/network/line_cluster.h"
#include "topology/catalog.h"

namespace dtsim::collectives {
namespace {

constexpr double kAlphaUs = 1.0;   // per transfer
constexpr double kBwGBps = 100.0;  // per link

Communicator world(int n) {
  Communicator c;
  c.ranks.resize(static_cast<size_t>(n));
  std::iota(c.ranks.begin(), c.ranks.end(), 0);
  return c;
}

// Runs a schedule on `net` to its end on an engine of its own; returns its duration.
Time run_on(const Schedule& s, network::NetworkModel& net, ExecutorOptions opts = {}) {
  sim::Engine engine;
  ScheduleExecutor exec(s, net, opts);
  exec.start(engine);
  engine.run();
  EXPECT_TRUE(exec.done());
  return exec.finish_time() - exec.start_time();
}

// Runs a schedule on a contention-free crossbar of n GPUs; returns its duration in us.
double run_us(const Schedule& s, int n, ExecutorOptions opts = {}) {
  const testing_support::CrossbarCluster cluster(n, Bandwidth::gbytes_per_s(kBwGBps),
                                                 Time::us(kAlphaUs));
  network::AnalyticalNetwork net(cluster);
  return run_on(s, net, opts).us();
}

double hop_us(double bytes) {
  return kAlphaUs + bytes / (kBwGBps * 1e3);
}

const double kBytes = 64.0 * 1024 * 1024;

// A budget holds every schedule built on its thread to its number of transfers: the schedule that
// fits is built unchanged, one transfer more throws, and the outer budget returns when an inner one
// ends.
TEST(Schedule, ABudgetStopsASchedulePastItsTransfers) {
  const auto build = [] { return build_schedule(Algorithm::ring, CollectiveKind::all_reduce, Bytes::mib(1), world(8), 2); };
  const size_t size = build().transfers().size();
  {
    const ScheduleBudget fits(size);
    EXPECT_EQ(build().transfers().size(), size);
    {
      const ScheduleBudget short_by_one(size - 1);
      try {
        build();
        ADD_FAILURE() << "a schedule of " << size << " transfers was built under a budget of " << size - 1;
      } catch (const ScheduleTooLarge& e) {
        EXPECT_EQ(e.limit(), size - 1);
      }
    }
    EXPECT_EQ(build().transfers().size(), size);
  }
  EXPECT_EQ(build().transfers().size(), size);
}

// A budget's deadline stops a schedule built after it has passed (a run's --max-wall while it
// plans): the 130,560 transfers of a ring all_reduce over 256 ranks stop at the first read of the
// clock, an inner budget without a deadline keeps the outer one's, and once the budget ends the
// same schedule is built whole.
TEST(Schedule, ABudgetsDeadlineStopsAScheduleBuiltAfterIt) {
  const auto build = [] { return build_schedule(Algorithm::ring, CollectiveKind::all_reduce, Bytes::mib(64), world(256), 1); };
  sim::WallDeadline deadline(1e-6);
  while (!deadline.passed(sim::WallClock::now())) {
  }
  {
    const ScheduleBudget planning(UINT64_MAX, &deadline);
    EXPECT_THROW(build(), ScheduleStopped);
    const ScheduleBudget inner(UINT64_MAX);
    EXPECT_THROW(build(), ScheduleStopped);
  }
  EXPECT_EQ(build().transfers().size(), size_t{2 * 255 * 256});
  sim::WallDeadline far(3600);
  const ScheduleBudget planning(UINT64_MAX, &far);
  EXPECT_EQ(build().transfers().size(), size_t{2 * 255 * 256});
}

TEST(Schedule, RingAllReduceMatchesTheClosedForm) {
  const int n = 8;
  const auto s = build_schedule(Algorithm::ring, CollectiveKind::all_reduce,
                                Bytes(static_cast<int64_t>(kBytes)), world(n), 1);
  EXPECT_NEAR(run_us(s, n), 2 * (n - 1) * hop_us(kBytes / n), 0.01 * run_us(s, n));
}

TEST(Schedule, RingAllGatherAndReduceScatterMatchTheClosedForm) {
  const int n = 8;
  for (auto k : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    const auto s =
        build_schedule(Algorithm::ring, k, Bytes(static_cast<int64_t>(kBytes)), world(n), 1);
    EXPECT_NEAR(run_us(s, n), (n - 1) * hop_us(kBytes / n), 0.01 * (n - 1) * hop_us(kBytes / n))
        << name(k);
  }
}

TEST(Schedule, PipelinedBroadcastMatchesTheClosedForm) {
  const int n = 8;
  const auto s = build_schedule(Algorithm::ring, CollectiveKind::broadcast,
                                Bytes(static_cast<int64_t>(kBytes)), world(n), 1);
  // 32 slices of 2 MiB (256 KiB at least, 32 at most) follow each other through n-1 hops, one
  // slice at a time per hop: the last slice leaves the root after 31 slice-times and arrives
  // n-1 hops later, as for the tree.
  const int slices = 32;
  const double expect = (n - 1 + slices - 1) * hop_us(kBytes / slices);
  EXPECT_NEAR(run_us(s, n), expect, 0.01 * expect);
}

TEST(Schedule, TreeAllReduceMatchesTheClosedForm) {
  const int n = 16;
  const int g = 4;  // 4 nodes of 4: chain of 3, tree of depth 2, both ways
  const auto s = build_schedule(Algorithm::tree, CollectiveKind::all_reduce,
                                Bytes(static_cast<int64_t>(kBytes)), world(n), 1, g);
  // The buffer moves as 16 slices of 4 MiB that follow each other hop by hop: the last slice
  // lands 15 slice-times after the first has crossed every hop.
  const int hops = 2 * ((g - 1) + static_cast<int>(std::ceil(std::log2(n / g))));
  const int slices = 16;
  const double expect = (hops + slices - 1) * hop_us(kBytes / slices);
  EXPECT_NEAR(run_us(s, n), expect, 0.01 * expect);
}

TEST(Schedule, HalvingDoublingMatchesTheClosedForm) {
  const int n = 8;
  const auto s = build_schedule(Algorithm::halving_doubling, CollectiveKind::all_reduce,
                                Bytes(static_cast<int64_t>(kBytes)), world(n), 1);
  double expect = 0;
  for (int k = 1; k <= 3; ++k) expect += 2 * hop_us(kBytes / (1 << k));
  EXPECT_NEAR(run_us(s, n), expect, 0.01 * expect);
}

TEST(Schedule, PairwiseAllToAllMatchesTheClosedForm) {
  const int n = 8;
  const auto s = build_schedule(Algorithm::pairwise, CollectiveKind::all_to_all,
                                Bytes(static_cast<int64_t>(kBytes)), world(n), 1);
  EXPECT_NEAR(run_us(s, n), hop_us(kBytes / n), 0.01 * hop_us(kBytes / n));
}

// nccl-tests' hypercube: rounds with partners 1, 2, 4 apart, each sending all the rank holds
// (1, 2, 4 parts of size/8) once the round before has delivered; every rank ends with all 8 parts.
TEST(Schedule, HypercubeDoublesWhatEachRankHoldsRoundByRound) {
  const int n = 8;
  const auto s = build_schedule(Algorithm::p2p, CollectiveKind::hypercube,
                                Bytes(static_cast<int64_t>(kBytes)), world(n), 1);
  double expect = 0;
  for (int mask = 1; mask < n; mask *= 2) expect += hop_us(kBytes * mask / n);
  EXPECT_NEAR(run_us(s, n), expect, 0.01 * expect);
  std::vector<int64_t> in(n, 0);
  for (const auto& t : s.transfers()) {
    EXPECT_EQ(t.src_gpu ^ t.dst_gpu, 1 << t.step);
    in[static_cast<size_t>(t.dst_gpu)] += t.bytes.count();
  }
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(in[static_cast<size_t>(r)], static_cast<int64_t>(kBytes) * (n - 1) / n) << r;
}

TEST(Schedule, RingAllReduceMovesTwiceTheBufferPerRankMinusOneShare) {
  const int n = 8;
  const int64_t b = 8 << 20;
  const auto s = build_schedule(Algorithm::ring, CollectiveKind::all_reduce, Bytes(b), world(n), 2);
  EXPECT_EQ(s.total_bytes(), Bytes(2 * (n - 1) * b));
}

// A size that does not divide into ranks x channels is still moved whole: the lowerings cut
// it into parts that differ by at most a byte (they truncated, and an 8-byte all_reduce on 16
// ranks moved nothing).
TEST(Schedule, EveryLoweringMovesEveryByteOfASizeThatDoesNotDivide) {
  struct Case {
    Algorithm algo;
    CollectiveKind kind;
    int n, channels, ranks_per_node;
    int64_t bytes, times;  // the lowering moves bytes x times in all
  };
  for (int64_t b : {int64_t{8}, int64_t{1000003}}) {
    const Case cases[] = {
        {Algorithm::ring, CollectiveKind::all_reduce, 16, 2, 1, b, 2 * 15},
        {Algorithm::ring, CollectiveKind::all_reduce, 6, 3, 1, b, 2 * 5},
        {Algorithm::ring, CollectiveKind::all_gather, 6, 3, 1, b, 5},
        {Algorithm::ring, CollectiveKind::reduce_scatter, 16, 2, 8, b, 15},
        {Algorithm::ring, CollectiveKind::broadcast, 6, 3, 1, b, 5},
        {Algorithm::ring, CollectiveKind::reduce, 6, 3, 1, b, 5},
        {Algorithm::tree, CollectiveKind::all_reduce, 12, 3, 4, b, 2 * 11},
        {Algorithm::halving_doubling, CollectiveKind::all_reduce, 8, 3, 1, b, 2 * 7},
        {Algorithm::pairwise, CollectiveKind::all_to_all, 6, 3, 1, b, 5},
        {Algorithm::p2p, CollectiveKind::send_recv, 6, 3, 1, b, 6},
    };
    for (const Case& c : cases) {
      const auto s = build_schedule(c.algo, c.kind, Bytes(c.bytes), world(c.n), c.channels, c.ranks_per_node);
      EXPECT_EQ(s.total_bytes(), Bytes(c.bytes * c.times)) << name(c.algo) << " " << name(c.kind) << " " << b;
      int64_t reduced = 0;
      for (const auto& t : s.transfers()) reduced += t.reduce_bytes.count();
      const bool reduces = c.kind == CollectiveKind::all_reduce || c.kind == CollectiveKind::reduce_scatter ||
                           c.kind == CollectiveKind::reduce;
      // A reduction adds each of the n - 1 contributions it receives into the buffer once.
      EXPECT_EQ(reduced, reduces ? c.bytes * (c.n - 1) : 0) << name(c.algo) << " " << name(c.kind) << " " << b;
    }
  }
}

// gather and scatter across two nodes of eight: every part crosses between the nodes once, on the
// receiver's rail (PXN): a gather's through GPU 8 to the root, a scatter's from GPU k to GPU 8+k,
// relayed over NVLink from the root.
TEST(Schedule, GatherAndScatterCrossNodesOnTheReceiversRail) {
  const int64_t b = int64_t{16} << 20;
  const int64_t part = b / 16;
  for (CollectiveKind k : {CollectiveKind::gather, CollectiveKind::scatter}) {
    const auto s = build_schedule(Algorithm::p2p, k, Bytes(b), world(16), 2, 8);
    std::vector<int64_t> crossed(16, 0), in(16, 0), out(16, 0);
    for (const auto& t : s.transfers()) {
      in[static_cast<size_t>(t.dst_gpu)] += t.bytes.count();
      out[static_cast<size_t>(t.src_gpu)] += t.bytes.count();
      if (t.src_gpu / 8 == t.dst_gpu / 8) continue;
      if (k == CollectiveKind::gather) {
        EXPECT_EQ(t.src_gpu, 8);
        EXPECT_EQ(t.dst_gpu, 0);
      } else {
        EXPECT_EQ(t.dst_gpu, t.src_gpu + 8);
      }
      crossed[static_cast<size_t>(k == CollectiveKind::gather ? t.src_gpu : t.dst_gpu)] +=
          t.bytes.count();
    }
    if (k == CollectiveKind::gather) {
      EXPECT_EQ(crossed[8], 8 * part);
      EXPECT_EQ(in[0], 15 * part);  // every other rank's part reaches the root
      EXPECT_EQ(out[0], 0);
    } else {
      for (int r = 8; r < 16; ++r) EXPECT_EQ(crossed[static_cast<size_t>(r)], part) << r;
      for (int r = 1; r < 16; ++r)
        EXPECT_EQ(in[static_cast<size_t>(r)], part + (r < 8 ? part : 0))
            << r;  // a relay takes its rail's part too
      EXPECT_EQ(in[0], 0);
    }
  }
}

// Two nodes of eight ranks on 10 channels: the lowering runs 16 rings (two per rotation), so
// every GPU leaves its node for the other as often as every other GPU, and each NIC below it
// carries the same bytes. With 10 rings two rotations ran twice and their NICs carried double.
TEST(Schedule, RingAcrossNodesLeavesEachNodeThroughEveryGpuEqually) {
  EXPECT_EQ(spread_channels(10, 16, 8), 16);
  EXPECT_EQ(spread_channels(16, 16, 8), 16);
  EXPECT_EQ(spread_channels(10, 8, 8), 10);   // one node: no node crossings to spread
  EXPECT_EQ(spread_channels(10, 16, 1), 10);  // one rank per node: one NIC each anyway
  EXPECT_EQ(spread_channels(4, 16, 8), 4);    // fewer channels than NICs: one NIC each
  EXPECT_EQ(spread_channels(20, 16, 8, 4), 32);  // four NICs per GPU: a round is 32 channels
  const int64_t b = int64_t{16} << 20;
  const auto s = build_schedule(Algorithm::ring, CollectiveKind::all_gather, Bytes(b), world(16), 10, 8);
  std::vector<int64_t> leaving(16, 0);
  for (const auto& t : s.transfers()) {
    if (t.src_gpu / 8 != t.dst_gpu / 8) leaving[static_cast<size_t>(t.src_gpu)] += t.bytes.count();
  }
  for (int g = 0; g < 16; ++g) EXPECT_EQ(leaving[static_cast<size_t>(g)], leaving[0]) << "gpu " << g;
  EXPECT_GT(leaving[0], 0);
  // More rings, same traffic: each of the 16 ranks receives the 15 shares it lacks.
  EXPECT_EQ(s.total_bytes(), Bytes(15 * b));
}

// With four NICs per GPU, channel c leaves through GPU c mod 8 on its NIC slot (c / 8) mod 4: over
// 32 rings every (GPU, slot) pair of a node carries the same bytes across the network.
TEST(Schedule, RingAcrossNodesUsesEveryNicSlotOfEveryGpuEqually) {
  const auto s = build_schedule(Algorithm::ring, CollectiveKind::all_gather, Bytes(int64_t{64} << 20), world(16),
                                20, 8, 4);
  std::map<std::pair<int, int>, int64_t> leaving;  // (gpu, slot) -> bytes
  for (const auto& t : s.transfers()) {
    EXPECT_EQ(t.nic, (t.channel / 8) % 4);
    if (t.src_gpu / 8 != t.dst_gpu / 8) leaving[{t.src_gpu, t.nic}] += t.bytes.count();
  }
  EXPECT_EQ(leaving.size(), 16u * 4u);
  for (const auto& [key, bytes] : leaving) EXPECT_EQ(bytes, leaving.begin()->second);
}

// The tree rotates its node leader by channel, so the same spreading holds: 10 channels run as
// 16, and every GPU of a node sends and receives the same inter-node bytes.
TEST(Schedule, TreeAcrossNodesLeavesEachNodeThroughEveryGpuEqually) {
  const int64_t b = int64_t{64} << 20;
  const auto s = build_schedule(Algorithm::tree, CollectiveKind::all_reduce, Bytes(b), world(16), 10, 8);
  std::vector<int64_t> leaving(16, 0), entering(16, 0);
  int channels = 0;
  for (const auto& t : s.transfers()) {
    channels = std::max(channels, t.channel + 1);
    if (t.src_gpu / 8 == t.dst_gpu / 8) continue;
    leaving[static_cast<size_t>(t.src_gpu)] += t.bytes.count();
    entering[static_cast<size_t>(t.dst_gpu)] += t.bytes.count();
  }
  EXPECT_EQ(channels, 16);
  for (int g = 0; g < 16; ++g) {
    EXPECT_EQ(leaving[static_cast<size_t>(g)], leaving[0]) << "gpu " << g;
    EXPECT_EQ(entering[static_cast<size_t>(g)], entering[0]) << "gpu " << g;
  }
  EXPECT_GT(leaving[0], 0);
}

// Inside one node every channel runs the same chain, as NCCL's NVSwitch tree graphs do: the chain's
// ends receive the buffer once (down or up), its middle ranks twice, which is the 2 x S a forced
// tree on 4 H100s measures. Rotating the chain by channel gave every GPU 1.5 x S and flows 28% fast.
TEST(Schedule, TreeInsideOneNodeRunsOneChainOnEveryChannel) {
  const int64_t b = int64_t{64} << 20;
  const auto s = build_schedule(Algorithm::tree, CollectiveKind::all_reduce, Bytes(b), world(4), 8, 8);
  std::vector<int64_t> entering(4, 0);
  for (const auto& t : s.transfers()) entering[static_cast<size_t>(t.dst_gpu)] += t.bytes.count();
  EXPECT_EQ(entering[0], b);
  EXPECT_EQ(entering[3], b);
  EXPECT_EQ(entering[1], 2 * b);
  EXPECT_EQ(entering[2], 2 * b);
}

// Across more than two nodes half the channels run the node tree mirrored (NCCL's double binary
// tree), so a node interior in one tree is a leaf in the other and every node sends and receives
// about as much across the network. With one tree the interior nodes sent three times what the
// leaves did, and the flow model ran 8-node trees at 209 GB/s busbw instead of 294.
TEST(Schedule, TreeAcrossEightNodesLoadsEveryNodeAlike) {
  const int g = 4, nodes = 8;
  const auto s = build_schedule(Algorithm::tree, CollectiveKind::all_reduce, Bytes(int64_t{64} << 20),
                                world(g * nodes), 16, g);
  std::vector<int64_t> sent(nodes, 0), received(nodes, 0);
  for (const auto& t : s.transfers()) {
    if (t.src_gpu / g == t.dst_gpu / g) continue;
    sent[static_cast<size_t>(t.src_gpu / g)] += t.bytes.count();
    received[static_cast<size_t>(t.dst_gpu / g)] += t.bytes.count();
  }
  const auto [sent_min, sent_max] = std::minmax_element(sent.begin(), sent.end());
  const auto [recv_min, recv_max] = std::minmax_element(received.begin(), received.end());
  EXPECT_GT(*sent_min, 0);
  EXPECT_LE(*sent_max, 3 * *sent_min / 2);
  EXPECT_LE(*recv_max, 3 * *recv_min / 2);
  // Node 0 (the plain tree's root) and node 7 (the mirrored one's) move the same bytes.
  EXPECT_EQ(sent[0], sent[7]);
  EXPECT_EQ(received[0], received[7]);
}

TEST(Schedule, ExecutorDeliversEveryByteItSends) {
  const int n = 8;
  const auto s =
      build_schedule(Algorithm::ring, CollectiveKind::all_reduce, Bytes(8 << 20), world(n), 4);
  const testing_support::CrossbarCluster cluster(n, Bandwidth::gbytes_per_s(kBwGBps),
                                                 Time::us(kAlphaUs));
  network::AnalyticalNetwork net(cluster);
  sim::Engine engine;
  ScheduleExecutor exec(s, net);
  exec.start(engine);
  engine.run();
  EXPECT_EQ(exec.bytes_sent(), s.total_bytes());
  EXPECT_EQ(net.bytes_delivered(), s.total_bytes());
}

TEST(Schedule, ReductionWorkDelaysTheDependentSteps) {
  const int n = 4;
  const auto s =
      build_schedule(Algorithm::ring, CollectiveKind::reduce_scatter, Bytes(64 << 20), world(n), 1);
  ExecutorOptions slow;
  slow.reduction_bandwidth = Bandwidth::gbytes_per_s(50);
  EXPECT_GT(run_us(s, n, slow), run_us(s, n) * 1.4);
}

TEST(Schedule, SwitchReductionAlgorithmsHaveNoTransferSchedule) {
  EXPECT_THROW(
      build_schedule(Algorithm::nvls, CollectiveKind::all_reduce, Bytes(1 << 20), world(8), 1),
      InputError);
}

// NVLS-tree's network part: GPU k of each node carries part k of the buffer to GPU k of the
// other nodes only (its rail), every byte of it up the node tree and back down: across 2 nodes
// each node sends the whole buffer once, spread evenly over its GPUs, and no transfer stays
// inside a node (the NVSwitch's part has no transfers). Only all_reduce has it.
TEST(Schedule, NvlsTreeNetworkPartRunsOneNodeTreePerRail) {
  const int g = 8;
  const int64_t b = (int64_t{64} << 20) + 5;
  const auto s = build_schedule(Algorithm::nvls_tree, CollectiveKind::all_reduce, Bytes(b),
                                world(2 * g), 16, g);
  std::vector<int64_t> sent(2 * g, 0);
  for (const auto& t : s.transfers()) {
    EXPECT_NE(t.src_gpu / g, t.dst_gpu / g);
    EXPECT_EQ(t.src_gpu % g, t.dst_gpu % g);
    sent[static_cast<size_t>(t.src_gpu)] += t.bytes.count();
  }
  int64_t node0 = 0;
  for (int k = 0; k < g; ++k) {
    EXPECT_EQ(sent[static_cast<size_t>(k)], part_of(Bytes(b), g, k).count());
    EXPECT_EQ(sent[static_cast<size_t>(g + k)], part_of(Bytes(b), g, k).count());
    node0 += sent[static_cast<size_t>(k)];
  }
  EXPECT_EQ(node0, b);
  EXPECT_TRUE(
      build_schedule(Algorithm::nvls_tree, CollectiveKind::all_reduce, Bytes(b), world(g), 16, g)
          .transfers()
          .empty());
  EXPECT_THROW(build_schedule(Algorithm::nvls_tree, CollectiveKind::all_gather, Bytes(b),
                              world(2 * g), 16, g),
               InputError);
}

TEST(Schedule, RingAllReduceOnABuiltH100NodeTakesStepsTimesOneNvswitchHop) {
  auto spec = *topology::find_node_preset("hgx-h100");
  spec.nodes = 1;
  const auto cluster = topology::build_cluster(spec);
  network::AnalyticalNetwork net(*cluster);
  const int n = 8;
  const Bytes b(64 << 20);
  const auto s = build_schedule(Algorithm::ring, CollectiveKind::all_reduce, b, world(n), 1);
  sim::Engine engine;
  ScheduleExecutor exec(s, net);
  exec.start(engine);
  engine.run();
  const Time hop = net.transfer_time({0, 1, Bytes(b.count() / n)});
  EXPECT_NEAR((exec.finish_time() - exec.start_time()).us(), (hop * (2 * (n - 1))).us(),
              0.01 * (hop * 14).us());
}

TEST(ReplicaShifts, CopiesStartOnWholeNodesAndOnlyWholeCopiesFit) {
  EXPECT_EQ(replica_shifts(12, 8, 64), (std::vector<int>{16, 32, 48}));  // 12 GPUs take 2 nodes
  EXPECT_EQ(replica_shifts(16, 8, 40), (std::vector<int>{16}));          // a second copy would need 48
  EXPECT_TRUE(replica_shifts(64, 8, 64).empty());                        // the job fills the cluster
  EXPECT_TRUE(replica_shifts(0, 8, 64).empty());                         // no background
}

TEST(Schedule, ShiftedCopyMovesEveryTransferAndKeepsItsDependencies) {
  Communicator comm{{0, 1, 8, 9}};
  const Schedule s = build_schedule(Algorithm::ring, CollectiveKind::all_reduce, Bytes::mib(1), comm, 2, 2, 1);
  const Schedule t = shifted(s, 16);
  ASSERT_EQ(t.transfers().size(), s.transfers().size());
  for (size_t i = 0; i < s.transfers().size(); ++i) {
    const ScheduledTransfer& a = s.transfers()[i];
    const ScheduledTransfer& b = t.transfers()[i];
    EXPECT_EQ(b.src_gpu, a.src_gpu + 16);
    EXPECT_EQ(b.dst_gpu, a.dst_gpu + 16);
    EXPECT_EQ(b.bytes, a.bytes);
    EXPECT_EQ(b.reduce_bytes, a.reduce_bytes);
    EXPECT_EQ(b.channel, a.channel);
    EXPECT_EQ(b.nic, a.nic);
    const auto da = s.deps_of(a), db = t.deps_of(b);
    EXPECT_TRUE(std::equal(da.begin(), da.end(), db.begin(), db.end()));
  }
}


// Passes transfers to the network it wraps and watches them: how many are in flight (started and
// not yet landed) and the most there ever were, and when each landed, keyed by its flow hash (the
// executor's transfer_hash of its index).
class Watched final : public network::NetworkModel, public sim::EventHandler {
 public:
  explicit Watched(network::NetworkModel& inner) : inner_(inner) {}
  std::string_view name() const override { return "watched"; }
  void start(sim::Engine& engine, const network::Transfer& t, sim::EventHandler& done, uint64_t payload) override {
    waiting_.push_back({&done, payload, t.flow_hash});
    peak_ = std::max(peak_, ++in_flight_);
    inner_.start(engine, t, *this, waiting_.size() - 1);
  }
  void on_event(sim::Engine& engine, uint64_t payload) override {
    const Waiting& w = waiting_[payload];
    --in_flight_;
    landed_[w.hash] = engine.now();
    w.done->on_event(engine, w.payload);
  }
  Bytes bytes_delivered() const override { return inner_.bytes_delivered(); }
  uint64_t peak() const { return peak_; }
  // When the schedule's transfer `index` landed.
  Time landed(uint32_t index) const { return landed_.at(transfer_hash(index)); }

 private:
  struct Waiting {
    sim::EventHandler* done;
    uint64_t payload;
    uint64_t hash;
  };
  network::NetworkModel& inner_;
  std::vector<Waiting> waiting_;
  uint64_t in_flight_ = 0;
  uint64_t peak_ = 0;
  std::map<uint64_t, Time> landed_;
};

// max_concurrent_transfers bounds what a schedule has in flight: run on a contention-free crossbar
// (where the most transfers overlap), no schedule has more in flight than it says, and it is the
// closed form where there is one: a ring's ranks times channels, an all_to_all's transfers, one
// for a single chain of sends.
TEST(Schedule, NoScheduleHasMoreInFlightThanItsBound) {
  const int n = 8;
  const testing_support::CrossbarCluster cluster(n, Bandwidth::gbytes_per_s(kBwGBps), Time::us(kAlphaUs));
  const auto peak_in_flight = [&](const Schedule& s) {
    network::AnalyticalNetwork net(cluster);
    Watched watched(net);
    run_on(s, watched);
    return watched.peak();
  };
  const struct {
    Algorithm algo;
    CollectiveKind kind;
    int channels;
  } cases[] = {{Algorithm::ring, CollectiveKind::all_reduce, 1},       {Algorithm::ring, CollectiveKind::all_reduce, 4},
               {Algorithm::ring, CollectiveKind::all_gather, 2},       {Algorithm::ring, CollectiveKind::broadcast, 2},
               {Algorithm::tree, CollectiveKind::all_reduce, 2},       {Algorithm::ring, CollectiveKind::reduce_scatter, 3},
               {Algorithm::halving_doubling, CollectiveKind::all_reduce, 1},
               {Algorithm::pairwise, CollectiveKind::all_to_all, 2}};
  for (const auto& c : cases) {
    for (const Bytes bytes : {Bytes(4096), Bytes::mib(4)}) {
      SCOPED_TRACE(fmt::format("{} {} {} channels {} B", name(c.algo), name(c.kind), c.channels, bytes.count()));
      const Schedule s = build_schedule(c.algo, c.kind, bytes, world(n), c.channels);
      const uint64_t bound = max_concurrent_transfers(s);
      EXPECT_LE(peak_in_flight(s), bound);
      EXPECT_LE(bound, s.transfers().size());
      if (c.algo == Algorithm::ring && c.kind == CollectiveKind::all_reduce) {
        EXPECT_EQ(bound, static_cast<uint64_t>(n * s.channels()));
      }
      if (c.kind == CollectiveKind::all_to_all) {
        EXPECT_EQ(bound, s.transfers().size());
        EXPECT_EQ(peak_in_flight(s), bound);
      }
    }
  }
  Schedule chain;
  uint32_t last = chain.add(0, 1, Bytes(4096), {});
  for (int i = 1; i < 20; ++i) last = chain.add(i % n, (i + 1) % n, Bytes(4096), std::span<const uint32_t>(&last, 1));
  EXPECT_EQ(max_concurrent_transfers(chain), 1u);
  EXPECT_EQ(peak_in_flight(chain), 1u);
}

// A channel's sends from one GPU to another go over one connection, in order and back to back, as
// NCCL's do: the second of two sends ready at once starts when the first has left the sender, so
// the first lands as if alone, and no gap opens between them. A send on another channel shares the
// link with them. One link of 100 GB/s and 1 us between two GPUs, 1 MiB a send (t = 10.49 us on
// the wire): transfers 0 and 1 on channel 0, 2 on channel 1, none waiting on another.
//  - closed form (no contention): 0 and 2 land at t + 1 us, 1 at 2t + 1 us;
//  - flows: 0 and 2 share the link and land at 2t + 1 us, then 1 alone at 3t + 1 us (sharing all
//    three fairly, every send would land at 3t + 1 us);
//  - packets: within two packet times (4 KiB each) of flows, the last send no sooner.
TEST(Schedule, AConnectionsSendsGoInOrderBackToBack) {
  const Bandwidth bw = Bandwidth::gbytes_per_s(kBwGBps);
  const testing_support::LineCluster line({{bw, Time::us(1)}});
  const Bytes size = Bytes::mib(1);
  Schedule s;
  s.add(0, 1, size, {}, Bytes(0), 0, 0);
  s.add(0, 1, size, {}, Bytes(0), 0, 0);
  s.add(0, 1, size, {}, Bytes(0), 0, 1);
  const Time t = bw.transfer_time(size), lat = Time::us(1);
  const auto run = [&](network::NetworkModel& net) {
    Watched watched(net);
    run_on(s, watched);
    EXPECT_EQ(net.bytes_delivered(), size * 3);
    return std::array<Time, 3>{watched.landed(0), watched.landed(1), watched.landed(2)};
  };
  {
    network::AnalyticalNetwork closed(line);
    const auto at = run(closed);
    EXPECT_EQ(at[0], t + lat);
    EXPECT_EQ(at[1], t * 2 + lat);
    EXPECT_EQ(at[2], t + lat);
  }
  const auto near = [](Time a, Time b) { return std::abs((a - b).us()) < 1e-3; };
  network::FlowNetworkModel flows(line);
  const auto on_flows = run(flows);
  EXPECT_PRED2(near, on_flows[0], t * 2 + lat);
  EXPECT_PRED2(near, on_flows[1], t * 3 + lat);
  EXPECT_PRED2(near, on_flows[2], t * 2 + lat);
  network::PacketNetworkModel packets(line);
  const auto on_packets = run(packets);
  // Sharing the link packet by packet, 0 and 2 end within a packet or two of each other.
  const Time packet = bw.transfer_time(Bytes(4096));
  for (const size_t i : {0, 2}) {
    EXPECT_LE(on_packets[i], on_flows[i] + packet * 2) << i;
    EXPECT_GE(on_packets[i], on_flows[i] - packet * 2) << i;
  }
  EXPECT_GE(on_packets[1], on_flows[1]);
  EXPECT_LE(on_packets[1], on_flows[1] + packet * 2);
}

}  // namespace
}  // namespace dtsim::collectives
