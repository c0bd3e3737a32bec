// The block program of block_filling.h run by threads of this host: the GPU kernel's twin, which
// runs in every build (the GPU one only where there is a GPU) and states the work a solve does.
//   flow::HostBlockSolver solver(4);   // a block of 4 threads
//   solver.solve(problem, rates);      // CpuMaxMinSolver's rates, bit for bit
//   solver.last_counts().rounds;
#pragma once

#include <cstdint>
#include <vector>

#include "network/flow/block_filling.h"
#include "network/flow/max_min_solver.h"

namespace dtsim::network::flow {

class HostBlockSolver final : public FlowSolver {
 public:
  // `threads` >= 1: the block's size. One thread runs the program as a plain loop.
  explicit HostBlockSolver(uint32_t threads = 1);
  std::string_view name() const override { return "host-block-max-min"; }
  void solve(const FlowProblem& p, std::span<double> rates) override;
  const block::Counts& last_counts() const { return counts_; }

 private:
  uint32_t threads_;
  block::Counts counts_;
  std::vector<double> remaining_, share_;
  std::vector<block::Units> unfrozen_units_, frozen_units_now_;
  std::vector<uint32_t> frozen_, bottlenecks_, entry_start_, touched_;
};

// Fills `p`'s block view of a FlowProblem (pointers into it; p must outlive the view).
block::Problem block_problem(const FlowProblem& p);

}  // namespace dtsim::network::flow
