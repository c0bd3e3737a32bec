#include "validation/rendezvous.h"

#include <fmt/format.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <memory>
#include <optional>
#include <thread>

#include "sim/error.h"
#include "validation/text_fields.h"

namespace dtsim::validation {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

constexpr uint32_t kMagic = 0x44545352;  // "DTSR"
constexpr uint32_t kVersion = 1;
constexpr uint32_t kOk = 0;
constexpr uint32_t kRejected = 1;
constexpr size_t kMaxPayload = 1 << 20;

// Fixed-size big-endian words so ranks on different hosts agree on the bytes.
void put_u32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}
uint32_t get_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

struct Peer {
  tcp::socket socket;
  std::array<uint8_t, 16> hello{};  // magic, version, rank, world
  std::vector<uint8_t> reply;
  uint8_t ack = 0;
  explicit Peer(tcp::socket s) : socket(std::move(s)) {}
};

std::vector<uint8_t> make_reply(uint32_t status, std::span<const uint8_t> body) {
  std::vector<uint8_t> r(8 + body.size());
  put_u32(r.data(), status);
  put_u32(r.data() + 4, static_cast<uint32_t>(body.size()));
  std::copy(body.begin(), body.end(), r.begin() + 8);
  return r;
}

// Server-side state of one serve() call, shared by the asynchronous handlers.
struct Session {
  int world;
  std::span<const uint8_t> payload;
  tcp::acceptor& acceptor;
  std::vector<std::shared_ptr<Peer>> by_rank;  // index = rank; [0] unused
  int joined = 0;
  int acked = 0;
  std::optional<std::string> failure;

  void fail(asio::io_context& io, std::string why) {
    if (!failure) failure = std::move(why);
    io.stop();
  }
};

void accept_next(asio::io_context& io, const std::shared_ptr<Session>& s);

void on_all_joined(asio::io_context& io, const std::shared_ptr<Session>& s) {
  for (int r = 1; r < s->world; ++r) {
    std::shared_ptr<Peer> peer = s->by_rank[static_cast<size_t>(r)];
    peer->reply = make_reply(kOk, s->payload);
    asio::async_write(peer->socket, asio::buffer(peer->reply), [&io, s, peer, r](error_code ec, size_t) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) return s->fail(io, fmt::format("rank {} went away before it got the id: {}", r, ec.message()));
      asio::async_read(peer->socket, asio::buffer(&peer->ack, 1), [&io, s, r](error_code ec2, size_t) {
        if (ec2 == asio::error::operation_aborted) return;
        if (ec2) return s->fail(io, fmt::format("rank {} did not acknowledge: {}", r, ec2.message()));
        if (++s->acked == s->world - 1) io.stop();
      });
    });
  }
}

void reject(asio::io_context& io, const std::shared_ptr<Session>& s,
            const std::shared_ptr<Peer>& peer, std::string why) {
  std::string msg = why;
  peer->reply = make_reply(kRejected, std::span(reinterpret_cast<const uint8_t*>(msg.data()), msg.size()));
  asio::async_write(peer->socket, asio::buffer(peer->reply),
                    [&io, s, peer, why](error_code, size_t) { s->fail(io, why); });
}

void read_hello(asio::io_context& io, const std::shared_ptr<Session>& s, std::shared_ptr<Peer> peer) {
  asio::async_read(peer->socket, asio::buffer(peer->hello), [&io, s, peer](error_code ec, size_t) {
    if (ec) return;  // a connection that closes before saying hello (a port scan) is ignored
    const uint8_t* h = peer->hello.data();
    if (get_u32(h) != kMagic || get_u32(h + 4) != kVersion)
      return reject(io, s, peer, "a peer spoke a different protocol (not nccl-replay?)");
    uint32_t rank = get_u32(h + 8), world = get_u32(h + 12);
    if (static_cast<int>(world) != s->world)
      return reject(io, s, peer, fmt::format("rank {} says the world has {} ranks, rank 0 says {}",
                                             rank, world, s->world));
    if (rank == 0 || static_cast<int>(rank) >= s->world)
      return reject(io, s, peer, fmt::format("rank {} is out of range 1..{}", rank, s->world - 1));
    if (s->by_rank[rank])
      return reject(io, s, peer, fmt::format("two peers both claim rank {}", rank));
    s->by_rank[rank] = peer;
    if (++s->joined == s->world - 1) on_all_joined(io, s);
  });
}

void accept_next(asio::io_context& io, const std::shared_ptr<Session>& s) {
  s->acceptor.async_accept([&io, s](error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;  // serve() is over
    if (ec) return s->fail(io, "accept failed: " + ec.message());
    read_hello(io, s, std::make_shared<Peer>(std::move(socket)));
    if (s->joined + 1 < s->world) accept_next(io, s);
  });
}

}  // namespace

RendezvousEndpoint parse_endpoint(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    throw InputError(SourceLocation{}, "--rendezvous",
                     fmt::format("expected HOST:PORT, got \"{}\"", text));
  std::string_view host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  auto port = detail::parse_int(text.substr(colon + 1));
  if (!port || *port < 1 || *port > 65535)
    throw InputError(SourceLocation{}, "--rendezvous",
                     fmt::format("expected a port 1-65535 after ':', got \"{}\"", text.substr(colon + 1)));
  return RendezvousEndpoint{std::string(host), static_cast<uint16_t>(*port)};
}

RendezvousServer::RendezvousServer(const std::string& bind_host, uint16_t port, int world)
    : acceptor_(io_), world_(world) {
  if (world < 1) throw RendezvousError("the world size must be at least 1");
  tcp::resolver resolver(io_);
  error_code ec;
  auto results = resolver.resolve(bind_host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec || results.empty())
    throw RendezvousError(fmt::format("cannot resolve {}: {}", bind_host, ec.message()));
  tcp::endpoint ep = results.begin()->endpoint();
  acceptor_.open(ep.protocol());
  acceptor_.set_option(tcp::acceptor::reuse_address(true));
  acceptor_.bind(ep, ec);
  if (ec) throw RendezvousError(fmt::format("cannot listen on {}:{}: {}", bind_host, port, ec.message()));
  acceptor_.listen();
}

uint16_t RendezvousServer::port() const { return acceptor_.local_endpoint().port(); }

void RendezvousServer::serve(std::span<const uint8_t> payload, std::chrono::milliseconds timeout) {
  if (payload.size() > kMaxPayload) throw RendezvousError("rendezvous payload too large");
  if (world_ == 1) return;
  auto s = std::make_shared<Session>(Session{world_, payload, acceptor_, {}, 0, 0, {}});
  s->by_rank.resize(static_cast<size_t>(world_));
  io_.restart();
  accept_next(io_, s);
  io_.run_for(timeout);
  // Handlers hold the session; cancelling closes their sockets before `payload` goes away.
  acceptor_.cancel();
  for (auto& p : s->by_rank)
    if (p) p->socket.close();
  io_.restart();
  io_.poll();
  if (s->failure) throw RendezvousError("rendezvous failed: " + *s->failure);
  if (s->acked != world_ - 1)
    throw RendezvousError(fmt::format("rendezvous timed out after {} ms: {} of {} peers joined, {} "
                                      "acknowledged",
                                      timeout.count(), s->joined, world_ - 1, s->acked));
}

std::vector<uint8_t> rendezvous_join(const RendezvousEndpoint& endpoint, int rank, int world,
                                     std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  asio::io_context io;
  tcp::socket socket(io);
  // Rank 0 may start later than this rank: retry the connect until the deadline.
  for (;;) {
    error_code ec;
    tcp::resolver resolver(io);
    auto results = resolver.resolve(endpoint.host, std::to_string(endpoint.port), ec);
    if (!ec) {
      asio::connect(socket, results, ec);
      if (!ec) break;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      throw RendezvousError(fmt::format("rank {}: cannot reach rank 0 at {}:{}: {}", rank,
                                        endpoint.host, endpoint.port, ec.message()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::array<uint8_t, 16> hello{};
  put_u32(hello.data(), kMagic);
  put_u32(hello.data() + 4, kVersion);
  put_u32(hello.data() + 8, static_cast<uint32_t>(rank));
  put_u32(hello.data() + 12, static_cast<uint32_t>(world));
  std::array<uint8_t, 8> head{};
  std::vector<uint8_t> body;
  std::optional<std::string> failure;
  bool done = false;
  uint8_t ack = 1;
  asio::async_write(socket, asio::buffer(hello), [&](error_code ec, size_t) {
    if (ec) return void(failure = "send failed: " + ec.message());
    asio::async_read(socket, asio::buffer(head), [&](error_code ec2, size_t) {
      if (ec2) return void(failure = "rank 0 closed the connection: " + ec2.message());
      uint32_t len = get_u32(head.data() + 4);
      if (len > kMaxPayload) return void(failure = "rank 0 sent an oversized reply");
      body.resize(len);
      asio::async_read(socket, asio::buffer(body), [&](error_code ec3, size_t) {
        if (ec3) return void(failure = "reply cut short: " + ec3.message());
        if (get_u32(head.data()) != kOk)
          return void(failure = "rank 0 rejected this rank: " + std::string(body.begin(), body.end()));
        asio::async_write(socket, asio::buffer(&ack, 1), [&](error_code ec4, size_t) {
          if (ec4) failure = "acknowledgement failed: " + ec4.message();
          else done = true;
        });
      });
    });
  });
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  io.run_for(std::max(left, std::chrono::milliseconds(1)));
  if (failure) throw RendezvousError(fmt::format("rank {}: {}", rank, *failure));
  if (!done) throw RendezvousError(fmt::format("rank {}: timed out waiting for rank 0", rank));
  return body;
}

std::vector<uint8_t> rendezvous(const RendezvousEndpoint& endpoint, int rank, int world,
                                std::span<const uint8_t> payload, std::chrono::milliseconds timeout) {
  if (rank == 0) {
    RendezvousServer server("0.0.0.0", endpoint.port, world);
    server.serve(payload, timeout);
    return {payload.begin(), payload.end()};
  }
  return rendezvous_join(endpoint, rank, world, timeout);
}

}  // namespace dtsim::validation
