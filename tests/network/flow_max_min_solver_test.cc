#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "network/flow/max_min_solver.h"
#include "tests/network/flow_random_problem.h"

namespace dtsim::network::flow {
namespace {

std::vector<double> solve(const FlowProblem& p) {
  std::vector<double> rates(p.flow_count());
  CpuMaxMinSolver().solve(p, rates);
  return rates;
}

using testing_support::flow_problem;

TEST(FlowProblem, LinkIndexListsEachLinksFlowsInAscendingOrder) {
  const FlowProblem p = flow_problem({1, 1, 1}, {{2, 0}, {1}, {0, 2}, {2}});
  ASSERT_EQ(p.link_offsets, (std::vector<uint32_t>{0, 2, 3, 6}));
  EXPECT_EQ(p.link_flows, (std::vector<uint32_t>{0, 2, 1, 0, 2, 3}));
}

TEST(CpuMaxMinSolver, LoneFlowGetsItsBottleneckCapacity) {
  EXPECT_EQ(solve(flow_problem({100e9, 25e9, 50e9}, {{0, 1, 2}})), (std::vector<double>{25e9}));
}

TEST(CpuMaxMinSolver, FlowsSharingOneLinkSplitItEvenly) {
  EXPECT_EQ(solve(flow_problem({30e9}, {{0}, {0}, {0}})), (std::vector<double>{10e9, 10e9, 10e9}));
}

TEST(CpuMaxMinSolver, CapacityLeftByABottleneckedFlowGoesToTheOthers) {
  // Link 1 (4) is the bottleneck of flows 0 and 2 (2 each); flow 1 takes what link 0 has left.
  EXPECT_EQ(solve(flow_problem({10, 4}, {{0, 1}, {0}, {1}})), (std::vector<double>{2, 8, 2}));
}

TEST(CpuMaxMinSolver, ParkingLotGivesTheLongFlowTheSameShareAsEachShortOne) {
  // Three unit links in a row; one flow crosses all three, one short flow on each link.
  EXPECT_EQ(solve(flow_problem({1, 1, 1}, {{0, 1, 2}, {0}, {1}, {2}})),
            (std::vector<double>{0.5, 0.5, 0.5, 0.5}));
}

// Weights split a link in proportion: one flow of weight 3 against one of weight 1.
TEST(CpuMaxMinSolver, WeightedFlowsShareALinkInProportion) {
  FlowProblem p;
  p.capacity = {4e9};
  const uint32_t only[] = {0};
  p.add_flow(only, 3.0);
  p.add_flow(only);
  p.build_link_index();
  EXPECT_EQ(solve(p), (std::vector<double>{3e9, 1e9}));
}

// A transfer sprayed over two routes as two sub-flows of weight 1/2 (links 1 and 2) meets a
// one-route transfer on the sender's NIC (link 0): each transfer gets half of it, and the
// sub-flows a quarter each; unweighted, the sprayed transfer took two thirds.
TEST(CpuMaxMinSolver, SubFlowsOfHalfWeightTakeOneShareBetweenThem) {
  FlowProblem p;
  p.capacity = {12e9, 100e9, 100e9, 100e9};
  const uint32_t route_a[] = {0, 1}, route_b[] = {0, 2}, other[] = {0, 3};
  p.add_flow(route_a, 0.5);
  p.add_flow(route_b, 0.5);
  p.add_flow(other);
  p.build_link_index();
  EXPECT_EQ(solve(p), (std::vector<double>{3e9, 3e9, 6e9}));
  EXPECT_EQ(p.weight, (std::vector<double>{0.5, 0.5, 1.0}));
  p.clear_flows();
  EXPECT_FALSE(p.weighted());
}

// Scaling every weight alike changes nothing: random instances weighted 1/4 throughout get the
// unweighted rates (within rounding), so weights leave the unweighted solver's answers alone.
TEST(CpuMaxMinSolver, UniformWeightsGiveTheUnweightedRates) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const FlowProblem plain = testing_support::random_flow_problem(seed, 64, 400, 5);
    FlowProblem weighted;
    weighted.capacity = plain.capacity;
    for (size_t f = 0; f < plain.flow_count(); ++f) weighted.add_flow(plain.links_of(f), 0.25);
    weighted.build_link_index();
    const std::vector<double> a = solve(plain), b = solve(weighted);
    for (size_t f = 0; f < a.size(); ++f) ASSERT_NEAR(b[f], a[f], 1e-9 * a[f]) << "seed " << seed << " flow " << f;
  }
}

// Weights are added up in whole units, so the order of the flows (and hence the order they freeze
// in) changes no rate, not even in the last bit; weights of 1/3, 1/5 and 1/7 have no exact binary
// form, so summed as doubles they would depend on it.
TEST(CpuMaxMinSolver, WeightedRatesDoNotDependOnTheFlowOrder) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const FlowProblem plain = testing_support::random_flow_problem(seed, 64, 600, 5);
    static constexpr double kWeights[] = {1.0 / 3, 1.0 / 5, 1.0 / 7, 0.5, 1};
    FlowProblem forward, backward;
    forward.capacity = backward.capacity = plain.capacity;
    const size_t n = plain.flow_count();
    for (size_t f = 0; f < n; ++f) forward.add_flow(plain.links_of(f), kWeights[f % 5]);
    for (size_t f = n; f-- > 0;) backward.add_flow(plain.links_of(f), kWeights[f % 5]);
    forward.build_link_index();
    backward.build_link_index();
    const std::vector<double> a = solve(forward), b = solve(backward);
    for (size_t f = 0; f < n; ++f) ASSERT_EQ(a[f], b[n - 1 - f]) << "seed " << seed << " flow " << f;
  }
}

TEST(FlowProblem, WeightsAreWholeUnits) {
  FlowProblem p;
  p.capacity = {1};
  const uint32_t link[] = {0};
  p.add_flow(link, 1.0 / 3);
  p.add_flow(link, 1e-15);  // under one unit: one unit
  EXPECT_EQ(p.weight_units(0), 366'503'875'925u);  // round(2^40 / 3)
  EXPECT_EQ(p.weight[0], 366'503'875'925 * kWeightUnit);
  EXPECT_EQ(p.weight_units(1), 1u);
  EXPECT_EQ(FlowProblem().weight_units(0), kUnitsPerWeight);
}

TEST(CpuMaxMinSolver, FlowThatCrossesNoLinkIsUnbounded) {
  const auto rates = solve(flow_problem({1}, {{}, {0}}));
  EXPECT_EQ(rates[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(rates[1], 1);
}

TEST(CpuMaxMinSolver, ZeroCapacityLinkStopsOnlyItsOwnFlows) {
  EXPECT_EQ(solve(flow_problem({0, 6}, {{0, 1}, {1}})), (std::vector<double>{0, 6}));
}

TEST(CpuMaxMinSolver, EmptyProblemSolves) {
  FlowProblem p;
  p.build_link_index();
  std::vector<double> rates;
  CpuMaxMinSolver().solve(p, rates);
  EXPECT_TRUE(rates.empty());
}

// Max-min fairness, checked by its certificate: no link is over capacity, and every flow crosses
// a saturated link on which no other flow gets more than it does.
TEST(CpuMaxMinSolver, RandomInstancesAreFeasibleAndEveryFlowHasASaturatedBottleneck) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const FlowProblem p = testing_support::random_flow_problem(seed, 64, 500, 6);
    const auto rates = solve(p);
    EXPECT_LE(max_link_utilization(p, rates), 1 + 1e-12) << "seed " << seed;
    std::vector<double> load(p.link_count(), 0), top(p.link_count(), 0);
    for (size_t f = 0; f < p.flow_count(); ++f) {
      for (uint32_t l : p.links_of(f)) {
        load[l] += rates[f];
        top[l] = std::max(top[l], rates[f]);
      }
    }
    for (size_t f = 0; f < p.flow_count(); ++f) {
      bool has_bottleneck = false;
      for (uint32_t l : p.links_of(f)) {
        const bool saturated = load[l] >= p.capacity[l] * (1 - 1e-9);
        has_bottleneck |= saturated && rates[f] >= top[l] * (1 - 1e-9);
      }
      EXPECT_TRUE(has_bottleneck) << "seed " << seed << " flow " << f;
    }
  }
}

TEST(CpuMaxMinSolver, ReusedSolverGivesTheSameRatesAsAFreshOne) {
  CpuMaxMinSolver reused;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const FlowProblem p = testing_support::random_flow_problem(seed, 32, 200 * seed, 4);
    std::vector<double> rates(p.flow_count());
    reused.solve(p, rates);
    EXPECT_EQ(rates, solve(p)) << "seed " << seed;
  }
}

TEST(CpuMaxMinSolver, RoundsAreBoundedByTheLinksInUse) {
  const FlowProblem p = testing_support::random_flow_problem(7, 40, 1000, 5);
  CpuMaxMinSolver s;
  std::vector<double> rates(p.flow_count());
  s.solve(p, rates);
  EXPECT_GE(s.last_rounds(), 1u);
  EXPECT_LE(s.last_rounds(), 40u);
}

}  // namespace
}  // namespace dtsim::network::flow
