// DCTCP on the packet model (network/packet/dctcp.h), against its analysis (Alizadeh et al.,
// SIGCOMM 2010, section 3.3): long flows into one bottleneck hold its queue near K at full line
// rate and share it fairly, and a lone flow pays only its window's growth from the initial window.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "network/packet/packet_model.h"
#include "sim/engine.h"
#include "tests/network/star_cluster.h"

namespace dtsim::network {
namespace {

using testing_support::Recorder;
using testing_support::StarCluster;

// 100 Gb/s = 12.5 GB/s: a 4096-byte packet serializes in 327,680 ps.
const Bandwidth kBw = Bandwidth::gbps(100);
const Time kLatency = Time::us(2);
constexpr int64_t kMss = 4096;

PacketModelOptions dctcp(Bytes k) {
  PacketModelOptions o{.mtu = Bytes(kMss), .buffer_per_port = Bytes::mib(32), .dcqcn = {}, .link_efficiency = {}};
  o.dctcp = {.enabled = true, .k = k};
  return o;
}

// The round trip of a full packet on the star: its serialization on both links, both links'
// latencies there, and the ACK's two latencies back (an ACK takes no bandwidth).
Time round_trip() {
  return kBw.transfer_time(Bytes(kMss)) * 2 + kLatency * 4;
}

// Samples a port's queue at a fixed period over [from, to): its time average, and the bytes the
// port sent over the same interval.
struct QueueSampler final : sim::EventHandler {
  const PacketNetworkModel& net;
  topology::LinkId port;
  Time from, to, period;
  double sum = 0;
  int64_t samples = 0;
  Bytes sent_at_from, sent_at_to;
  QueueSampler(const PacketNetworkModel& n, topology::LinkId p, Time f, Time t, Time dt)
      : net(n), port(p), from(f), to(t), period(dt) {}
  void on_event(sim::Engine& engine, uint64_t /*payload*/) override {
    if (engine.now() == from) sent_at_from = net.bytes_sent_on(port);
    if (engine.now() >= to) {
      sent_at_to = net.bytes_sent_on(port);
      return;
    }
    sum += static_cast<double>(net.queued_at(port).count());
    ++samples;
    engine.schedule_in(period, *this);
  }
  double average() const { return sum / static_cast<double>(samples); }
};

struct Steady {
  double average_queue = 0;  // bytes
  double utilization = 0;    // of the bottleneck over the measured interval
  std::vector<Time> finish;  // each flow's completion
  uint64_t marks = 0;
  uint64_t cuts = 0;
};

// n long flows of `bytes` each from gpus 0..n-1 into gpu n, all started at zero; the bottleneck
// (the switch's port down to gpu n) is measured from `warmup` until 80% of the run's ideal length.
Steady run_incast(int n, Bytes k, Bytes bytes, Time warmup) {
  StarCluster star(n + 1, kBw, kLatency);
  PacketNetworkModel net(star, dctcp(k));
  const auto bottleneck = static_cast<topology::LinkId>(2 * n + 1);
  const Time ideal = kBw.transfer_time(Bytes(bytes.count() * n));
  sim::Engine engine;
  QueueSampler sampler(net, bottleneck, warmup, Time::ps(ideal.ps() * 8 / 10), Time::ns(50));
  engine.schedule_at(warmup, sampler);
  Recorder r;
  for (int i = 0; i < n; ++i) {
    net.start(engine, {.src_gpu = i, .dst_gpu = n, .bytes = bytes}, r, static_cast<uint64_t>(i));
  }
  engine.run();
  EXPECT_EQ(net.bytes_delivered().count(), bytes.count() * n);
  Steady s{.average_queue = sampler.average(),
           .utilization = static_cast<double>((sampler.sent_at_to - sampler.sent_at_from).count()) /
                          (kBw.bytes_per_s() * (sampler.to - sampler.from).seconds()),
           .finish = {},
           .marks = net.ecn_marks(),
           .cuts = net.window_cuts()};
  for (int i = 0; i < n; ++i) s.finish.push_back(r.time_of(static_cast<uint64_t>(i)));
  return s;
}

// The steady state of DCTCP's analysis in packets (section 3.3): with W* = (C x RTT + K) / N the
// window at which the queue reaches K, each flow's window saws between W* + 1 and
// (W* + 1)(1 - alpha / 2), alpha = sqrt(2 / W*), so the queue saws between
//   Q_max = K + N  and  Q_min = Q_max - A,  A = N (W* + 1) alpha / 2 ~ sqrt(2 N (C x RTT + K)) / 2,
// and its time average lies between the two. We allow one packet beyond each end for the
// sampling and for marking on the instantaneous queue, packet by packet.
void expect_queue_near_k(int n) {
  const Bytes k = Bytes::kib(64);  // 16 packets, above C x RTT / 7 ~ 4
  const Steady s = run_incast(n, k, Bytes::mib(32), Time::ms(1));
  const double bdp = kBw.bytes_per_s() * round_trip().seconds() / kMss;  // C x RTT in packets
  const double kp = static_cast<double>(k.count()) / kMss;
  const double w = (bdp + kp) / n;
  const double amplitude = n * (w + 1) * std::sqrt(2 / w) / 2;
  const double q_max = kp + n;
  const double q_min = q_max - amplitude;
  const double average = s.average_queue / kMss;
  EXPECT_GE(average, q_min - 1) << n << " flows: amplitude " << amplitude;
  EXPECT_LE(average, q_max + 1) << n << " flows: amplitude " << amplitude;
  EXPECT_GE(s.utilization, 0.95) << n << " flows";
  EXPECT_GT(s.marks, 0u);
  EXPECT_GT(s.cuts, 0u);
}

TEST(Dctcp, TwoLongFlowsHoldTheBottleneckQueueNearKAtLineRate) { expect_queue_near_k(2); }

TEST(Dctcp, EightLongFlowsHoldTheBottleneckQueueNearKAtLineRate) { expect_queue_near_k(8); }

// Equal flows started together, each goodput its bytes over its completion time: within 10%.
TEST(Dctcp, LongFlowsIntoOneBottleneckShareItFairly) {
  for (int n : {2, 8}) {
    const Steady s = run_incast(n, Bytes::kib(64), Bytes::mib(32), Time::ms(1));
    const auto [first, last] = std::minmax_element(s.finish.begin(), s.finish.end());
    // goodput_i = bytes / finish_i, so the largest over the smallest is last / first.
    EXPECT_LE(static_cast<double>(last->ps()) / static_cast<double>(first->ps()), 1.10) << n << " flows";
  }
}

// A lone flow on an idle path: its queue never reaches K, so no mark and no cut; it costs the
// store-and-forward time S/B + 2 L + s (s a packet's serialization) plus, while its window is
// below the path's bandwidth-delay product W* = C x RTT, at most one round trip per doubling of
// slow start from the initial window: ceil(log2(W* / IW)) round trips.
TEST(Dctcp, LoneFlowPaysOnlyItsWindowGrowthFromTheInitialWindow) {
  StarCluster star(2, kBw, kLatency);
  const PacketModelOptions options = dctcp(Bytes::kib(64));
  PacketNetworkModel net(star, options);
  const Bytes bytes = Bytes::mib(8);
  sim::Engine engine;
  Recorder r;
  net.start(engine, {.src_gpu = 0, .dst_gpu = 1, .bytes = bytes}, r, 0);
  engine.run();
  const Time fluid = kBw.transfer_time(bytes) + kLatency * 2 + kBw.transfer_time(Bytes(kMss));
  const double bdp = kBw.bytes_per_s() * round_trip().seconds();
  const double rounds = std::ceil(std::log2(bdp / static_cast<double>(options.dctcp.initial_window.count())));
  ASSERT_EQ(rounds, 2);  // 10 packets, then 20, then more than W* ~ 26
  const Time finish = r.time_of(0);
  EXPECT_GT(finish, fluid);  // the initial window is below W*: growing it costs something
  EXPECT_LE(finish, fluid + Time::ps(static_cast<int64_t>(rounds) * round_trip().ps()));
  EXPECT_EQ(net.ecn_marks(), 0u);
  EXPECT_EQ(net.window_cuts(), 0u);
}

// Without DCTCP the same flow takes exactly the store-and-forward time: the window is DCTCP's.
TEST(Dctcp, OffLeavesTheLoneFlowAtItsStoreAndForwardTime) {
  StarCluster star(2, kBw, kLatency);
  PacketNetworkModel net(star, {.mtu = Bytes(kMss), .buffer_per_port = Bytes::mib(32), .dcqcn = {},
                                .link_efficiency = {}});
  sim::Engine engine;
  Recorder r;
  net.start(engine, {.src_gpu = 0, .dst_gpu = 1, .bytes = Bytes::mib(8)}, r, 0);
  engine.run();
  EXPECT_EQ(r.time_of(0), kBw.transfer_time(Bytes::mib(8)) + kLatency * 2 + kBw.transfer_time(Bytes(kMss)));
}

TEST(Dctcp, RefusesLossyAndAnInitialWindowBelowOneMtu) {
  StarCluster star(2, kBw, kLatency);
  PacketModelOptions lossy = dctcp(Bytes::kib(64));
  lossy.flow_control = FlowControl::lossy;
  EXPECT_THROW(PacketNetworkModel(star, lossy), std::invalid_argument);
  PacketModelOptions small = dctcp(Bytes::kib(64));
  small.dctcp.initial_window = Bytes(kMss - 1);
  EXPECT_THROW(PacketNetworkModel(star, small), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::network
