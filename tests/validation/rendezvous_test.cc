#include "validation/rendezvous.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "sim/error.h"

namespace dtsim::validation {
namespace {

using namespace std::chrono_literals;

TEST(Rendezvous, ThreeRanksOverLoopbackAllGetRankZerosPayload) {
  RendezvousServer server("127.0.0.1", 0, 3);
  RendezvousEndpoint ep{"127.0.0.1", server.port()};
  std::vector<uint8_t> id(128);
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(i * 37 + 11);
  auto r1 = std::async(std::launch::async, [&] { return rendezvous_join(ep, 1, 3, 10s); });
  auto r2 = std::async(std::launch::async, [&] { return rendezvous_join(ep, 2, 3, 10s); });
  server.serve(id, 10s);
  EXPECT_EQ(r1.get(), id);
  EXPECT_EQ(r2.get(), id);
}

TEST(Rendezvous, PeerThatStartsBeforeRankZeroListensRetriesUntilItCan) {
  // Find a free port, release it, and let the peer try before anyone listens there.
  uint16_t port;
  {
    RendezvousServer probe("127.0.0.1", 0, 2);
    port = probe.port();
  }
  RendezvousEndpoint ep{"127.0.0.1", port};
  auto peer = std::async(std::launch::async, [&] { return rendezvous_join(ep, 1, 2, 10s); });
  std::this_thread::sleep_for(200ms);
  std::vector<uint8_t> id{1, 2, 3};
  RendezvousServer server("127.0.0.1", port, 2);
  server.serve(id, 10s);
  EXPECT_EQ(peer.get(), id);
}

TEST(Rendezvous, DisagreementOnWorldSizeFailsBothSides) {
  RendezvousServer server("127.0.0.1", 0, 2);
  RendezvousEndpoint ep{"127.0.0.1", server.port()};
  auto peer = std::async(std::launch::async, [&] { return rendezvous_join(ep, 1, 4, 10s); });
  std::vector<uint8_t> id{9};
  EXPECT_THROW(server.serve(id, 10s), RendezvousError);
  EXPECT_THROW(peer.get(), RendezvousError);
}

TEST(Rendezvous, MissingPeerIsATimeoutNotAHang) {
  RendezvousServer server("127.0.0.1", 0, 3);
  RendezvousEndpoint ep{"127.0.0.1", server.port()};
  auto peer = std::async(std::launch::async, [&] { return rendezvous_join(ep, 1, 3, 2s); });
  std::vector<uint8_t> id{9};
  EXPECT_THROW(server.serve(id, 300ms), RendezvousError);
  EXPECT_THROW(peer.get(), RendezvousError);
}

TEST(Rendezvous, EndpointParsesHostAndPort) {
  RendezvousEndpoint ep = parse_endpoint("node0:29500");
  EXPECT_EQ(ep.host, "node0");
  EXPECT_EQ(ep.port, 29500);
  EXPECT_EQ(parse_endpoint("[::1]:80").host, "::1");
  EXPECT_THROW(parse_endpoint("node0"), InputError);
  EXPECT_THROW(parse_endpoint("node0:99999"), InputError);
}

}  // namespace
}  // namespace dtsim::validation
