// The team program of team_filling.h run by threads of this host: the GPU kernel's twin, which
// runs in every build (the GPU one only where there is a GPU) and states the work a solve does.
//   flow::HostTeamSolver solver(4);   // a team of 4 threads
//   solver.solve(problem, rates);      // CpuMaxMinSolver's rates, bit for bit
//   solver.last_counts().rounds;
#pragma once

#include <cstdint>
#include <vector>

#include "network/flow/team_filling.h"
#include "network/flow/max_min_solver.h"

namespace dtsim::network::flow {

class HostTeamSolver final : public FlowSolver {
 public:
  // `threads` >= 1: the team's size. One thread runs the program as a plain loop.
  explicit HostTeamSolver(uint32_t threads = 1);
  std::string_view name() const override { return "host-team-max-min"; }
  void solve(const FlowProblem& p, std::span<double> rates) override;
  const team::Counts& last_counts() const { return counts_; }

 private:
  uint32_t threads_;
  team::Counts counts_;
  std::vector<double> remaining_, share_;
  std::vector<team::Units> unfrozen_units_, frozen_units_now_;
  std::vector<uint32_t> frozen_, bottlenecks_, entry_start_, touched_;
};

}  // namespace dtsim::network::flow
