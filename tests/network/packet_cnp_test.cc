// DCQCN's CNPs as packets: each is kCnpBytes that crosses the marked packet's route in reverse,
// serialized and queued at every port. The links back carry exactly the CNPs' bytes, and a flow
// that shares a link with them finishes exactly their serialization later.
#include <gtest/gtest.h>

#include "network/packet/packet_model.h"
#include "tests/network/star_cluster.h"

namespace dtsim::network {
namespace {

using testing_support::Recorder;
using testing_support::StarCluster;

// 400 Gb/s = 50 GB/s: a 4096-byte packet serializes in exactly 81,920 ps, a CNP in 1,280.
const Bandwidth kBw = Bandwidth::gbps(400);
const Bytes kMtu(4096);
const Time kLat = Time::us(1);

PacketModelOptions dcqcn_options() {
  PacketModelOptions o;
  o.mtu = kMtu;
  o.dcqcn.enabled = true;
  return o;
}

// 7 senders x 2 MiB into gpu7 over a star: the down link's queue is marked, gpu7 answers with
// CNPs. In an incast nothing else uses the links back (gpu7's up link, the switch's links down to
// the senders): each carries exactly the CNPs that crossed it, 64 bytes each, and every CNP
// crosses gpu7's up link and one sender's down link.
TEST(PacketCnp, TheLinksBackCarryExactlyTheCnpsBytes) {
  const int senders = 7;
  StarCluster star(senders + 1, kBw, kLat);
  PacketNetworkModel net(star, dcqcn_options());
  sim::Engine engine;
  Recorder r;
  for (int i = 0; i < senders; ++i) {
    net.start(engine, {.src_gpu = i, .dst_gpu = senders, .bytes = Bytes::mib(2)}, r, static_cast<uint64_t>(i));
  }
  engine.run();
  ASSERT_EQ(r.done.size(), static_cast<size_t>(senders));
  ASSERT_GT(net.cnps(), static_cast<uint64_t>(senders));
  const Bytes cnp_bytes = kCnpBytes * static_cast<int64_t>(net.cnps());
  EXPECT_EQ(net.bytes_sent_on(2 * senders), cnp_bytes);  // gpu7 -> switch
  Bytes down;
  for (int i = 0; i < senders; ++i) down += net.bytes_sent_on(2 * i + 1);  // switch -> sender i
  EXPECT_EQ(down, cnp_bytes);
  EXPECT_EQ(net.packets_sent(), uint64_t{senders} * 512 * 2 + 2 * net.cnps());
  EXPECT_EQ(net.bytes_delivered(), Bytes::mib(2) * senders);
  EXPECT_EQ(net.active_transfers(), 0u);
  EXPECT_EQ(net.packets_in_flight(), 0u);
}

// The same incast, and gpu7 sends 32 MiB of its own to gpu8 over its up link, which the CNPs
// share. That flow is never marked (gpu8's down link has one sender at line rate) and its up link
// never idles: packets and CNPs take turns there. So its last packet leaves after the link has
// serialized its S bytes and every CNP (the incast ends long before), and it lands on gpu8 a hop
// later: (S + n x 64 B) / B + 2 L + mtu / B, to the picosecond, n x 64 B / B later than the same
// flow on its own.
TEST(PacketCnp, AFlowSharingALinkWithTheCnpsLosesExactlyTheirBandwidth) {
  const int senders = 7;
  const int receiver = senders;
  const int other = senders + 1;
  StarCluster star(senders + 2, kBw, kLat);
  const Bytes size = Bytes::mib(32);
  const Time alone = kBw.transfer_time(size) + kLat + kBw.transfer_time(kMtu) + kLat;
  {
    PacketNetworkModel net(star, dcqcn_options());
    sim::Engine engine;
    Recorder r;
    net.start(engine, {.src_gpu = receiver, .dst_gpu = other, .bytes = size}, r, 0);
    engine.run();
    ASSERT_EQ(r.time_of(0), alone);
  }
  PacketNetworkModel net(star, dcqcn_options());
  sim::Engine engine;
  Recorder r;
  net.start(engine, {.src_gpu = receiver, .dst_gpu = other, .bytes = size}, r, 100);
  for (int i = 0; i < senders; ++i) {
    net.start(engine, {.src_gpu = i, .dst_gpu = receiver, .bytes = Bytes::mib(2)}, r, static_cast<uint64_t>(i));
  }
  engine.run();
  ASSERT_EQ(r.done.size(), static_cast<size_t>(senders + 1));
  for (int i = 0; i < senders; ++i) ASSERT_LT(r.time_of(static_cast<uint64_t>(i)), r.time_of(100));
  ASSERT_GT(net.cnps(), 0u);
  EXPECT_EQ(net.ecn_marks_at(2 * other + 1), 0u);
  const Bytes cnp_bytes = kCnpBytes * static_cast<int64_t>(net.cnps());
  EXPECT_EQ(net.bytes_sent_on(2 * receiver), size + cnp_bytes);
  EXPECT_EQ(r.time_of(100), alone + kBw.transfer_time(cnp_bytes));
}

}  // namespace
}  // namespace dtsim::network
