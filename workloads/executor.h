// Executor: runs a Workload's rank graphs on the sim engine. Compute ops are priced by the
// ComputeModel, collectives and point-to-point transfers by a CollectiveCostModel (analytical,
// or any other backend behind that interface), handed all the distinct ones first (prepare, so a
// flow model can price them side by side). Each stream runs its ops in program order once
// their dependencies are done; a collective also waits for its communicator's other simulated
// members; a receive completes when its matching send has. The result is the iteration time, the
// per-GPU split of that time into compute, exposed communication per parallelism, waiting on
// the host and idle (pipeline bubble), and the critical path.
//   Executor ex(compute_model, cost_model);
//   ExecutionResult r = ex.run(workload);
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "collectives/cost_model.h"
#include "workloads/compute_model.h"
#include "workloads/op_graph.h"

namespace dtsim::workloads {

// Where a GPU's iteration time goes; the parts sum to the iteration time. Communication is
// "exposed" only while the compute stream is idle; idle time with only host work in flight (CPU
// offload copies, a trace's CPU operators) is waiting on the host; idle time with nothing in
// flight is the pipeline bubble (waiting for another stage).
struct TimeBreakdown {
  Time compute;
  std::array<Time, 5> exposed{};  // indexed by CommCategory: tp, cp, ep, dp, pp
  Time host;
  Time bubble;

  Time exposed_total() const;
  Time total() const { return compute + exposed_total() + host + bubble; }
};

struct CriticalStep {
  int rank = 0;
  uint32_t op = 0;
  Time start, end;
};

struct ExecutionResult {
  Time iteration;
  TimeBreakdown breakdown;            // average per GPU (weighted by RankGraph::represents)
  std::vector<TimeBreakdown> per_rank;
  std::vector<CriticalStep> critical_path;  // first op to last
  TimeBreakdown critical_split;       // the critical path's time by what each step was
  uint64_t events = 0;
  uint64_t fingerprint = 0;           // the engine's event-trace fingerprint
  // Start and end of every op, by rank, when ExecutorOptions::record_ops is set.
  std::vector<std::vector<std::pair<Time, Time>>> op_times;
};

struct ExecutorOptions {
  bool record_ops = false;
  bool critical_path = true;
};

class Executor {
 public:
  Executor(const ComputeModel& compute, const collectives::CollectiveCostModel& comm,
           ExecutorOptions options = {});
  ExecutionResult run(const Workload& w) const;

 private:
  const ComputeModel& compute_;
  const collectives::CollectiveCostModel& comm_;
  ExecutorOptions options_;
};

}  // namespace dtsim::workloads
