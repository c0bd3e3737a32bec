#include "bench/peers/peer_run.h"

#include <algorithm>
#include <cmath>

namespace dtsim::bench::peers {

RunClock::RunClock() : wall_(std::chrono::steady_clock::now()), cpu_(std::clock()) {}

double RunClock::wall_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count();
}

double RunClock::cpu_s() const {
  return static_cast<double>(std::clock() - cpu_) / CLOCKS_PER_SEC;
}

double makespan(const PeerRun& r) {
  return r.completion_s.empty() ? 0
                                : *std::max_element(r.completion_s.begin(), r.completion_s.end());
}

Agreement compare(const PeerRun& run, const PeerRun& reference) {
  Agreement a;
  const size_t n = run.completion_s.size();
  for (size_t i = 0; i < n; ++i) {
    const double rel =
        std::abs(run.completion_s[i] - reference.completion_s[i]) / reference.completion_s[i];
    a.max_rel = std::max(a.max_rel, rel);
    a.mean_rel += rel / static_cast<double>(n);
  }
  a.makespan_rel = std::abs(makespan(run) - makespan(reference)) / makespan(reference);
  return a;
}

}  // namespace dtsim::bench::peers
