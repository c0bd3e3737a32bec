// The packet model on a partitioned engine (sim/partitioned_engine.h): for any cut of the cluster
// and any number of partitions, a run gives the serial run's fingerprint, event count, times and
// counters, and its per-link table (LinkLedger) is the serial run's. And the cut itself
// (network/packet/partition.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "collectives/schedule.h"
#include "collectives/schedule_executor.h"
#include "network/link_ledger.h"
#include "network/packet/packet_model.h"
#include "network/packet/partition.h"
#include "sim/partitioned_engine.h"
#include "tests/topology/spec_helpers.h"
#include "topology/catalog.h"

namespace dtsim::network {
namespace {

struct Outcome {
  uint64_t fingerprint = 0;
  uint64_t events = 0;
  Time finish;
  Bytes delivered;
  NetworkCounters counted;  // packets, marks, pauses, drops, retransmissions, window cuts
  uint64_t cnps = 0;
  Bytes peak;
  uint64_t naks = 0;
  uint64_t timeouts = 0;
  std::vector<PortStats> ports;           // by link
  std::vector<PortTimeline> timelines;    // with sampling
  std::vector<LinkLoad> links;            // the per-link table: bytes, busy time, port counters
  Bytes pool_peak;                        // shared switch buffers
  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "fingerprint " << o.fingerprint << ", " << o.events << " events, finish " << o.finish.us()
            << " us, " << o.delivered.count() << " bytes, " << o.counted.packets << " packets, "
            << o.counted.ecn_marks << " marks, " << o.cnps << " CNPs, peak " << o.peak.count() << ", "
            << o.counted.pause_frames << " pauses, " << o.counted.paused.ps() << " ps paused, peak ingress "
            << o.counted.peak_ingress.count() << ", " << o.counted.drops << " drops, " << o.naks << " NAKs, "
            << o.timeouts << " timeouts, " << o.counted.retransmitted << " sent again, " << o.counted.window_cuts
            << " window cuts, " << o.ports.size() << " ports, " << o.timelines.size() << " sampled, "
            << o.links.size() << " links carried bytes, pool peak " << o.pool_peak.count();
}

collectives::Schedule schedule_for(const topology::Cluster& cluster, collectives::Algorithm algorithm,
                                   collectives::CollectiveKind kind, Bytes bytes, int channels) {
  collectives::Communicator comm;
  for (int r = 0; r < cluster.gpu_count(); ++r) comm.ranks.push_back(r);
  return collectives::build_schedule(algorithm, kind, bytes, comm, channels,
                                     cluster.spec().gpus_per_node);
}

// partitions == 0: a plain Engine.
Outcome run(const topology::Cluster& cluster, const collectives::Schedule& schedule,
            const PacketModelOptions& options, uint32_t partitions) {
  PacketNetworkModel net(cluster, options);
  LinkLedger ledger(cluster, net);
  collectives::ScheduleExecutor exec(schedule, ledger);
  Outcome o;
  if (partitions == 0) {
    sim::Engine engine;
    exec.start(engine);
    engine.run();
    o.fingerprint = engine.fingerprint();
    o.events = engine.events_executed();
  } else {
    const ClusterPartition cut = partition_cluster(cluster, partitions);
    net.set_partitions(cut.partitions);
    ledger.set_partitions(cut.partitions);
    sim::PartitionedEngine engines(cut.owner, cut.lookahead);
    exec.start(engines.engine_of(0));
    engines.run();
    o.fingerprint = engines.fingerprint();
    o.events = engines.events_executed();
  }
  EXPECT_TRUE(exec.done());
  EXPECT_EQ(net.active_transfers(), 0u);
  EXPECT_EQ(net.packets_in_flight(), 0u);
  o.finish = exec.finish_time();
  o.delivered = net.bytes_delivered();
  o.counted = net.counters();
  o.cnps = net.cnps();
  o.peak = net.peak_buffer_occupancy();
  o.naks = net.naks();
  o.timeouts = net.timeouts();
  for (size_t l = 0; l < cluster.links().size(); ++l) o.ports.push_back(*net.port_stats(static_cast<topology::LinkId>(l)));
  o.timelines = net.port_timelines(o.finish);
  o.links = ledger.loads(o.finish);
  o.pool_peak = net.peak_pool();
  return o;
}

void expect_every_cut_is_serial(const topology::Cluster& cluster, const collectives::Schedule& schedule,
                                const PacketModelOptions& options) {
  const Outcome serial = run(cluster, schedule, options, 0);
  ASSERT_GT(serial.events, 1000u);
  // The per-link table has links busy for part of the run to compare.
  ASSERT_TRUE(std::any_of(serial.links.begin(), serial.links.end(), [&](const LinkLoad& l) {
    return l.busy > Time::zero() && l.busy < serial.finish;
  }));
  for (uint32_t partitions : {1u, 2u, 3u, 4u, 8u}) {
    EXPECT_EQ(run(cluster, schedule, options, partitions), serial) << partitions << " partitions";
  }
}

// A pairwise all_to_all of 8 MiB on 2 channels over 4 RoCE HGX nodes on a 2-tier fat-tree.
std::pair<std::unique_ptr<topology::Cluster>, collectives::Schedule> roce_all_to_all() {
  topology::ClusterSpec spec = topology::testing::hgx(4, topology::FabricKind::fat_tree, 8, 2);
  spec.nic.kind = topology::NicKind::roce;
  auto cluster = topology::build_cluster(spec);
  auto schedule = schedule_for(*cluster, collectives::Algorithm::pairwise, collectives::CollectiveKind::all_to_all,
                               Bytes::mib(8), 2);
  return {std::move(cluster), std::move(schedule)};
}

// A ring all_reduce over 64 GPUs, 8 HGX nodes on a 3-tier fat-tree of radix 16.
TEST(PartitionedPacketModel, RingAllReduceOnAThreeTierFatTreeIsTheSerialRun) {
  const auto cluster = topology::build_cluster(topology::testing::hgx(8, topology::FabricKind::fat_tree, 16, 3));
  const auto schedule = schedule_for(*cluster, collectives::Algorithm::ring,
                                     collectives::CollectiveKind::all_reduce, Bytes::mib(8), 8);
  expect_every_cut_is_serial(*cluster, schedule, {});
}

// An all_to_all on RoCE with DCQCN and shallow buffers: marks, CNPs (packets that cross the
// partitions back along the routes) and paced senders, all of which must come out the same
// however the cluster is cut; on credits, and lossy, where CNPs queue in the ingress buffers.
TEST(PartitionedPacketModel, DcqcnAllToAllIsTheSerialRun) {
  const auto [cluster, schedule] = roce_all_to_all();
  for (FlowControl fc : {FlowControl::credits, FlowControl::lossy}) {
    PacketModelOptions options;
    options.flow_control = fc;
    options.buffer_per_port = Bytes::kib(64);
    options.dcqcn.enabled = true;
    const Outcome serial = run(*cluster, schedule, options, 0);
    EXPECT_GT(serial.counted.ecn_marks, 0u);
    EXPECT_GT(serial.cnps, 0u);
    expect_every_cut_is_serial(*cluster, schedule, options);
  }
}

// PFC instead of credits, with buffers a little above the largest headroom (an NVLink's): pause
// and resume frames cross between partitions over the reverse links, as packets do.
TEST(PartitionedPacketModel, PfcAllToAllIsTheSerialRun) {
  const auto [cluster, schedule] = roce_all_to_all();
  PacketModelOptions options;
  options.flow_control = FlowControl::pfc;
  Bytes headroom;
  for (size_t l = 0; l < cluster->links().size(); ++l) {
    headroom =
        std::max(headroom, PacketNetworkModel::pfc_headroom(*cluster, static_cast<topology::LinkId>(l), options));
  }
  options.buffer_per_port = headroom + Bytes::kib(16);
  options.sample_interval = Time::ns(200);
  const Outcome serial = run(*cluster, schedule, options, 0);
  EXPECT_GT(serial.counted.pause_frames, 0u);
  EXPECT_FALSE(serial.timelines.empty());
  EXPECT_GT(serial.counted.paused, Time::zero());
  EXPECT_LE(serial.counted.peak_ingress, options.buffer_per_port);
  expect_every_cut_is_serial(*cluster, schedule, options);
}

// Lossy RoCE: drops at full buffers, NAKs, timeouts and packets sent again, the same however the
// cluster is cut.
TEST(PartitionedPacketModel, LossyAllToAllIsTheSerialRun) {
  const auto [cluster, schedule] = roce_all_to_all();
  PacketModelOptions options;
  options.flow_control = FlowControl::lossy;
  options.buffer_per_port = Bytes::kib(16);
  options.retransmit_timeout = Time::us(20);
  options.sample_interval = Time::ns(200);
  const Outcome serial = run(*cluster, schedule, options, 0);
  EXPECT_GT(serial.counted.drops, 0u);
  EXPECT_GT(serial.counted.retransmitted, 0u);
  EXPECT_EQ(serial.delivered, Bytes::mib(8) * (cluster->gpu_count() - 1));
  expect_every_cut_is_serial(*cluster, schedule, options);
}

// Shared switch buffers under each flow control: a switch's pool and its links' grants, queues
// and thresholds are the switch's own state, so the runs must come out the same however the
// cluster is cut. Pools small enough that the thresholds bind: credits are granted an mtu at a
// time, PFC pauses (its pool each switch's headroom and 64 KiB), lossy drops.
TEST(PartitionedPacketModel, SharedSwitchBuffersAreTheSerialRun) {
  const auto [cluster, schedule] = roce_all_to_all();
  for (FlowControl fc : {FlowControl::credits, FlowControl::pfc, FlowControl::lossy}) {
    PacketModelOptions options;
    options.flow_control = fc;
    options.switch_buffer = SwitchBuffer::shared;
    options.shared_buffer = Bytes::kib(256);
    options.retransmit_timeout = Time::us(20);
    if (fc == FlowControl::pfc) {
      std::vector<Bytes> need(cluster->devices().size());
      Bytes most;
      for (size_t l = 0; l < cluster->links().size(); ++l) {
        const auto link = static_cast<topology::LinkId>(l);
        const Bytes headroom = PacketNetworkModel::pfc_headroom(*cluster, link, options);
        need[cluster->link(link).to] += headroom;
        most = std::max(most, headroom);
      }
      options.buffer_per_port = most;  // the links into GPUs and NICs keep dedicated buffers
      options.shared_buffer = *std::max_element(need.begin(), need.end()) + Bytes::kib(64);
    }
    const Outcome serial = run(*cluster, schedule, options, 0);
    EXPECT_EQ(serial.delivered, Bytes::mib(8) * (cluster->gpu_count() - 1));
    EXPECT_GT(serial.pool_peak, Bytes(0));
    EXPECT_LE(serial.pool_peak, options.shared_buffer);
    // Credits: the pool binds, so the all_to_all is slower than with 32 MiB per link.
    if (fc == FlowControl::credits) {
      EXPECT_GT(serial.finish, run(*cluster, schedule, {}, 0).finish);
    }
    EXPECT_EQ(serial.counted.pause_frames > 0, fc == FlowControl::pfc);
    EXPECT_EQ(serial.counted.drops > 0, fc == FlowControl::lossy);
    expect_every_cut_is_serial(*cluster, schedule, options);
  }
}

// DCTCP on TCP NICs with a low K: marks at switch egress, per-packet ACKs back over the reverse
// route and windows cut by them, all of which must come out the same however the cluster is cut.
TEST(PartitionedPacketModel, DctcpAllToAllIsTheSerialRun) {
  topology::ClusterSpec spec = topology::testing::hgx(4, topology::FabricKind::fat_tree, 8, 2);
  spec.nic.kind = topology::NicKind::tcp;
  const auto cluster = topology::build_cluster(spec);
  const auto schedule = schedule_for(*cluster, collectives::Algorithm::pairwise,
                                     collectives::CollectiveKind::all_to_all, Bytes::mib(8), 2);
  PacketModelOptions options;
  options.dctcp = {.enabled = true, .k = Bytes::kib(16)};
  const Outcome serial = run(*cluster, schedule, options, 0);
  EXPECT_GT(serial.counted.ecn_marks, 0u);
  EXPECT_GT(serial.counted.window_cuts, 0u);
  EXPECT_EQ(serial.cnps, 0u);
  expect_every_cut_is_serial(*cluster, schedule, options);
}

// Ports that serve their ring in rounds (PacketModelOptions::round) settle each round's packets at
// their next event, which in a partitioned run may be a packet or a credit update from another
// partition: the all_to_all with credits and dedicated buffers, in rounds (fewer events than a
// finish per packet, the same finish) on every cut as serially.
TEST(PartitionedPacketModel, RoundsAreTheSerialRun) {
  const auto [cluster, schedule] = roce_all_to_all();
  PacketModelOptions each;
  each.round = 1;
  const Outcome per_packet = run(*cluster, schedule, each, 0);
  const Outcome rounds = run(*cluster, schedule, {}, 0);
  EXPECT_LT(rounds.events, per_packet.events);
  EXPECT_EQ(rounds.finish, per_packet.finish);
  EXPECT_EQ(rounds.links, per_packet.links);
  expect_every_cut_is_serial(*cluster, schedule, {});
}

// Adaptive routing sprays a transfer's packets over several routes that end on different links.
TEST(PartitionedPacketModel, SprayedTransfersAreTheSerialRun) {
  topology::ClusterSpec spec = topology::testing::hgx(4, topology::FabricKind::fat_tree, 8, 2);
  spec.nic.kind = topology::NicKind::efa;
  const auto cluster = topology::build_cluster(spec);
  ASSERT_TRUE(cluster->spec().adaptive_routing());
  const auto schedule = schedule_for(*cluster, collectives::Algorithm::ring,
                                     collectives::CollectiveKind::all_gather, Bytes::mib(4), 4);
  expect_every_cut_is_serial(*cluster, schedule, {});
}

TEST(PartitionCluster, KeepsEachNodeWholeAndLeavesWithTheirNodes) {
  const auto cluster = topology::build_cluster(topology::testing::hgx(8, topology::FabricKind::fat_tree, 16, 3));
  const ClusterPartition cut = partition_cluster(*cluster, 4);
  ASSERT_EQ(cut.partitions, 4u);
  const auto devices = cluster->devices();
  std::vector<int> nodes_in(cut.partitions, 0);
  for (size_t d = 0; d < devices.size(); ++d) {
    if (devices[d].node < 0) continue;
    EXPECT_EQ(cut.owner[d], static_cast<uint32_t>(devices[d].node * 4 / 8)) << devices[d].name;
    if (devices[d].kind == topology::DeviceKind::gpu && devices[d].local == 0) ++nodes_in[cut.owner[d]];
  }
  EXPECT_EQ(nodes_in, std::vector<int>(4, 2));
  // The lookahead is the least latency of a link between partitions, and every such link has it.
  Time least = Time::max();
  for (const topology::Link& l : cluster->links()) {
    if (cut.owner[l.from] != cut.owner[l.to]) least = std::min(least, l.latency);
  }
  EXPECT_EQ(cut.lookahead, least);
  EXPECT_GT(cut.lookahead, Time::zero());
}

TEST(PartitionCluster, NeverMorePartitionsThanNodes) {
  const auto cluster = topology::build_cluster(topology::testing::hgx(2, topology::FabricKind::fat_tree));
  EXPECT_EQ(partition_cluster(*cluster, 16).partitions, 2u);
  EXPECT_EQ(partition_cluster(*cluster, 1).lookahead, Time::max());
  EXPECT_THROW(partition_cluster(*cluster, 0), std::invalid_argument);
}

// A transfer must start in an event of its source GPU's partition: the executor's do, a stray
// start from elsewhere is refused rather than run on the wrong thread.
TEST(PartitionedPacketModel, ATransferStartedInAnotherPartitionIsRefused) {
  const auto cluster = topology::build_cluster(topology::testing::hgx(2, topology::FabricKind::fat_tree));
  const ClusterPartition cut = partition_cluster(*cluster, 2);
  PacketNetworkModel net(*cluster);
  net.set_partitions(cut.partitions);
  sim::PartitionedEngine engines(cut.owner, cut.lookahead);
  struct Done final : sim::EventHandler {
    void on_event(sim::Engine&, uint64_t) override {}
  } done;
  // GPU 8 is on node 1, in partition 1; site 0 is node 0's.
  EXPECT_THROW(net.start(engines.engine_of(0), {.src_gpu = 8, .dst_gpu = 0, .bytes = Bytes::mib(1)}, done, 0),
               std::logic_error);
}

}  // namespace
}  // namespace dtsim::network
