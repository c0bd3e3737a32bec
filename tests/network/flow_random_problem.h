// Max-min instances for the solver tests: hand-written ones (flow_problem), and random ones whose
// links have capacities drawn from a few values (so shares tie often, as they do on real fabrics)
// and whose flows cross 1..max_path distinct random links; the CPU-solver tests and the CPU-vs-CUDA
// test draw the same instances from the same seeds. Variants: sprayed (weighted) flows, and flows
// with a capped link of their own.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "network/flow/max_min_solver.h"
#include "sim/rng.h"

namespace dtsim::testing_support {

// max_path must not exceed links: a path holds distinct links.
inline network::flow::FlowProblem random_flow_problem(uint64_t seed, uint32_t links, uint32_t flows,
                                                      uint32_t max_path) {
  if (max_path > links) throw std::invalid_argument("random_flow_problem: max_path > links");
  sim::Rng rng(seed, sim::stream_id("flow-problem"));
  static constexpr double kCapacities[] = {12.5e9, 25e9, 50e9, 100e9, 450e9};
  network::flow::FlowProblem p;
  for (uint32_t l = 0; l < links; ++l) p.capacity.push_back(kCapacities[rng.below(5)]);
  std::vector<uint32_t> path;
  for (uint32_t f = 0; f < flows; ++f) {
    path.clear();
    const auto hops = static_cast<uint32_t>(1 + rng.below(max_path));
    while (path.size() < hops) {
      const auto l = static_cast<uint32_t>(rng.below(links));
      if (std::find(path.begin(), path.end(), l) == path.end()) path.push_back(l);
    }
    p.add_flow(path);
  }
  p.build_link_index();
  return p;
}

// An instance from its capacities and its flows' links, each flow of weight 1, link index built.
inline network::flow::FlowProblem flow_problem(std::vector<double> capacity,
                                               const std::vector<std::vector<uint32_t>>& flows) {
  network::flow::FlowProblem p;
  p.capacity = std::move(capacity);
  for (const auto& links : flows) p.add_flow(links);
  p.build_link_index();
  return p;
}

// `base`'s flows regrouped as sprayed transfers: runs of 1..8 consecutive flows weigh 1/K each, as
// a transfer split over K routes does (K = 3, 5, 6, 7 are inexact in binary).
inline network::flow::FlowProblem sprayed_flow_problem(const network::flow::FlowProblem& base,
                                                       uint64_t seed) {
  sim::Rng rng(seed, sim::stream_id("sprayed-problem"));
  network::flow::FlowProblem p;
  p.capacity = base.capacity;
  for (size_t f = 0; f < base.flow_count();) {
    const size_t k = std::min<size_t>(1 + rng.below(8), base.flow_count() - f);
    for (size_t i = 0; i < k; ++i, ++f) p.add_flow(base.links_of(f), 1.0 / static_cast<double>(k));
  }
  p.build_link_index();
  return p;
}

// `base` with a link of its own added to every flow, as the flow model gives each capped transfer
// (a link that one flow crosses): for a quarter of the flows a cap equal to the rate `base_rates`
// gives it (a tie with its bottleneck's level), for a quarter half that (it binds), for a quarter
// one cap shared by many (ties among such links), and for the rest ten times its rate (it never
// binds). Flows keep their weights.
inline network::flow::FlowProblem capped_flow_problem(const network::flow::FlowProblem& base,
                                                      const std::vector<double>& base_rates, uint64_t seed) {
  sim::Rng rng(seed, sim::stream_id("capped-problem"));
  network::flow::FlowProblem p;
  p.capacity = base.capacity;
  std::vector<uint32_t> path;
  for (size_t f = 0; f < base.flow_count(); ++f) {
    const double rate = base_rates[f];
    const double weight = base.weight_of(f);
    // A flow that crosses nothing runs unbounded; its cap is then a plain number.
    const double level = std::isfinite(rate) ? rate : 1e9;
    static constexpr double kScale[] = {1.0, 0.5, 0.0, 10.0};
    const double scale = kScale[rng.below(4)];
    const auto own = static_cast<uint32_t>(p.capacity.size());
    p.capacity.push_back(scale > 0 ? level * scale : 3e9 * weight);
    const auto links = base.links_of(f);
    path.assign(links.begin(), links.end());
    path.insert(path.begin() + static_cast<std::ptrdiff_t>(rng.below(path.size() + 1)), own);
    p.add_flow(path, weight);
  }
  p.build_link_index();
  return p;
}

}  // namespace dtsim::testing_support
