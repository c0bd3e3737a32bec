// TCP rendezvous for multi-process NCCL without MPI: rank 0 listens on HOST:PORT, every other
// rank connects and says who it is, and once all world-1 peers are there rank 0 hands each the
// same payload (the ncclUniqueId) and waits for their acknowledgements. Checks that ranks are
// in range and unique and that everyone agrees on the world size. Built on Boost.Asio; no GPU.
//   auto id = rendezvous(parse_endpoint("node0:29500"), rank, world, my_id_bytes_if_rank0, 60s);
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dtsim::validation {

struct RendezvousEndpoint {
  std::string host;
  uint16_t port = 0;
};

// "HOST:PORT" (or "[v6addr]:PORT"); throws InputError naming what is wrong.
RendezvousEndpoint parse_endpoint(std::string_view text);

// A failed rendezvous: a timeout, a peer with a bad rank or world size, a lost connection.
class RendezvousError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Rank 0's side. Binds on construction (port 0 picks a free port, see port()), so peers that
// start early only retry their connect until serve() runs.
class RendezvousServer {
 public:
  RendezvousServer(const std::string& bind_host, uint16_t port, int world);
  uint16_t port() const;
  // Collects world-1 peers, sends each `payload`, waits for every acknowledgement.
  void serve(std::span<const uint8_t> payload, std::chrono::milliseconds timeout);

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  int world_;
};

// A non-zero rank's side: connects (retrying until the timeout), returns rank 0's payload.
std::vector<uint8_t> rendezvous_join(const RendezvousEndpoint& endpoint, int rank, int world,
                                     std::chrono::milliseconds timeout);

// Either side by rank: rank 0 serves `payload` and returns it, others join and return theirs.
std::vector<uint8_t> rendezvous(const RendezvousEndpoint& endpoint, int rank, int world,
                                std::span<const uint8_t> payload, std::chrono::milliseconds timeout);

}  // namespace dtsim::validation
