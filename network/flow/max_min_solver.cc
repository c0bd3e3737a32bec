#include "network/flow/max_min_solver.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace dtsim::network::flow {

uint32_t FlowProblem::add_flow(std::span<const uint32_t> links, double w) {
  assert(w > 0 && w <= 0x1p20);
  w = std::max(std::nearbyint(w / kWeightUnit), 1.0) * kWeightUnit;  // whole units, at least one
  if (w != 1.0 || !weight.empty()) {
    weight.resize(flow_count(), 1.0);  // the flows before the first weighted one weigh 1
    weight.push_back(w);
  }
  flow_links.insert(flow_links.end(), links.begin(), links.end());
  flow_offsets.push_back(static_cast<uint32_t>(flow_links.size()));
  return static_cast<uint32_t>(flow_count() - 1);
}

uint64_t FlowProblem::weight_units(size_t f) const {
  return weight.empty() ? kUnitsPerWeight : static_cast<uint64_t>(weight[f] / kWeightUnit);
}

void FlowProblem::clear_flows() {
  flow_offsets.assign(1, 0);
  flow_links.clear();
  weight.clear();
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
  cursor_.assign(link_offsets.begin(), link_offsets.end() - 1);
  for (size_t f = 0; f < flow_count(); ++f) {
    for (uint32_t l : links_of(f)) link_flows[cursor_[l]++] = static_cast<uint32_t>(f);
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
  unfrozen_units_.assign(links, 0);
  frozen_units_now_.assign(links, 0);
  frozen_.assign(p.flow_count(), 0);
  position_.assign(links, 0);
  active_links_.clear();
  active_share_.clear();
  for (size_t l = 0; l < links; ++l) {
    unfrozen_[l] = p.link_offsets[l + 1] - p.link_offsets[l];
    if (unfrozen_[l] == 0) continue;
    assert(p.capacity[l] >= 0 && p.capacity[l] < kInf);
    if (p.weighted()) {
      for (uint32_t f : p.flows_on(l)) unfrozen_units_[l] += p.weight_units(f);
    } else {
      unfrozen_units_[l] = unfrozen_[l] * kUnitsPerWeight;
    }
    position_[l] = static_cast<uint32_t>(active_links_.size());
    active_links_.push_back(static_cast<uint32_t>(l));
    active_share_.push_back(remaining_[l] / weight_of_units(unfrozen_units_[l]));
  }
  for (size_t f = 0; f < p.flow_count(); ++f) {
    if (p.flow_offsets[f] == p.flow_offsets[f + 1]) {
      rates[f] = kInf;
      frozen_[f] = 1;
    }
  }

  // Shares live in a dense array beside their link ids and change only for links a round touched,
  // so a round's minimum and its bottleneck set are two passes over contiguous doubles. A link
  // whose flows are all frozen keeps share +infinity until the array is compacted.
  std::vector<uint32_t>& touched = touched_;  // links whose flows froze this round
  size_t dead = 0;
  uint32_t rounds = 0;
  while (dead < active_links_.size()) {
    ++rounds;
    // One pass finds the minimum and every link that might tie with it (those within the
    // tolerance of the minimum so far); the candidates are then filtered by the final threshold.
    double m = kInf;
    double threshold = kInf;
    candidates_.clear();
    for (size_t i = 0; i < active_share_.size(); ++i) {
      const double share = active_share_[i];
      if (share > threshold) continue;
      if (share < m) {
        m = share;
        threshold = m * (1.0 + kTieTolerance);
      }
      candidates_.push_back(static_cast<uint32_t>(i));
    }
    bottlenecks_.clear();
    for (uint32_t i : candidates_) {
      if (active_share_[i] <= threshold) bottlenecks_.push_back(active_links_[i]);
    }

    touched.clear();
    for (uint32_t l : bottlenecks_) {
      for (uint32_t f : p.flows_on(l)) {
        if (frozen_[f]) continue;
        frozen_[f] = 1;
        rates[f] = m * p.weight_of(f);
        const uint64_t units = p.weight_units(f);
        for (uint32_t k : p.links_of(f)) {
          if (frozen_now_[k]++ == 0) touched.push_back(k);
          frozen_units_now_[k] += units;
        }
      }
    }
    // Capacity drops by m per unit of weight frozen, applied once per link as m * weight; the
    // weight is an integer sum of units, so neither this solver's freezing order nor the order
    // the CUDA solver's atomics land in changes it (for weights of 1 it is the count).
    for (uint32_t l : touched) {
      const double left = remaining_[l] - m * weight_of_units(frozen_units_now_[l]);
      remaining_[l] = left > 0 ? left : 0;
      unfrozen_[l] -= frozen_now_[l];
      unfrozen_units_[l] -= frozen_units_now_[l];
      frozen_now_[l] = 0;
      frozen_units_now_[l] = 0;
      if (unfrozen_[l] > 0) {
        active_share_[position_[l]] = remaining_[l] / weight_of_units(unfrozen_units_[l]);
      } else {
        active_share_[position_[l]] = kInf;
        ++dead;
      }
    }
    if (dead * 2 > active_links_.size()) {
      size_t kept = 0;
      for (size_t i = 0; i < active_links_.size(); ++i) {
        const uint32_t l = active_links_[i];
        if (unfrozen_[l] == 0) continue;
        position_[l] = static_cast<uint32_t>(kept);
        active_links_[kept] = l;
        active_share_[kept] = active_share_[i];
        ++kept;
      }
      active_links_.resize(kept);
      active_share_.resize(kept);
      dead = 0;
    }
  }
  last_rounds_ = rounds;
}

double max_link_utilization(const FlowProblem& p, std::span<const double> rates) {
  std::vector<double> load;
  return max_link_utilization(p, rates, load);
}

double max_link_utilization(const FlowProblem& p, std::span<const double> rates, std::vector<double>& load) {
  load.assign(p.link_count(), 0.0);
  for (size_t f = 0; f < p.flow_count(); ++f) {
    for (uint32_t l : p.links_of(f)) load[l] += rates[f];
  }
  double worst = 0;
  for (size_t l = 0; l < p.link_count(); ++l) {
    if (load[l] == 0) continue;
    const double u =
        p.capacity[l] > 0 ? load[l] / p.capacity[l] : std::numeric_limits<double>::infinity();
    worst = std::max(worst, u);
  }
  return worst;
}

}  // namespace dtsim::network::flow
