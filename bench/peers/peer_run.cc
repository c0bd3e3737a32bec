#include "bench/peers/peer_run.h"

namespace dtsim::bench::peers {

RunClock::RunClock() : wall_(std::chrono::steady_clock::now()), cpu_(std::clock()) {}

double RunClock::wall_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count();
}

double RunClock::cpu_s() const {
  return static_cast<double>(std::clock() - cpu_) / CLOCKS_PER_SEC;
}

}  // namespace dtsim::bench::peers
