// DLRM generator: the op graph of one iteration of a DLRM-style recommendation model trained
// with model-parallel embedding tables and data-parallel MLPs (as TorchRec shards it): embedding
// lookups, an all_to_all that trades pooled embeddings for the local batch, bottom and top MLPs,
// the feature interaction, the reverse all_to_all of embedding gradients, and an all_reduce of
// the dense gradients overlapped with the backward pass. Every GPU runs the same program, so one
// simulated rank stands for all of them, or with `all_ranks` (online execution, whose network
// must carry every GPU's traffic) each GPU is a rank of its own, in GPU order.
//   Workload w = generate_dlrm(DlrmSpec{}, cluster);
#pragma once

#include "topology/cluster_spec.h"
#include "workloads/op_graph.h"
#include "workloads/workload_spec.h"

namespace dtsim::workloads {

Workload generate_dlrm(const DlrmSpec& spec, const topology::ClusterSpec& cluster, bool all_ranks = false);

}  // namespace dtsim::workloads
