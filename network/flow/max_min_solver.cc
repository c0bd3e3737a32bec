#include "network/flow/max_min_solver.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace dtsim::network::flow {

uint32_t FlowProblem::add_flow(std::span<const uint32_t> links) {
  flow_links.insert(flow_links.end(), links.begin(), links.end());
  flow_offsets.push_back(static_cast<uint32_t>(flow_links.size()));
  return static_cast<uint32_t>(flow_count() - 1);
}

void FlowProblem::clear_flows() {
  flow_offsets.assign(1, 0);
  flow_links.clear();
  link_offsets.clear();
  link_flows.clear();
}

void FlowProblem::build_link_index() {
  // Counting sort by link: flows land in ascending order within each link, so the index (and
  // everything computed from it) is a deterministic function of the flow list.
  const size_t links = link_count();
  link_offsets.assign(links + 1, 0);
  for (uint32_t l : flow_links) {
    assert(l < links);
    ++link_offsets[l + 1];
  }
  for (size_t l = 0; l < links; ++l) link_offsets[l + 1] += link_offsets[l];
  link_flows.resize(flow_links.size());
  std::vector<uint32_t> cursor(link_offsets.begin(), link_offsets.end() - 1);
  for (size_t f = 0; f < flow_count(); ++f) {
    for (uint32_t l : links_of(f)) link_flows[cursor[l]++] = static_cast<uint32_t>(f);
  }
}

void CpuMaxMinSolver::solve(const FlowProblem& p, std::span<double> rates) {
  assert(rates.size() == p.flow_count());
  assert(p.link_offsets.size() == p.link_count() + 1);
  const size_t links = p.link_count();
  constexpr double kInf = std::numeric_limits<double>::infinity();

  remaining_.assign(p.capacity.begin(), p.capacity.end());
  unfrozen_.assign(links, 0);
  frozen_now_.assign(links, 0);
  frozen_.assign(p.flow_count(), 0);
  active_links_.clear();
  for (size_t l = 0; l < links; ++l) {
    unfrozen_[l] = p.link_offsets[l + 1] - p.link_offsets[l];
    if (unfrozen_[l] > 0) active_links_.push_back(static_cast<uint32_t>(l));
  }
  for (size_t f = 0; f < p.flow_count(); ++f) {
    if (p.flow_offsets[f] == p.flow_offsets[f + 1]) {
      rates[f] = kInf;
      frozen_[f] = 1;
    }
  }

  std::vector<uint32_t>& touched = touched_;  // links whose flows froze this round
  uint32_t rounds = 0;
  while (!active_links_.empty()) {
    ++rounds;
    double m = kInf;
    for (uint32_t l : active_links_) m = std::min(m, remaining_[l] / static_cast<double>(unfrozen_[l]));
    const double threshold = m * (1.0 + kTieTolerance);

    touched.clear();
    for (uint32_t l : active_links_) {
      if (remaining_[l] / static_cast<double>(unfrozen_[l]) > threshold) continue;
      for (uint32_t f : p.flows_on(l)) {
        if (frozen_[f]) continue;
        frozen_[f] = 1;
        rates[f] = m;
        for (uint32_t k : p.links_of(f)) {
          if (frozen_now_[k]++ == 0) touched.push_back(k);
        }
      }
    }
    // Capacity drops by m per frozen flow, applied once per link as m * count so that the result
    // does not depend on the order flows were frozen in (the CUDA solver counts with atomics).
    for (uint32_t l : touched) {
      const double left = remaining_[l] - m * static_cast<double>(frozen_now_[l]);
      remaining_[l] = left > 0 ? left : 0;
      unfrozen_[l] -= frozen_now_[l];
      frozen_now_[l] = 0;
    }
    std::erase_if(active_links_, [&](uint32_t l) { return unfrozen_[l] == 0; });
  }
  last_rounds_ = rounds;
}

double max_link_utilization(const FlowProblem& p, std::span<const double> rates) {
  std::vector<double> load(p.link_count(), 0.0);
  for (size_t f = 0; f < p.flow_count(); ++f) {
    for (uint32_t l : p.links_of(f)) load[l] += rates[f];
  }
  double worst = 0;
  for (size_t l = 0; l < p.link_count(); ++l) {
    if (load[l] == 0) continue;
    const double u = p.capacity[l] > 0 ? load[l] / p.capacity[l] : std::numeric_limits<double>::infinity();
    worst = std::max(worst, u);
  }
  return worst;
}

}  // namespace dtsim::network::flow
