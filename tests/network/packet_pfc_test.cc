// The packet model with PFC (flow_control = pfc, network/packet/pfc.h): a pause's round trip to
// the picosecond and its overshoot to the byte, a lossless incast at the bottleneck's closed-form
// time, and the headroom that a cable's length sets. And lossy RoCE without PFC: drops at full
// buffers, go-back-N on NAKs and timeouts, and every byte restored.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "network/packet/packet_model.h"
#include "tests/network/line_cluster.h"
#include "tests/network/star_cluster.h"

namespace dtsim::network {
namespace {

using testing_support::LineCluster;
using testing_support::Recorder;
using testing_support::run_incast;
using testing_support::StarCluster;

// 400 Gb/s = 50 GB/s: a 4096-byte packet serializes in exactly 81,920 ps, a pause frame in 1,280.
const Bandwidth kBw = Bandwidth::gbps(400);
const Bytes kMtu(4096);
const Time kMtuTime = Time::ps(81'920);
const Time kPauseTime = Time::ps(1'280);

PacketModelOptions pfc_options(Bytes buffer) {
  PacketModelOptions o;
  o.mtu = kMtu;
  o.buffer_per_port = buffer;
  o.flow_control = FlowControl::pfc;
  return o;
}

// gpu0 sends to gpu2 through gpu1 at 400 Gb/s; gpu1 forwards at 150 Gb/s, so its ingress queue
// for link 0 grows until it pauses gpu0. Everything follows from the serialization times:
// packet i lands at gpu1 at a_i = (i + 1) s + L and leaves it (its last byte out on the slow link,
// which never idles) at d_i = s + L + (i + 1) s'. The queue crosses Xoff on some arrival a_k; the
// PAUSE reaches gpu0 L + the frame's time later, exactly; the packets gpu0 started before then
// (one still on its serializer finishes) are what lands after the crossing, and the peak is the
// queue at the crossing plus those bytes less what gpu1 sent on meanwhile.
TEST(PacketPfc, PauseTakesEffectAFrameTripAfterXoffAndTheOvershootIsTheRoundTripsBytes) {
  const Time lat = Time::us(1);
  const Bandwidth slow = Bandwidth::gbps(150);
  LineCluster line({{kBw, lat}, {slow, lat}});
  const Time s = kMtuTime;
  const Time s_slow = slow.transfer_time(kMtu);  // 218,454 ps: no arrival ties a departure below
  const Bytes headroom = PacketNetworkModel::pfc_headroom(line, 0, pfc_options(kMtu));
  const int64_t xoff = 16 * kMtu.count();
  const Bytes buffer = headroom + Bytes(xoff);
  const int64_t packets = 1024;
  const int64_t m = kMtu.count();

  auto arrival = [&](int64_t i) { return s * (i + 1) + lat; };
  auto departure = [&](int64_t i) { return s + lat + s_slow * (i + 1); };
  auto departed_by = [&](Time t) {  // packets gpu1 has sent on by t
    int64_t n = 0;
    while (departure(n) <= t) {
      EXPECT_NE(departure(n), t) << "a tie the oracle does not order";
      ++n;
    }
    return n;
  };
  // The crossing: the first arrival after which the queue holds more than Xoff.
  int64_t k = 0;
  while (m * (k + 1 - departed_by(arrival(k))) <= xoff) ++k;
  const Time crossed = arrival(k);
  const Time pause_lands = crossed + lat + kPauseTime;
  ASSERT_NE(pause_lands.ps() % s.ps(), 0) << "a packet starts as the pause lands";
  // Packets started before the pause lands: i s < pause_lands.
  const int64_t sent = pause_lands.ps() / s.ps() + 1;
  const Time last_lands = arrival(sent - 1);
  const int64_t on_the_wire = m * (sent - 1 - k);  // bytes put on the wire in the round trip
  const int64_t at_crossing = m * (k + 1 - departed_by(crossed));
  const int64_t drained = m * (departed_by(last_lands) - departed_by(crossed));
  const int64_t peak = at_crossing + on_the_wire - drained;

  PacketNetworkModel net(line, pfc_options(buffer));
  sim::Engine engine;
  Recorder r;
  net.start(engine, {.src_gpu = 0, .dst_gpu = 2, .bytes = Bytes(m * packets)}, r, 0);
  engine.run(pause_lands - Time::ps(1));
  EXPECT_FALSE(net.is_paused(0));
  EXPECT_EQ(net.pause_frames(), 1u);  // sent at the crossing, still on its way
  engine.run(pause_lands);
  EXPECT_TRUE(net.is_paused(0));
  engine.run(last_lands);
  EXPECT_TRUE(net.is_paused(0));
  EXPECT_EQ(net.bytes_sent_on(0), Bytes(m * sent));  // the packet on the serializer finished, no more
  EXPECT_EQ(net.peak_ingress_queue(), Bytes(peak));
  EXPECT_EQ(net.peak_ingress_queue().count() - xoff, at_crossing - xoff + on_the_wire - drained);
  EXPECT_LE(net.peak_ingress_queue(), buffer);

  engine.run();
  EXPECT_EQ(r.done.size(), 1u);
  EXPECT_EQ(net.bytes_delivered(), Bytes(m * packets));
  EXPECT_LE(net.peak_ingress_queue(), buffer);
  EXPECT_GT(net.pause_frames(), 1u);
  EXPECT_FALSE(net.is_paused(0));
  EXPECT_GT(net.paused_time(), Time::zero());
  // The slow link never idles: the transfer ends as if gpu0 had never been paused.
  EXPECT_EQ(r.time_of(0), departure(packets - 1) + lat);
}

// 16 senders into one GPU through one switch: the ingress queues pause their senders again and
// again, none ever holds more than its buffer, every byte arrives, and the down link never idles,
// so the incast ends at the bottleneck's closed form: the first packet's serialization and
// latency to the switch, all 16 x S bytes serialized back to back on the down link, its latency.
TEST(PacketPfc, SixteenToOneIncastIsLosslessAndEndsAtTheBottlenecksTime) {
  const int senders = 16;
  const Time lat = Time::us(1);
  const Bytes size = Bytes::mib(1);  // 256 full packets
  StarCluster star(senders + 1, kBw, lat);
  const Bytes buffer = PacketNetworkModel::pfc_headroom(star, 0, pfc_options(kMtu)) + Bytes::kib(64);
  PacketNetworkModel net(star, pfc_options(buffer));
  const Recorder r = run_incast(net, senders, size);
  EXPECT_EQ(net.bytes_sent_on(2 * senders + 1), size * senders);
  EXPECT_LE(net.peak_ingress_queue(), buffer);
  EXPECT_GT(net.pause_frames(), 0u);
  EXPECT_GT(net.paused_time(), Time::zero());
  EXPECT_EQ(net.peak_buffer_occupancy(), Bytes(0));  // no credits taken
  const Time bottleneck = kMtuTime + lat + kBw.transfer_time(size * senders) + lat;
  // Tolerance zero: the down link's queue never empties, so the closed form holds to the picosecond.
  EXPECT_EQ(r.last(), bottleneck);
}

// With the least buffer PFC accepts (Xoff = 0: every arrival pauses its sender) no queue
// overflows either, and every byte still arrives, later.
TEST(PacketPfc, TheLeastBufferStillHoldsEveryQueue) {
  const int senders = 16;
  StarCluster star(senders + 1, kBw, Time::us(1));
  const Bytes buffer = PacketNetworkModel::pfc_headroom(star, 0, pfc_options(kMtu));
  PacketNetworkModel net(star, pfc_options(buffer));
  run_incast(net, senders, Bytes::kib(256) + Bytes(100));
  EXPECT_LE(net.peak_ingress_queue(), buffer);
  EXPECT_GT(net.pause_frames(), 0u);
}

// The headroom is the loop a pause closes: 2 x latency x rate + a pause frame + two packets. A
// cable twice as long needs 2 x latency x rate more, and a buffer below that is refused in one
// line naming the link and what it needs.
TEST(PacketPfc, HeadroomGrowsWithTheCableAndTooSmallABufferIsRefused) {
  const Time lat = Time::us(1);
  LineCluster shorter({{kBw, lat}});
  LineCluster longer({{kBw, lat * 2}});
  const PacketModelOptions any = pfc_options(kMtu);
  const int64_t bytes_per_latency = 50'000;  // 1 us at 50 GB/s
  const Bytes h1 = PacketNetworkModel::pfc_headroom(shorter, 0, any);
  const Bytes h2 = PacketNetworkModel::pfc_headroom(longer, 0, any);
  EXPECT_EQ(h1, Bytes(2 * bytes_per_latency + 64 + 2 * kMtu.count()));
  EXPECT_EQ(h2 - h1, Bytes(2 * bytes_per_latency));
  EXPECT_EQ(PacketNetworkModel::pfc_headroom(longer, 1, any), h2);  // the other direction alike

  EXPECT_NO_THROW({ PacketNetworkModel net(shorter, pfc_options(h2 - Bytes(1))); });
  EXPECT_NO_THROW({ PacketNetworkModel net(longer, pfc_options(h2)); });
  try {
    PacketNetworkModel net(longer, pfc_options(h2 - Bytes(1)));
    ADD_FAILURE() << "a buffer below the headroom ran";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("link 0 (gpu0 -> gpu1, 2us, 400Gbps)"), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(h2.count())), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  // With credits the same buffer runs: the headroom is PFC's alone.
  PacketModelOptions credits = pfc_options(h2 - Bytes(1));
  credits.flow_control = FlowControl::credits;
  EXPECT_NO_THROW({ PacketNetworkModel net(longer, credits); });
  EXPECT_EQ(PacketNetworkModel::pfc_shortfall(longer, credits), "");
}

PacketModelOptions lossy_options(Bytes buffer) {
  PacketModelOptions o = pfc_options(buffer);
  o.flow_control = FlowControl::lossy;
  return o;
}

// Where no buffer fills, nothing is dropped and a lossy fabric gives the credits' closed form:
// S/B + 2L + one packet's store-and-forward, to the picosecond.
TEST(PacketLossy, WithoutDropsItIsTheLosslessTime) {
  const Time lat = Time::us(1);
  StarCluster star(2, kBw, lat);
  const Bytes size = Bytes::mib(4) + Bytes(1000);
  PacketNetworkModel net(star, lossy_options(Bytes::mib(1)));
  sim::Engine engine;
  Recorder r;
  net.start(engine, {.src_gpu = 0, .dst_gpu = 1, .bytes = size}, r, 0);
  engine.run();
  EXPECT_EQ(r.time_of(0), kBw.transfer_time(size) + lat * 2 + kMtuTime);
  EXPECT_EQ(net.drops(), 0u);
  EXPECT_EQ(net.naks(), 0u);
  EXPECT_EQ(net.retransmitted(), 0u);
  EXPECT_EQ(net.bytes_delivered(), size);
}

// 16 senders into one GPU with buffers of 8 packets per ingress link: the switch drops, the
// receiver NAKs the gaps, the senders go back N (and on a lost tail, time out), and in the end
// every transfer completes with every byte delivered once, in order; nothing is left in flight,
// and no queue ever held more than its buffer. Slower than the lossless bottleneck, never faster.
TEST(PacketLossy, RetransmissionsRestoreEveryByte) {
  const int senders = 16;
  const Time lat = Time::us(1);
  const Bytes size = Bytes::kib(256) + Bytes(100);
  const Bytes buffer(8 * 4096);
  StarCluster star(senders + 1, kBw, lat);
  PacketNetworkModel net(star, lossy_options(buffer));
  const Recorder r = run_incast(net, senders, size);
  EXPECT_EQ(net.active_transfers(), 0u);
  EXPECT_EQ(net.packets_in_flight(), 0u);
  EXPECT_GT(net.drops(), 0u);
  EXPECT_GT(net.naks(), 0u);
  EXPECT_GE(net.retransmitted(), net.drops());
  EXPECT_LE(net.peak_ingress_queue(), buffer);
  EXPECT_GT(net.bytes_sent_on(2 * senders + 1), size * senders);  // the down link carried repeats
  EXPECT_GT(r.last(), kMtuTime + lat + kBw.transfer_time(size * senders) + lat);
}

// A lost tail has no later packet to reveal its gap: the sender's timer brings it back. gpu0 sends
// 3 packets to gpu2 through gpu1, which forwards at 150 Gb/s with room for 2: the third is
// dropped. At the timeout (from when the last packet left) the sender goes back to packet 0;
// the third is dropped again, but the receiver answers the repeated packet 0 with NAK(2), and
// packet 2 alone then gets through. So the transfer ends at
//   2 s + timeout               the second round starts
//   + s + L + s' + L            its packet 0 reaches gpu2, which sends NAK(2)
//   + 2 L                       the NAK's way back
//   + s + L + s' + L            packet 2 alone,
// s and s' a packet's serialization at 400 and 150 Gb/s.
TEST(PacketLossy, ALostTailComesBackOnTheTimeout) {
  const Time lat = Time::us(1);
  const Bandwidth slow = Bandwidth::gbps(150);
  LineCluster line({{kBw, lat}, {slow, lat}});
  PacketModelOptions o = lossy_options(Bytes(2 * 4096));
  o.retransmit_timeout = Time::us(20);
  PacketNetworkModel net(line, o);
  sim::Engine engine;
  Recorder r;
  net.start(engine, {.src_gpu = 0, .dst_gpu = 2, .bytes = Bytes(3 * 4096)}, r, 0);
  engine.run();
  ASSERT_EQ(r.done.size(), 1u);
  const Time s = kMtuTime;
  const Time s_slow = slow.transfer_time(kMtu);
  EXPECT_EQ(r.time_of(0), s * 4 + s_slow * 2 + lat * 6 + o.retransmit_timeout);
  EXPECT_EQ(net.timeouts(), 1u);
  EXPECT_EQ(net.drops(), 2u);
  EXPECT_EQ(net.naks(), 1u);
  EXPECT_EQ(net.retransmitted(), 4u);
  EXPECT_EQ(net.bytes_delivered(), Bytes(3 * 4096));
  EXPECT_EQ(net.packets_in_flight(), 0u);
}

}  // namespace
}  // namespace dtsim::network
