// Training evaluation: how long one iteration of a model, with a parallelism, on a cluster takes,
// and where the time goes. Generates the op graphs (megatron_generator.h), runs them
// (executor.h) and turns the result into the headline figures a user reads: iteration time,
// model TFLOP/s per GPU, MFU, tokens/s per GPU, and the compute / exposed-communication / bubble
// split. report/training_writer.h prints it.
//   TrainingResult r = run_training(spec, cluster, cost_model);
//   fmt::print("{:.3f} s, {:.0f} TFLOP/s/GPU\n", r.iteration_time_s, r.tflops_per_gpu);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collectives/cost_model.h"
#include "collectives/flow_collective_model.h"
#include "network/network_model.h"
#include "topology/cluster_spec.h"
#include "workloads/compute_model.h"
#include "workloads/executor.h"
#include "workloads/megatron_generator.h"
#include "workloads/memory_model.h"
#include "workloads/workload_spec.h"

namespace dtsim::workloads {

struct CriticalOp {
  std::string label;   // op label, e.g. "mlp.fc1.bwd"
  std::string what;    // compute | tp | cp | ep | dp | pp
  double time_s = 0;   // total time of this label on the critical path
  int count = 0;
};

struct TrainingResult {
  std::string workload;
  int gpus = 0;
  int simulated_ranks = 0;
  std::string ranks_basis;  // which ranks were simulated and why the others need not be (the runner's)
  size_t ops = 0;
  uint64_t events = 0;
  uint64_t fingerprint = 0;           // event-trace fingerprint of the run (simulate --fingerprint)
  double iteration_time_s = 0;
  double tflops_per_gpu = 0;          // model FLOPs (Megatron-LM count, no recompute) per second
  double mfu = 0;                     // tflops_per_gpu over the GPU's dense peak at the precision
  double tokens_per_s_per_gpu = 0;
  TimeBreakdown breakdown;            // per GPU, sums to the iteration time
  TimeBreakdown critical_split;       // the critical path, by what each step was
  std::vector<CriticalOp> critical_ops;  // the critical path's largest contributors, largest first
  std::optional<MemoryEstimate> memory;  // per GPU, for generated workloads (not for traces)
  // Copies of the job beside it on the fabric, their collectives in step with its own
  // (network.background: replicas); 0: the job had the fabric to itself.
  int neighbour_copies = 0;
};

// With `online.network` (online execution, executor.h) the workload's communication runs on it
// and `comm` is asked for nothing; without, `comm` prices each collective alone.
TrainingResult run_training(const TrainingSpec& spec, const topology::ClusterSpec& cluster,
                            const collectives::CollectiveCostModel& comm,
                            const GeneratorOptions& options = {}, const OnlineExecution& online = {});

// The graphs and every op's start and end, for trace and timeline writers.
struct TrainingTrace {
  Workload workload;
  ExecutionResult execution;
};
TrainingResult run_training_traced(const TrainingSpec& spec, const topology::ClusterSpec& cluster,
                                   const collectives::CollectiveCostModel& comm, TrainingTrace& trace,
                                   const GeneratorOptions& options = {}, const OnlineExecution& online = {});

// Runs an existing workload (a generated one or one read from traces) and summarises it.
// `precision` picks the peak for MFU.
TrainingResult evaluate_workload(const Workload& w, const topology::ClusterSpec& cluster,
                                 const collectives::CollectiveCostModel& comm,
                                 topology::Dtype precision, const ComputeModel& compute,
                                 const OnlineExecution& online = {});
// The same, keeping the workload and every op's start and end in `trace`.
TrainingResult evaluate_workload_traced(Workload w, const topology::ClusterSpec& cluster,
                                        const collectives::CollectiveCostModel& comm, topology::Dtype precision,
                                        const ComputeModel& compute, TrainingTrace& trace,
                                        const OnlineExecution& online = {});

// One row of the per-op table: every op of one label on one stream of one pipeline stage, per
// GPU (the mean over the stage's simulated ranks, weighted by the GPUs each stands for).
struct OpTotal {
  int stage = 0;
  std::string stream;      // compute, tp, dp, dp_gather, pp, host, ...
  std::string what;        // compute | tp | cp | ep | dp | pp | host
  std::string label;       // e.g. "mlp.fc1.bwd"
  double count = 0;        // ops per iteration on one GPU
  double busy_s = 0;       // their summed duration on one GPU
  double critical_s = 0;   // their time on the iteration's critical path
};

// What one link carried over an iteration run on flows: the bytes of every collective and send
// whose flows cross it, and the summed time of those operations as the flow model prices them
// (a trace's measured durations aside).
struct LinkTraffic {
  topology::LinkId link = 0;
  double bytes = 0;
  double busy_s = 0;
  std::optional<network::PortStats> port;  // online on packets: the model's counters at its port
};

// The links the workload's communication crosses, in link order: every collective and send of
// the simulated ranks (a collective once, however many simulated ranks it has; merged layers
// count `repeat` times), each with the flows `flows` prices it with, its sibling groups' included
// (FlowCollectiveModel::link_bytes). Links of GPUs that only a simulated rank stands for (other
// DP replicas) do not appear; by symmetry theirs look alike.
std::vector<LinkTraffic> link_traffic(const Workload& w, const collectives::FlowCollectiveModel& flows);

// One operation's use of a link in a traced run on flows: when it ran, and the bytes its flows
// put on the link over that time (a merged op's `repeat` instances together).
struct LinkUse {
  topology::LinkId link = 0;
  Time start;
  Time end;
  double bytes = 0;
  uint32_t rank = 0;  // the simulated rank whose op it is (index into the workload's ranks)
  uint32_t op = 0;    // the op's index in that rank's graph
};

// Every use of the links in `wanted` by the traced run's collectives and sends, with the flows
// `flows` prices each with (as link_traffic counts them), in (link, start) order. A collective
// that several simulated ranks issue counts once, from the first of them; receives never.
std::vector<LinkUse> link_uses(const TrainingTrace& trace, const collectives::FlowCollectiveModel& flows,
                               const std::vector<topology::LinkId>& wanted);

// Every (stage, stream, label) of a traced run, by stage, then busiest first. Receives are
// left out: their time is waiting for the sender, which the send's row already holds.
std::vector<OpTotal> op_totals(const TrainingTrace& trace);

}  // namespace dtsim::workloads
