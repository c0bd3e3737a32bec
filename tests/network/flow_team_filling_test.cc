// The team program of network/flow/team_filling.h on host threads (the CUDA kernel's twin)
// against CpuMaxMinSolver, its oracle bit for bit, and its work counts against hand counts.
#include "network/flow/team_filling_host.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tests/network/flow_random_problem.h"

namespace dtsim::network::flow {
namespace {

using testing_support::flow_problem;

std::vector<double> cpu_rates(const FlowProblem& p) {
  std::vector<double> rates(p.flow_count());
  CpuMaxMinSolver().solve(p, rates);
  return rates;
}

std::vector<double> team_rates(const FlowProblem& p, uint32_t threads) {
  std::vector<double> rates(p.flow_count(), -1.0);
  HostTeamSolver(threads).solve(p, rates);
  return rates;
}

TEST(HostTeamSolver, RatesAreTheCpuSolversBitForBitOnAnyNumberOfThreads) {
  struct Size {
    uint32_t links, flows, max_path;
  };
  for (const Size s : {Size{4, 10, 2}, Size{64, 500, 6}, Size{1000, 20'000, 8}}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const FlowProblem plain = testing_support::random_flow_problem(seed, s.links, s.flows, s.max_path);
      const FlowProblem weighted = testing_support::sprayed_flow_problem(plain, seed);
      ASSERT_TRUE(weighted.weighted());
      for (const FlowProblem* p : {&plain, &weighted}) {
        const std::vector<double> expected = cpu_rates(*p);
        for (const uint32_t threads : {1u, 2u, 3u, 8u}) {
          EXPECT_EQ(team_rates(*p, threads), expected)
              << s.flows << " flows, seed " << seed << (p->weighted() ? ", weighted" : "") << ", "
              << threads << " threads";
        }
      }
    }
  }
}

// Links that one flow crosses (capped transfers) sit apart in the CPU solver's filling; the team
// program keeps every link alike, so equal rates show the split changes no level and no tie:
// caps at a flow's own level, below it, shared by many, and far above it, with weights too.
TEST(HostTeamSolver, CappedFlowsAreTheCpuSolversBitForBit) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const FlowProblem plain = testing_support::random_flow_problem(seed, 200, 3'000, 6);
    const FlowProblem weighted = testing_support::sprayed_flow_problem(plain, seed);
    for (const FlowProblem* base : {&plain, &weighted}) {
      const std::vector<double> uncapped = cpu_rates(*base);
      const FlowProblem capped = testing_support::capped_flow_problem(*base, uncapped, seed);
      const std::vector<double> expected = cpu_rates(capped);
      // The caps bind: some flows run below their uncapped rate.
      size_t slower = 0;
      for (size_t f = 0; f < expected.size(); ++f) slower += expected[f] < uncapped[f] ? 1 : 0;
      EXPECT_GT(slower, capped.flow_count() / 8) << "seed " << seed;
      for (const uint32_t threads : {1u, 3u}) {
        EXPECT_EQ(team_rates(capped, threads), expected)
            << "seed " << seed << (base->weighted() ? ", weighted" : "") << ", " << threads << " threads";
      }
    }
  }
}

TEST(HostTeamSolver, EdgeCasesAreTheCpuSolvers) {
  FlowProblem halves;
  halves.capacity = {8, 6};
  for (const std::vector<uint32_t>& links : {std::vector<uint32_t>{0}, {0, 1}, {1}}) halves.add_flow(links, 0.5);
  halves.add_flow(std::vector<uint32_t>{0}, 2.0);
  halves.build_link_index();
  const FlowProblem cases[] = {
      flow_problem({1}, {{}, {0}}),                           // a flow that crosses nothing: +infinity
      flow_problem({0, 6}, {{0, 1}, {1}}),                    // a zero-capacity link
      flow_problem({1, 1, 1}, {{0, 1, 2}, {0}, {1}, {2}}),    // parking lot
      flow_problem({5, 7}, {}),                               // no flows
      flow_problem({}, {{}, {}}),                             // no links
      flow_problem({100e9, 25e9, 50e9}, {{0, 1, 2}}),         // a lone flow
      halves,                                            // weights 1/2 and 2
  };
  for (const FlowProblem& p : cases) {
    const std::vector<double> expected = cpu_rates(p);
    for (const uint32_t threads : {1u, 4u}) EXPECT_EQ(team_rates(p, threads), expected) << threads << " threads";
  }
  EXPECT_EQ(team_rates(cases[0], 2)[0], std::numeric_limits<double>::infinity());
}

TEST(HostTeamSolver, CountsTheWorkOfEachRound) {
  // Link 1 (capacity 4, flows 0 and 2) is the first level, 2: its two entries are walked, flows 0
  // and 2 freeze and touch links 0 and 1. Link 0 is left 8 for flow 1 alone, the second level: its
  // list holds flows 0 and 1, both walked; flow 1 touches link 0.
  HostTeamSolver solver(2);
  const FlowProblem p = flow_problem({10, 4}, {{0, 1}, {0}, {1}});
  std::vector<double> rates(3);
  solver.solve(p, rates);
  EXPECT_EQ(rates, (std::vector<double>{2, 8, 2}));
  const team::Counts& c = solver.last_counts();
  EXPECT_EQ(c.rounds, 2u);
  EXPECT_EQ(c.link_scans, 4u);
  EXPECT_EQ(c.bottlenecks, 2u);
  EXPECT_EQ(c.entries, 4u);
  EXPECT_EQ(c.charges, 3u);

  // Parking lot: one level of 1/2, every link a bottleneck, each of the six entries walked once.
  std::vector<double> lot(4);
  solver.solve(flow_problem({1, 1, 1}, {{0, 1, 2}, {0}, {1}, {2}}), lot);
  EXPECT_EQ(lot, (std::vector<double>{0.5, 0.5, 0.5, 0.5}));
  EXPECT_EQ(solver.last_counts().rounds, 1u);
  EXPECT_EQ(solver.last_counts().bottlenecks, 3u);
  EXPECT_EQ(solver.last_counts().entries, 6u);
  EXPECT_EQ(solver.last_counts().charges, 3u);
}

TEST(HostTeamSolver, CountsDoNotDependOnTheThreadsAndWalkEachListAtMostOnce) {
  const FlowProblem p = testing_support::random_flow_problem(5, 400, 20'000, 6);
  std::vector<double> rates(p.flow_count());
  CpuMaxMinSolver cpu;
  cpu.solve(p, rates);
  HostTeamSolver one(1);
  HostTeamSolver many(6);
  one.solve(p, rates);
  many.solve(p, rates);
  const team::Counts& a = one.last_counts();
  const team::Counts& b = many.last_counts();
  EXPECT_EQ(a.rounds, cpu.last_rounds());
  EXPECT_EQ(a.rounds, b.rounds);
  EXPECT_EQ(a.bottlenecks, b.bottlenecks);
  EXPECT_EQ(a.entries, b.entries);
  EXPECT_EQ(a.charges, b.charges);
  EXPECT_EQ(a.link_scans, a.rounds * p.link_count());
  // A link is a bottleneck at most once (its flows all freeze then; a link whose flows all froze on
  // other links never is one), so the walk covers each flow-link pair at most once.
  EXPECT_LE(a.bottlenecks, p.link_count());
  EXPECT_LE(a.entries, p.flow_links.size());
  EXPECT_GE(a.entries, p.flow_count());  // every flow is on some bottleneck's list
}

}  // namespace
}  // namespace dtsim::network::flow
