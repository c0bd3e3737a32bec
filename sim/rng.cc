#include "sim/rng.h"

#include <cmath>

namespace dtsim::sim {
namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

// splitmix64's output function: a bijective mixer whose outputs for consecutive inputs look
// independent, which is what seeding needs.
constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Rng::Rng(uint64_t seed, uint64_t stream) {
  // Mixing the seed, adding the stream, and mixing again is not symmetric in its inputs, so
  // (1, 2) and (2, 1) or neighbouring streams of one seed start from unrelated words.
  uint64_t x = mix64(mix64(seed ^ kGolden) + stream);
  for (uint64_t& word : s_) {
    x += kGolden;
    word = mix64(x);
  }
}

uint64_t Rng::below(uint64_t n) {
  __extension__ using u128 = unsigned __int128;
  u128 m = static_cast<u128>(next()) * n;
  auto low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<u128>(next()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

double Rng::exponential(double mean) {
  // 1 - uniform() lies in (0, 1], so the logarithm is finite.
  return -mean * std::log(1.0 - uniform());
}

}  // namespace dtsim::sim
