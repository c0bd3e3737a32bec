// The packet model's per-port counters (PortStats) and its sampled queues (port_timelines): the
// ports add up to the run's totals, a queue fed at twice its line rate grows at the line rate as
// the closed form says, and sampling changes nothing in the run.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "network/link_ledger.h"
#include "network/packet/packet_model.h"
#include "tests/network/star_cluster.h"

namespace dtsim::network {
namespace {

using testing_support::Recorder;
using testing_support::StarCluster;

// 400 Gb/s = 50 GB/s: a 4096-byte packet serializes in exactly 81,920 ps.
const Bandwidth kBw = Bandwidth::gbps(400);
const Bytes kMtu(4096);
const Time kMtuTime = Time::ps(81'920);

PacketModelOptions options_with(FlowControl control, Bytes buffer,
                                Time sample_interval = Time::zero()) {
  PacketModelOptions o;
  o.mtu = kMtu;
  o.buffer_per_port = buffer;
  o.flow_control = control;
  o.sample_interval = sample_interval;
  return o;
}

// The 16-to-1 incast's star, and its PFC buffer: the headroom and 64 KiB, so that pauses come
// and go all through the run.
constexpr int kSenders = 16;
StarCluster incast_star() {
  return StarCluster(kSenders + 1, kBw, Time::us(1));
}
Bytes incast_buffer(const StarCluster& star) {
  return PacketNetworkModel::pfc_headroom(star, 0, options_with(FlowControl::pfc, kMtu)) +
         Bytes::kib(64);
}

// The run of `senders` transfers of `size` from GPUs 0, 1, ... into GPU `senders`, all started at
// time zero, through a LinkLedger; what the engine and the per-link table say of it.
struct Incast {
  uint64_t fingerprint = 0;
  uint64_t events = 0;
  Time last;
  std::vector<LinkLoad> links;
};

Incast run_incast(PacketNetworkModel& net, const topology::Cluster& cluster, int senders,
                  Bytes size) {
  LinkLedger ledger(cluster, net);
  sim::Engine engine;
  Recorder r;
  for (int i = 0; i < senders; ++i)
    ledger.start(engine, {.src_gpu = i, .dst_gpu = senders, .bytes = size}, r, i);
  engine.run();
  EXPECT_EQ(r.done.size(), static_cast<size_t>(senders));
  EXPECT_EQ(net.bytes_delivered(), size * senders);
  return {engine.fingerprint(), engine.events_executed(), r.last(), ledger.loads(r.last())};
}

// The table's rows summed: counts added, peaks the largest.
PortStats table_totals(const std::vector<LinkLoad>& links) {
  PortStats t;
  for (const LinkLoad& l : links) {
    EXPECT_TRUE(l.port.has_value()) << l.name;
    if (!l.port) continue;
    t.peak_egress = std::max(t.peak_egress, l.port->peak_egress);
    t.peak_ingress = std::max(t.peak_ingress, l.port->peak_ingress);
    t.pause_frames += l.port->pause_frames;
    t.paused += l.port->paused;
    t.drops += l.port->drops;
    t.ecn_marks += l.port->ecn_marks;
  }
  return t;
}

const LinkLoad& row_of(const std::vector<LinkLoad>& links, topology::LinkId link) {
  const auto it =
      std::find_if(links.begin(), links.end(), [&](const LinkLoad& l) { return l.link == link; });
  EXPECT_NE(it, links.end()) << "link " << link;
  return *it;
}

// A 16-to-1 incast under PFC: the queue builds at the switch's port down to the receiver, which
// is the run's peak egress queue, and is never paused itself (the receiving GPU never pauses);
// the senders' up links are paused by the switch's ingress queues. Every pause counted at a port
// is one the run counted, and the table's rows add up to the run's totals.
TEST(PacketPortStats, SixteenToOneIncastUnderPfcAddsUpToTheRunTotals) {
  const int senders = kSenders;
  const StarCluster star = incast_star();
  const Bytes buffer = incast_buffer(star);
  PacketNetworkModel net(star, options_with(FlowControl::pfc, buffer));
  const Incast run = run_incast(net, star, senders, Bytes::mib(1));
  ASSERT_EQ(run.links.size(), static_cast<size_t>(senders + 1));
  const auto bottleneck = static_cast<topology::LinkId>(2 * senders + 1);
  const PortStats down = *row_of(run.links, bottleneck).port;
  EXPECT_EQ(down.peak_egress, net.peak_queue());
  EXPECT_GT(down.peak_egress, kMtu * senders);  // at least a packet from every sender waits
  EXPECT_EQ(down.pause_frames, 0u);
  EXPECT_EQ(down.paused, Time::zero());
  const PortStats totals = table_totals(run.links);
  EXPECT_GT(totals.pause_frames, 0u);
  EXPECT_EQ(totals.pause_frames, net.pause_frames());
  EXPECT_EQ(totals.paused, net.paused_time());
  EXPECT_EQ(totals.peak_ingress, net.peak_ingress_queue());
  EXPECT_EQ(totals.peak_egress, net.peak_queue());
  EXPECT_EQ(totals.drops, 0u);
  for (int i = 0; i < senders; ++i) {
    const PortStats up = *row_of(run.links, static_cast<topology::LinkId>(2 * i)).port;
    EXPECT_GT(up.pause_frames, 0u) << "sender " << i;
    EXPECT_LE(up.peak_ingress, buffer) << "sender " << i;
  }
}

// Lossy: every drop is counted at the link whose far-end buffer was full, the senders' up links.
TEST(PacketPortStats, LossyIncastDropsAddUpToTheRunTotal) {
  const int senders = 8;
  StarCluster star(senders + 1, kBw, Time::us(1));
  PacketModelOptions options = options_with(FlowControl::lossy, Bytes::kib(16));
  options.retransmit_timeout = Time::us(20);
  PacketNetworkModel net(star, options);
  const Incast run = run_incast(net, star, senders, Bytes::kib(256));
  const PortStats totals = table_totals(run.links);
  EXPECT_GT(totals.drops, 0u);
  EXPECT_EQ(totals.drops, net.drops());
  EXPECT_EQ(totals.peak_ingress, net.peak_ingress_queue());
  EXPECT_EQ(row_of(run.links, static_cast<topology::LinkId>(2 * senders + 1)).port->drops, 0u);
}

// The sampled depth at tick t, from the samples kept where the value changed.
Bytes depth_at(const PortTimeline& t, Time at) {
  Bytes bytes(0);
  for (const QueueSample& s : t.depth) {
    if (s.at > at) break;
    bytes = s.bytes;
  }
  return bytes;
}

// Two senders at line rate R into one link of rate R: the switch's port to the receiver gets 2R
// and sends R, so from the first arrival t0 (a packet's serialization and the latency) its queue
// grows at R until the senders stop, and each sample at t equals R (t - t0) within one mtu. The
// buffer (credits) is far above what the queue reaches, so it never binds.
TEST(PacketPortStats, SampledQueueOfTwoLineRateSendersGrowsAtTheLineRate) {
  const Time lat = Time::us(1);
  StarCluster star(3, kBw, lat);
  const Time interval =
      Time::ns(100);  // not a multiple of a packet's time: the ticks fall anywhere
  PacketNetworkModel net(star, options_with(FlowControl::credits, Bytes::mib(32), interval));
  const int packets = 512;
  const Incast run = run_incast(net, star, 2, kMtu * packets);
  const auto port = topology::LinkId{5};  // switch -> gpu2
  const std::vector<PortTimeline> timelines = net.port_timelines(run.last);
  ASSERT_EQ(timelines.size(), 1u);  // only the bottleneck ever queued
  const PortTimeline& t = timelines.front();
  EXPECT_EQ(t.port, port);
  EXPECT_TRUE(t.paused.empty());
  const Time t0 = kMtuTime + lat;
  const Time senders_done = kMtuTime * packets + lat;  // the last packets' arrival
  const double rate = kBw.bytes_per_s();
  int checked = 0;
  for (Time at = Time::zero(); at < senders_done; at += interval) {
    const double expected = at < t0 ? 0 : rate * (at - t0).seconds();
    EXPECT_NEAR(depth_at(t, at).as_double(), expected, static_cast<double>(kMtu.count()))
        << at.ps() << " ps";
    ++checked;
  }
  EXPECT_GT(checked, 400);
  // Then it drains, and the last sample is an empty queue. The peak counts every arrival, also
  // between two events of one instant (both senders' packets land before the port takes one),
  // so it is above the largest sample by at most one mtu.
  EXPECT_EQ(t.depth.back().bytes, Bytes(0));
  Bytes sampled(0);
  for (const QueueSample& s : t.depth) sampled = std::max(sampled, s.bytes);
  const Bytes peak = net.port_stats(port)->peak_egress;
  EXPECT_GE(peak, sampled);
  EXPECT_LE(peak, sampled + kMtu);
}

// Sampling reads the ports' state as it changes and schedules nothing: with it on, the engine
// executes the same events in the same order (its fingerprint), and every counter is the same.
TEST(PacketPortStats, SamplingChangesNeitherTheRunNorItsFingerprint) {
  const StarCluster star = incast_star();
  const Bytes buffer = incast_buffer(star);
  PacketNetworkModel off(star, options_with(FlowControl::pfc, buffer));
  PacketNetworkModel on(star, options_with(FlowControl::pfc, buffer, Time::ns(50)));
  const Incast a = run_incast(off, star, kSenders, Bytes::kib(512));
  const Incast b = run_incast(on, star, kSenders, Bytes::kib(512));
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.last, b.last);
  ASSERT_EQ(a.links.size(), b.links.size());
  for (size_t i = 0; i < a.links.size(); ++i) {
    EXPECT_EQ(a.links[i].bytes, b.links[i].bytes);
    EXPECT_EQ(a.links[i].port, b.links[i].port);
  }
  EXPECT_TRUE(off.port_timelines(a.last).empty());
  const std::vector<PortTimeline> timelines = on.port_timelines(b.last);
  ASSERT_FALSE(timelines.empty());
  uint64_t pauses = 0;
  for (const PortTimeline& t : timelines) {
    pauses += t.paused.size();
    for (const PauseSpan& p : t.paused) EXPECT_LT(p.from, p.to);
  }
  EXPECT_EQ(pauses, on.pause_frames());  // every pause, resumed before the end
}

TEST(PacketPortStats, ANegativeSampleIntervalIsRefused) {
  StarCluster star(2, kBw, Time::us(1));
  EXPECT_THROW(
      PacketNetworkModel(star, options_with(FlowControl::credits, Bytes::mib(1), Time::ps(-1))),
      std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::network
