// The packet model with a shared switch buffer under dynamic thresholds (switch_buffer = shared,
// Choudhury and Hahne): N queues congested together each hold alpha B / (1 + N alpha) of a pool
// of B bytes, with credits and lossy; under PFC the pool keeps the fabric lossless and an incast
// ends at its bottleneck's closed form; a pool too small for what it must set aside is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "network/packet/packet_model.h"
#include "tests/network/star_cluster.h"

namespace dtsim::network {
namespace {

using testing_support::Recorder;
using testing_support::StarCluster;

const Bandwidth kBw = Bandwidth::gbps(400);
const Bytes kMtu(4096);
const Time kLat = Time::us(1);

PacketModelOptions shared_options(FlowControl fc, Bytes pool, double alpha) {
  PacketModelOptions o;
  o.mtu = kMtu;
  o.flow_control = fc;
  o.switch_buffer = SwitchBuffer::shared;
  o.shared_buffer = pool;
  o.dt_alpha = alpha;
  return o;
}

// N senders at 400 Gb/s into one GPU whose down link runs at half that, so each sender's link
// into the switch stays congested.
struct SlowSinkIncast {
  SlowSinkIncast(FlowControl fc, int senders, double alpha)
      : star(senders + 1, kBw, kLat, Bandwidth::gbps(200)), net(star, shared_options(fc, kPool, alpha)) {
    for (int i = 0; i < senders; ++i) {
      net.start(engine, {.src_gpu = i, .dst_gpu = senders, .bytes = kSize}, r, static_cast<uint64_t>(i));
    }
  }
  static constexpr Bytes kPool = Bytes::mib(1);
  static constexpr Bytes kSize = Bytes::mib(8);
  StarCluster star;
  PacketNetworkModel net;
  sim::Engine engine;
  Recorder r;
};

// Credits: the run is stopped at 40, 60 and 80% of the bottleneck's time, long after the first
// grants (each up to alpha B / (1 + alpha)) have drained, and every sender's link must then hold
// the threshold's share, q = alpha (B - idle) / (1 + N alpha), idle the first grant (one mtu) the
// receiver's up link keeps, which carries nothing. Within one mtu, or alpha mtus where alpha > 1:
// grants come an mtu at a time, and one mtu more in the pool moves the threshold by alpha mtus.
TEST(PacketSharedBuffer, CreditsGrantEachCongestedLinkTheThresholdsShare) {
  for (int senders : {1, 2, 4}) {
    for (double alpha : {1.0, 2.0, 0.5}) {
      SlowSinkIncast run(FlowControl::credits, senders, alpha);
      const auto pool = static_cast<double>(SlowSinkIncast::kPool.count());
      const auto mtu = static_cast<double>(kMtu.count());
      const double share = alpha * (pool - mtu) / (1 + senders * alpha);
      const Time bottleneck = Bandwidth::gbps(200).transfer_time(SlowSinkIncast::kSize * senders);
      for (double at : {0.4, 0.6, 0.8}) {
        run.engine.run(Time::ps(static_cast<int64_t>(static_cast<double>(bottleneck.ps()) * at)));
        for (int i = 0; i < senders; ++i) {
          EXPECT_NEAR(static_cast<double>(run.net.pool_held(static_cast<topology::LinkId>(2 * i)).count()), share,
                      std::max(1.0, alpha) * mtu)
              << senders << " senders, alpha " << alpha << ", sender " << i << " at " << at;
        }
      }
      run.engine.run();
      EXPECT_EQ(run.r.done.size(), static_cast<size_t>(senders));
      EXPECT_EQ(run.net.bytes_delivered(), SlowSinkIncast::kSize * senders);
      EXPECT_LE(run.net.peak_pool(), SlowSinkIncast::kPool);
    }
  }
}

// Lossy: go-back-N empties a queue now and then, so the shares move; what holds is the bound: a
// queue admits a packet only below alpha (B - U) <= alpha (B - q), so no queue ever holds more
// than alpha B / (1 + alpha) and a packet, and one sender alone reaches it. Drops restore every
// byte.
TEST(PacketSharedBuffer, LossyQueuesStayBelowTheThresholdsBound) {
  for (int senders : {1, 2, 4}) {
    for (double alpha : {1.0, 2.0, 0.5}) {
      SlowSinkIncast run(FlowControl::lossy, senders, alpha);
      run.engine.run();
      const double bound = alpha * static_cast<double>(SlowSinkIncast::kPool.count()) / (1 + alpha);
      double most = 0;
      for (int i = 0; i < senders; ++i) {
        most = std::max(most, static_cast<double>(run.net.port_stats(2 * i)->peak_ingress.count()));
      }
      EXPECT_LE(most, bound + static_cast<double>(kMtu.count())) << senders << " senders, alpha " << alpha;
      if (senders == 1) {
        EXPECT_GE(most, bound - static_cast<double>(kMtu.count())) << "alpha " << alpha;
      }
      EXPECT_GT(run.net.drops(), 0u);
      EXPECT_EQ(run.r.done.size(), static_cast<size_t>(senders));
      EXPECT_EQ(run.net.bytes_delivered(), SlowSinkIncast::kSize * senders);
      EXPECT_LE(run.net.peak_pool(), SlowSinkIncast::kPool);
    }
  }
}

// 16 x 1 MiB into one GPU under PFC, the pool the 17 links' headroom and 4 MiB more: senders are
// paused (the threshold, 4 MiB / 17 per queue, is well below what the incast queues), no byte is
// lost, the pool never holds more than its size, and the down link never idles, so the last byte
// arrives at the bottleneck's closed form, to the picosecond.
TEST(PacketSharedBuffer, PfcIncastIsLosslessAndEndsAtTheBottlenecksTime) {
  const int senders = 16;
  const Bytes size = Bytes::mib(1);
  StarCluster star(senders + 1, kBw, kLat);
  PacketModelOptions options = shared_options(FlowControl::pfc, Bytes(0), 1.0);
  Bytes headroom;
  for (int i = 0; i <= senders; ++i) headroom += PacketNetworkModel::pfc_headroom(star, 2 * i, options);
  options.shared_buffer = headroom + Bytes::mib(4);
  options.buffer_per_port = PacketNetworkModel::pfc_headroom(star, 1, options);  // the GPUs' own
  PacketNetworkModel net(star, options);
  const Recorder r = testing_support::run_incast(net, senders, size);
  EXPECT_GT(net.pause_frames(), 0u);
  EXPECT_EQ(net.drops(), 0u);
  EXPECT_LE(net.peak_pool(), options.shared_buffer);
  EXPECT_GT(net.peak_pool(), Bytes::mib(2));
  const Time s = kBw.transfer_time(kMtu);
  EXPECT_EQ(r.last(), s + kLat + kBw.transfer_time(size * senders) + kLat);
}

TEST(PacketSharedBuffer, APoolBelowWhatItSetsAsideIsRefusedInOneLine) {
  StarCluster star(5, kBw, kLat);
  PacketModelOptions pfc = shared_options(FlowControl::pfc, Bytes(0), 1.0);
  Bytes headroom;
  for (int i = 0; i < 5; ++i) headroom += PacketNetworkModel::pfc_headroom(star, 2 * i, pfc);
  pfc.shared_buffer = headroom + kMtu;
  EXPECT_EQ(PacketNetworkModel::shared_shortfall(star, pfc), "");
  pfc.shared_buffer = headroom + kMtu - Bytes(1);
  const std::string line = PacketNetworkModel::shared_shortfall(star, pfc);
  EXPECT_NE(line.find("switch switch's 5 links"), std::string::npos) << line;
  EXPECT_NE(line.find(std::to_string((headroom + kMtu).count()) + " bytes"), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_THROW(PacketNetworkModel(star, pfc), std::invalid_argument);
  // Credits need an mtu per link for the first grants.
  EXPECT_NE(PacketNetworkModel::shared_shortfall(star, shared_options(FlowControl::credits, kMtu * 5 - Bytes(1), 1)), "");
  EXPECT_EQ(PacketNetworkModel::shared_shortfall(star, shared_options(FlowControl::credits, kMtu * 5, 1)), "");
  EXPECT_THROW(PacketNetworkModel(star, shared_options(FlowControl::lossy, Bytes::mib(1), 0)), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::network
