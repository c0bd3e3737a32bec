// Memory model: how much HBM one GPU of a training job needs, and whether it fits. The peak of
// the fullest pipeline stage, split the way a user trims it: weights, gradients and optimizer
// states (what ZeRO/FSDP shard), activations stored for the backward pass (what recomputation,
// sequence and context parallelism and the pipeline schedule change), the transient working set
// on top (FSDP-gathered layers, the logits, a recomputed layer) and a fixed runtime reserve.
// Activations follow Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
// Transformer Models", section 4), generalised to GQA, gated FFNs, flash attention and MoE.
//   MemoryEstimate m = estimate_memory(resolve_training(spec, cluster), cluster);
//   if (!m.fits()) fmt::print("needs {:.1f} GiB of {:.1f}\n", m.total() / (1 << 30), m.capacity / (1 << 30));
#pragma once

#include "topology/cluster_spec.h"
#include "workloads/workload_spec.h"

namespace dtsim::workloads {

struct MemoryEstimate {
  int stage = 0;               // the pipeline stage with the largest footprint
  double weights = 0;          // bytes per GPU: weights at the training precision
  double gradients = 0;        // gradients at the training precision
  double optimizer = 0;        // Adam: fp32 master weights, first and second moments
  double activations = 0;      // stored for the backward pass, every microbatch in flight
  double offloaded = 0;        // activations held in host memory instead (cpu_offload_layers)
  double transient = 0;        // peak working set on top: gathered FSDP layers, logits, recompute
  double runtime = 0;          // CUDA context, NCCL buffers, allocator slack
  int microbatches_in_flight = 0;  // chunk-microbatches whose activations the stage holds at once
  Recompute recompute = Recompute::none;  // the recomputation assumed (what `auto` chose)
  double capacity = 0;         // HBM per GPU

  double total() const { return weights + gradients + optimizer + activations + transient + runtime; }
  bool fits() const { return total() <= capacity; }
};

// Bytes one layer stores per token for its backward pass, on one GPU: tp and sequence parallel
// divide it, flash attention or selective recomputation drop the s x s score term, full
// recomputation keeps only the layer's input. `resolved` is a spec from resolve_training.
double activation_bytes_per_token(const TrainingSpec& resolved, bool moe_layer);

MemoryEstimate estimate_memory(const TrainingSpec& resolved, const topology::ClusterSpec& cluster);

}  // namespace dtsim::workloads
