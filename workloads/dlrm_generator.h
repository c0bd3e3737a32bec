// DLRM generator: the op graph of one iteration of a DLRM-style recommendation model trained
// with model-parallel embedding tables and data-parallel MLPs (as TorchRec shards it): embedding
// lookups, an all_to_all that trades pooled embeddings for the local batch, bottom and top MLPs,
// the feature interaction, the reverse all_to_all of embedding gradients, and an all_reduce of
// the dense gradients overlapped with the backward pass. Every GPU runs the same program, so one
// simulated rank stands for all of them.
//   Workload w = generate_dlrm(DlrmSpec{}, cluster);
#pragma once

#include <vector>

#include "topology/cluster_spec.h"
#include "workloads/op_graph.h"

namespace dtsim::workloads {

struct DlrmSpec {
  int tables = 856;                 // embedding tables, spread evenly over the GPUs
  int embedding_dim = 128;
  int pooling = 20;                 // lookups per table per sample
  int batch_per_gpu = 512;          // samples per GPU per iteration
  int dense_features = 13;
  std::vector<int> bottom_mlp{512, 256, 128};
  std::vector<int> top_mlp{1024, 1024, 512, 256, 1};
  topology::Dtype precision = topology::Dtype::fp16;
};

Workload generate_dlrm(const DlrmSpec& spec, const topology::ClusterSpec& cluster);

}  // namespace dtsim::workloads
