// CpuMaxMinSolver::fill, the progressive filling of max_min_solver.h over any layout of the
// flow-link graph. A layout is a View:
//   size_t flow_count(), link_count();
//   double capacity(uint32_t l);                 // what link l offers, bytes per second
//   uint32_t flows_on_count(uint32_t l);         // how many of the flows cross l
//   uint64_t units_on(uint32_t l);               // their weights summed, in kWeightUnit units
//   void for_each_flow_on(uint32_t l, fn(f));    // each flow crossing l, once
//   void for_each_link_of(uint32_t f, fn(l));    // each link flow f crosses, once
//   bool crosses_nothing(uint32_t f);
//   uint64_t weight_units(uint32_t f); double weight(uint32_t f);
// FlowProblem's CSR arrays are one (CsrView below); the flow model's persistent flows and links
// are another, so it solves a component where the flows live instead of copying it out first.
#pragma once

#include <cassert>
#include <limits>

#include "network/flow/max_min_solver.h"

namespace dtsim::network::flow {

template <typename View>
void CpuMaxMinSolver::fill(const View& v, std::span<double> rates) {
  assert(rates.size() == v.flow_count());
  const size_t links = v.link_count();
  constexpr double kInf = std::numeric_limits<double>::infinity();

  remaining_.resize(links);
  unfrozen_.resize(links);
  frozen_now_.assign(links, 0);
  unfrozen_units_.resize(links);
  frozen_units_now_.assign(links, 0);
  frozen_.assign(v.flow_count(), 0);
  position_.resize(links);
  active_links_.clear();
  active_share_.clear();
  for (uint32_t l = 0; l < links; ++l) {
    remaining_[l] = v.capacity(l);
    unfrozen_[l] = v.flows_on_count(l);
    unfrozen_units_[l] = 0;
    if (unfrozen_[l] == 0) continue;
    assert(remaining_[l] >= 0 && remaining_[l] < kInf);
    unfrozen_units_[l] = v.units_on(l);
    position_[l] = static_cast<uint32_t>(active_links_.size());
    active_links_.push_back(l);
    active_share_.push_back(remaining_[l] / weight_of_units(unfrozen_units_[l]));
  }
  for (uint32_t f = 0; f < v.flow_count(); ++f) {
    if (v.crosses_nothing(f)) {
      rates[f] = kInf;
      frozen_[f] = 1;
    }
  }

  // Shares live in a dense array beside their link ids and change only for links a round touched,
  // so a round's minimum and its bottleneck set are two passes over contiguous doubles. A link
  // whose flows are all frozen keeps share +infinity until the array is compacted. (A heap of
  // shares costs more: a round touches most links, and each would be pushed.)
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
      v.for_each_flow_on(l, [&](uint32_t f) {
        if (frozen_[f]) return;
        frozen_[f] = 1;
        rates[f] = m * v.weight(f);
        const uint64_t units = v.weight_units(f);
        v.for_each_link_of(f, [&](uint32_t k) {
          if (frozen_now_[k]++ == 0) touched.push_back(k);
          frozen_units_now_[k] += units;
        });
      });
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

}  // namespace dtsim::network::flow
