#include "network/analytical/analytical_network.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/network/line_cluster.h"

namespace dtsim::network {
namespace {

struct Recorder final : sim::EventHandler {
  std::vector<std::pair<uint64_t, Time>> done;
  void on_event(sim::Engine& e, uint64_t payload) override { done.emplace_back(payload, e.now()); }
};

TEST(AnalyticalNetwork, TransferTakesPathLatencyPlusBytesAtTheBottleneck) {
  // gpu0 -(100 GB/s, 1us)- gpu1 -(25 GB/s, 2us)- gpu2
  const testing_support::LineCluster c(
      {{Bandwidth::gbytes_per_s(100), Time::us(1)}, {Bandwidth::gbytes_per_s(25), Time::us(2)}});
  AnalyticalNetwork net(c);
  EXPECT_EQ(net.transfer_time({0, 2, Bytes(25'000'000)}), Time::us(3) + Time::us(1000));
}

// As in the flow and packet models: no bytes to another GPU is a message that pays the route's
// latencies; to itself it is free.
TEST(AnalyticalNetwork, EmptyTransferTakesItsRoutesLatency) {
  const testing_support::LineCluster c(
      {{Bandwidth::gbytes_per_s(100), Time::us(1)}, {Bandwidth::gbytes_per_s(25), Time::us(2)}});
  AnalyticalNetwork net(c);
  EXPECT_EQ(net.transfer_time({0, 2, Bytes(0)}), Time::us(3));
  EXPECT_EQ(net.transfer_time({2, 2, Bytes(0)}), Time::zero());
}

TEST(AnalyticalNetwork, ConcurrentTransfersDoNotSlowEachOther) {
  const testing_support::LineCluster c({{Bandwidth::gbytes_per_s(10), Time::us(1)}});
  AnalyticalNetwork net(c);
  sim::Engine engine;
  Recorder r;
  net.start(engine, {0, 1, Bytes(10'000'000)}, r, 1);
  net.start(engine, {0, 1, Bytes(10'000'000)}, r, 2);
  engine.run();
  ASSERT_EQ(r.done.size(), 2u);
  EXPECT_EQ(r.done[0].second, Time::us(1001));
  EXPECT_EQ(r.done[1].second, Time::us(1001));
}

TEST(AnalyticalNetwork, CountsEveryByteSent) {
  const testing_support::LineCluster c({{Bandwidth::gbytes_per_s(10), Time::us(1)}});
  AnalyticalNetwork net(c);
  sim::Engine engine;
  Recorder r;
  net.start(engine, {0, 1, Bytes(123)}, r, 1);
  net.start(engine, {1, 0, Bytes(877)}, r, 2);
  engine.run();
  EXPECT_EQ(net.bytes_delivered(), Bytes(1000));
}

TEST(AnalyticalNetwork, TransferToItselfIsInstant) {
  const testing_support::LineCluster c({{Bandwidth::gbytes_per_s(10), Time::us(1)}});
  const AnalyticalNetwork net(c);
  EXPECT_EQ(net.transfer_time({1, 1, Bytes(1 << 20)}), Time::zero());
}

}  // namespace
}  // namespace dtsim::network
