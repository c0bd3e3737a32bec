// Rng: a deterministic random stream (xoshiro256**) named by (scenario seed, stream id), so every
// component draws from its own reproducible sequence and adding a component does not shift the
// numbers any other component sees. Streams are objects a component owns, never shared globals.
//   sim::Rng rng(scenario.seed, sim::stream_id("link/leaf3-spine1"));
//   Time jitter = Time::ps(static_cast<int64_t>(rng.exponential(1e6)));
//   uint64_t port = rng.below(8);
// Draws use integer arithmetic (and std::log for exponential), never std:: distributions, whose
// algorithms differ between standard libraries, so a seed gives the same numbers everywhere.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

namespace dtsim::sim {

// A stable stream id for a component name: FNV-1a of its bytes.
constexpr uint64_t stream_id(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

class Rng {
 public:
  using result_type = uint64_t;

  // The state is four consecutive splitmix64 outputs started from a mix of both inputs, so distinct
  // (seed, stream) pairs give unrelated states (the all-zero state xoshiro cannot leave would need
  // four zero outputs in a row, which splitmix64 never gives).
  Rng(uint64_t seed, uint64_t stream);

  // Meets UniformRandomBitGenerator, so it also plugs into std::shuffle and friends.
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return std::numeric_limits<uint64_t>::max(); }
  uint64_t operator()() { return next(); }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1), with the 53 bits a double holds.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject); n must be > 0.
  uint64_t below(uint64_t n);
  // Exponentially distributed with the given mean (> 0); never infinite.
  double exponential(double mean);

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace dtsim::sim
