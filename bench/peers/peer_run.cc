#include "bench/peers/peer_run.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

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

RepeatedRun repeat_run(int runs, const std::function<PeerRun()>& run) {
  std::vector<PeerRun> done;
  for (int i = 0; i < std::max(runs, 1); ++i) {
    done.push_back(run());
    const PeerRun& r = done.back();
    if (r.fingerprint != done.front().fingerprint || r.completion_s != done.front().completion_s) {
      throw std::runtime_error("run " + std::to_string(i + 1) + " of the same case differs from the first");
    }
  }
  std::sort(done.begin(), done.end(), [](const PeerRun& a, const PeerRun& b) { return a.cpu_s < b.cpu_s; });
  RepeatedRun out;
  out.min_cpu_s = done.front().cpu_s;
  out.max_cpu_s = done.back().cpu_s;
  out.runs = static_cast<int>(done.size());
  out.median = std::move(done[(done.size() - 1) / 2]);
  return out;
}

}  // namespace dtsim::bench::peers
