// CpuMaxMinSolver::fill, the progressive filling of max_min_solver.h over any layout of the
// flow-link graph. A layout is a View:
//   size_t flow_count(), link_count();
//   double capacity(uint32_t l);                 // what link l offers, bytes per second
//   uint32_t flows_on_count(uint32_t l);         // how many of the flows cross l
//   uint64_t units_on(uint32_t l);               // their weights summed, in kWeightUnit units
//   void for_each_flow_on(uint32_t l, fn(f));    // each flow crossing l, once
//   void for_each_link_of(uint32_t f, fn(l));    // each link flow f crosses, once
//   bool crosses_nothing(uint32_t f);
//   uint64_t weight_units(uint32_t f);           // its weight in kWeightUnit units
// FlowProblem's CSR arrays are one (CsrView, max_min_solver.cc); the flow model's persistent
// flows and links are another, so it solves a component where the flows live.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <limits>

#include "network/flow/max_min_solver.h"

namespace dtsim::network::flow {

template <typename View>
void CpuMaxMinSolver::fill(const View& v, std::span<double> rates) {
  assert(rates.size() == v.flow_count());
  const size_t links = v.link_count();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (v.flow_count() == 1 && !v.crosses_nothing(0)) {
    // A lone flow (the commonest solve of a run that starts transfers one by one): the one round
    // below, without its setup; its level is the smallest share of its links, as computed there.
    const double weight = weight_of_units(v.weight_units(0));
    double m = kInf;
    v.for_each_link_of(0, [&](uint32_t l) { m = std::min(m, v.capacity(l) / weight); });
    rates[0] = m * weight;
    last_rounds_ = 1;
    return;
  }

  remaining_.resize(links);
  unfrozen_.resize(links);
  unfrozen_units_.resize(links);
  // Every round returns the entries it counted in to zero, so these are zero between solves.
  frozen_now_.resize(links, 0);
  frozen_units_now_.resize(links, 0);
  assert(std::all_of(frozen_now_.begin(), frozen_now_.begin() + static_cast<std::ptrdiff_t>(links),
                     [](uint32_t n) { return n == 0; }));
  frozen_.assign(v.flow_count(), 0);
  position_.resize(links);
  solo_.resize(links);
  active_links_.clear();
  solo_links_.clear();
  for (uint32_t l = 0; l < links; ++l) {
    remaining_[l] = v.capacity(l);
    unfrozen_[l] = v.flows_on_count(l);
    unfrozen_units_[l] = 0;
    solo_[l] = unfrozen_[l] == 1;
    if (unfrozen_[l] == 0) continue;
    assert(remaining_[l] >= 0 && remaining_[l] < kInf);
    unfrozen_units_[l] = v.units_on(l);
    std::vector<uint32_t>& list = solo_[l] ? solo_links_ : active_links_;
    position_[l] = static_cast<uint32_t>(list.size());
    list.push_back(l);
  }
  for (uint32_t f = 0; f < v.flow_count(); ++f) {
    if (v.crosses_nothing(f)) {
      rates[f] = kInf;
      frozen_[f] = 1;
    }
  }

  // The shares of the links with unfrozen flows (remaining / unfrozen weight; +infinity once
  // every flow of the link froze) sit at the leaves of a tournament tree whose inner nodes hold
  // the smaller of their children: the round's level is the root, and its bottlenecks are found by
  // descending only into subtrees whose minimum is within the tie tolerance of it. A round that
  // touched a few links updates their paths to the root, so a round that freezes a few flows among
  // thousands of links costs their paths, not a pass over every link; after a round that touched
  // a quarter of the links or more (an all-to-all's), the tree is rebuilt from its leaves instead.
  // A link that one flow crosses (the rate cap of a ring's channel, the flow model's virtual link
  // per capped transfer: most links of an online training run's solves) keeps its share until
  // that flow freezes, when it is done. Such links sit in a tree of their own that is never
  // stale: each one's leaf changes once, to +infinity, and its path stops at the first ancestor
  // that keeps its minimum (at once where its neighbours share one cap). The rebuilds and
  // plantings of the main tree then cover the shared links only. The round's level is the smaller
  // root; its bottlenecks are the leaves of both trees within the tolerance of it.
  solo_leaves_ = 1;
  while (solo_leaves_ < solo_links_.size()) solo_leaves_ *= 2;
  solo_tree_.assign(2 * solo_leaves_, kInf);
  for (size_t i = 0; i < solo_links_.size(); ++i) {
    const uint32_t l = solo_links_[i];
    solo_tree_[solo_leaves_ + i] = remaining_[l] / weight_of_units(unfrozen_units_[l]);
  }
  for (size_t n = solo_leaves_ - 1; n >= 1; --n) solo_tree_[n] = std::min(solo_tree_[2 * n], solo_tree_[2 * n + 1]);
  size_t leaves = 1;
  auto rebuild = [&] {
    for (size_t n = leaves - 1; n >= 1; --n) min_tree_[n] = std::min(min_tree_[2 * n], min_tree_[2 * n + 1]);
  };
  // A tree over the links that still have unfrozen flows, planted anew when over half its leaves
  // have none left, so that a rebuild costs what is left.
  size_t dead = 0;
  auto plant = [&] {
    size_t kept = 0;
    for (const uint32_t l : active_links_) {
      if (unfrozen_[l] == 0) continue;
      position_[l] = static_cast<uint32_t>(kept);
      active_links_[kept++] = l;
    }
    active_links_.resize(kept);
    leaves = 1;
    while (leaves < kept) leaves *= 2;
    min_tree_.assign(2 * leaves, kInf);
    for (size_t i = 0; i < kept; ++i) {
      const uint32_t l = active_links_[i];
      min_tree_[leaves + i] = remaining_[l] / weight_of_units(unfrozen_units_[l]);
    }
    rebuild();
    dead = 0;
  };
  plant();
  std::vector<uint32_t>& touched = touched_;  // links whose flows froze this round
  // Appends the links of the leaves of `tree` (`tree_leaves` leaves over `at`) whose share is at
  // most `bound`, descending only into subtrees whose minimum is.
  auto collect = [&](const std::vector<double>& tree, size_t tree_leaves, const std::vector<uint32_t>& at,
                     double bound) {
    descend_.assign(1, 1);
    while (!descend_.empty()) {
      const size_t n = descend_.back();
      descend_.pop_back();
      if (tree[n] > bound) continue;
      if (n >= tree_leaves) {
        bottlenecks_.push_back(at[n - tree_leaves]);
      } else {
        descend_.push_back(2 * n + 1);
        descend_.push_back(2 * n);
      }
    }
  };
  uint32_t rounds = 0;
  for (;;) {
    // The level: the least share of either tree; its bottlenecks: their leaves within the tie
    // tolerance of it.
    const double m = std::min(min_tree_[1], solo_tree_[1]);
    if (!(m < kInf)) break;
    ++rounds;
    const double threshold = m * (1.0 + kTieTolerance);
    bottlenecks_.clear();
    if (min_tree_[1] <= threshold) collect(min_tree_, leaves, active_links_, threshold);
    if (solo_tree_[1] <= threshold) collect(solo_tree_, solo_leaves_, solo_links_, threshold);

    touched.clear();
    touched_solo_.clear();
    for (uint32_t l : bottlenecks_) {
      v.for_each_flow_on(l, [&](uint32_t f) {
        if (frozen_[f]) return;
        frozen_[f] = 1;
        const uint64_t units = v.weight_units(f);
        rates[f] = m * weight_of_units(units);
        v.for_each_link_of(f, [&](uint32_t k) {
          if (frozen_now_[k]++ == 0) (solo_[k] ? touched_solo_ : touched).push_back(k);
          frozen_units_now_[k] += units;
        });
      });
    }
    // A solo link's one flow froze: it is done.
    for (uint32_t l : touched_solo_) {
      unfrozen_[l] = 0;
      unfrozen_units_[l] = 0;
      frozen_now_[l] = 0;
      frozen_units_now_[l] = 0;
      size_t n = solo_leaves_ + position_[l];
      solo_tree_[n] = kInf;
      for (n /= 2; n >= 1; n /= 2) {
        const double low = std::min(solo_tree_[2 * n], solo_tree_[2 * n + 1]);
        if (solo_tree_[n] == low) break;
        solo_tree_[n] = low;
      }
    }
    // Capacity drops by m per unit of weight frozen, applied once per link as m * weight; the
    // weight is an integer sum of units, so neither this solver's freezing order nor the order
    // the CUDA solver's atomics land in changes it (for weights of 1 it is the count).
    // A path update stops at the first ancestor whose minimum holds, most within a level or two;
    // a rebuild is a sequential pass over the tree, which pays once a quarter of the leaves changed.
    const bool many = touched.size() * 4 > active_links_.size();
    for (uint32_t l : touched) {
      const double left = remaining_[l] - m * weight_of_units(frozen_units_now_[l]);
      remaining_[l] = left > 0 ? left : 0;
      unfrozen_[l] -= frozen_now_[l];
      unfrozen_units_[l] -= frozen_units_now_[l];
      frozen_now_[l] = 0;
      frozen_units_now_[l] = 0;
      size_t n = leaves + position_[l];
      if (unfrozen_[l] > 0) {
        min_tree_[n] = remaining_[l] / weight_of_units(unfrozen_units_[l]);
      } else {
        min_tree_[n] = kInf;
        ++dead;
      }
      if (many) continue;
      for (n /= 2; n >= 1; n /= 2) {
        const double low = std::min(min_tree_[2 * n], min_tree_[2 * n + 1]);
        if (min_tree_[n] == low) break;
        min_tree_[n] = low;
      }
    }
    if (dead * 2 > active_links_.size()) {
      plant();
    } else if (many) {
      rebuild();
    }
  }
  last_rounds_ = rounds;
}

}  // namespace dtsim::network::flow
