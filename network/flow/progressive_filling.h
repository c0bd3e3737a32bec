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
#include <vector>

#include "network/flow/max_min_solver.h"

namespace dtsim::network::flow {

// A tournament (min) tree of doubles: `leaves` leaves at [leaves, 2 leaves), each inner node n the
// smaller of its children 2n and 2n + 1, the root at 1.
namespace min_tree {
// Sets every inner node from its children.
inline void build(std::vector<double>& tree, size_t leaves) {
  for (size_t n = leaves - 1; n >= 1; --n) tree[n] = std::min(tree[2 * n], tree[2 * n + 1]);
}
// After leaf `leaf` changed: its ancestors, up to the first whose minimum holds.
inline void raise(std::vector<double>& tree, size_t leaf) {
  for (size_t n = leaf / 2; n >= 1; n /= 2) {
    const double low = std::min(tree[2 * n], tree[2 * n + 1]);
    if (tree[n] == low) break;
    tree[n] = low;
  }
}
}  // namespace min_tree

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
  // thousands of links costs their paths, not a pass over every link. After a round that touched
  // many (an all-to-all's), the inner nodes are left stale and the next round finds its level
  // and ties by one pass over the leaves, which costs what a rebuild would; the tree is rebuilt
  // when a round touches few links again.
  // A link that one flow crosses (such as the virtual link that carries a capped transfer's rate
  // cap in the flow model) keeps its share until that flow freezes, when it is done. Such links
  // sit in a tree of their own that is never stale: each one's leaf changes once, to +infinity,
  // and its path stops at the first ancestor that keeps its minimum (at once where its neighbours
  // share one cap). The passes, rebuilds and plantings of the main tree then cover the shared
  // links only. The round's level is the smaller root; its bottlenecks are the leaves of both
  // trees within the tolerance of it.
  size_t solo_leaves = 1;
  while (solo_leaves < solo_links_.size()) solo_leaves *= 2;
  solo_tree_.assign(2 * solo_leaves, kInf);
  for (size_t i = 0; i < solo_links_.size(); ++i) {
    const uint32_t l = solo_links_[i];
    solo_tree_[solo_leaves + i] = remaining_[l] / weight_of_units(unfrozen_units_[l]);
  }
  min_tree::build(solo_tree_, solo_leaves);
  size_t leaves = 1;
  size_t depth = 1;  // levels from a leaf to the root, counting both
  bool inner_fresh = false;  // whether the inner nodes hold their children's minimum
  auto rebuild = [&] {
    min_tree::build(min_tree_, leaves);
    inner_fresh = true;
  };
  // A tree over the links that still have unfrozen flows, planted anew when over half its leaves
  // have none left, so that a pass over it costs what is left.
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
    depth = 1;
    for (; leaves < kept; leaves *= 2) ++depth;
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
  // Appends the links of the leaves of `tree` (fresh, `tree_leaves` leaves over `at`) whose share
  // is at most `bound`, descending only into subtrees whose minimum is.
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
    // The solo links' least share bounds the level from the start.
    const double solo_min = solo_tree_[1];
    double m = solo_min;
    double threshold = m * (1.0 + kTieTolerance);
    bottlenecks_.clear();
    if (inner_fresh) {
      if (min_tree_[1] < m) {
        m = min_tree_[1];
        threshold = m * (1.0 + kTieTolerance);
      }
      if (m < kInf) collect(min_tree_, leaves, active_links_, threshold);
    } else {
      // One pass finds the minimum and every leaf that might tie with it (those within the
      // tolerance of the minimum so far); the candidates are then filtered by the final threshold.
      candidates_.clear();
      for (size_t i = 0; i < active_links_.size(); ++i) {
        const double share = min_tree_[leaves + i];
        if (share > threshold) continue;
        if (share < m) {
          m = share;
          threshold = m * (1.0 + kTieTolerance);
        }
        candidates_.push_back(static_cast<uint32_t>(i));
      }
      for (uint32_t i : candidates_) {
        if (min_tree_[leaves + i] <= threshold) bottlenecks_.push_back(active_links_[i]);
      }
    }
    if (!(m < kInf)) break;
    ++rounds;
    if (solo_min <= threshold) collect(solo_tree_, solo_leaves, solo_links_, threshold);

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
    // A solo link's one flow froze: it is done (nothing reads its other state again).
    for (uint32_t l : touched_solo_) {
      frozen_now_[l] = 0;
      frozen_units_now_[l] = 0;
      const size_t leaf = solo_leaves + position_[l];
      solo_tree_[leaf] = kInf;
      min_tree::raise(solo_tree_, leaf);
    }
    // Capacity drops by m per unit of weight frozen, applied once per link as m * weight; the
    // weight is an integer sum of units, so neither this solver's freezing order nor the order
    // the CUDA solver's atomics land in changes it (for weights of 1 it is the count).
    // A path update is a few random reads per level, a leaf in a pass one sequential read.
    const bool many = touched.size() * 2 * depth > active_links_.size();
    if (many) inner_fresh = false;
    for (uint32_t l : touched) {
      const double left = remaining_[l] - m * weight_of_units(frozen_units_now_[l]);
      remaining_[l] = left > 0 ? left : 0;
      unfrozen_[l] -= frozen_now_[l];
      unfrozen_units_[l] -= frozen_units_now_[l];
      frozen_now_[l] = 0;
      frozen_units_now_[l] = 0;
      const size_t leaf = leaves + position_[l];
      if (unfrozen_[l] > 0) {
        min_tree_[leaf] = remaining_[l] / weight_of_units(unfrozen_units_[l]);
      } else {
        min_tree_[leaf] = kInf;
        ++dead;
      }
      if (inner_fresh) min_tree::raise(min_tree_, leaf);
    }
    if (dead * 2 > active_links_.size()) {
      plant();
    } else if (!many && !inner_fresh) {
      rebuild();
    }
  }
  last_rounds_ = rounds;
}

}  // namespace dtsim::network::flow
