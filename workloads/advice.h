// Advice on a generated training job: when its memory estimate does not fit the GPU's HBM, or its
// pipeline bubble takes much of the iteration, one line naming the scenario keys that would change
// it and what each would give. Memory is re-estimated with each key changed alone (ZeRO stage,
// activation recomputation, twice the pipeline or tensor parallelism on half the replicas); the
// bubble is priced by the schedule's closed form (pp - 1) / (vp x m + pp - 1), m microbatches a
// replica, for more interleaved stages and for smaller microbatches.
//   for (const std::string& line : training_advice(spec, cluster, result)) warn(line);
#pragma once

#include <string>
#include <vector>

#include "topology/cluster_spec.h"
#include "workloads/training.h"
#include "workloads/workload_spec.h"

namespace dtsim::workloads {

// The share of an iteration above which the pipeline bubble is worth a line.
inline constexpr double kBubbleAdviceShare = 0.25;

// `spec` as the scenario gives it (resolved here); `result` its run (memory and breakdown).
std::vector<std::string> training_advice(const TrainingSpec& spec, const topology::ClusterSpec& cluster,
                                         const TrainingResult& result);

// The closed-form bubble share of a pipeline of `pp` stages, `vp` chunks each, running
// `microbatches` per replica: (pp - 1) / (vp x microbatches + pp - 1).
double pipeline_bubble_share(int pp, int vp, int microbatches);

}  // namespace dtsim::workloads
