// ComputeModel: how long one compute op takes on one GPU. A roofline with shape-aware
// efficiency: time = max(FLOPs / (peak x efficiency), bytes / (HBM bandwidth x memory
// efficiency)) + launch overhead. GEMM efficiency falls with wave quantisation over the SMs and
// with short reduction dimensions; attention has its own (fused-kernel) efficiency. A measured
// duration on the op (from a trace) wins over the model.
//   ComputeModel cm(cluster.gpu);
//   Time t = cm.time(op);
#pragma once

#include "topology/cluster_spec.h"
#include "workloads/op_graph.h"
#include "workloads/workload_spec.h"

namespace dtsim::workloads {

// Named, physical parameters; defaults per GPU architecture are calibrated on the published
// training runs (docs/training.md lists them and the fit).
struct ComputeModelParams {
  int sm_count = 132;                 // streaming multiprocessors: GEMM tiles are scheduled in waves
  int gemm_tile_m = 128;              // output tile of the library's large-GEMM kernels
  int gemm_tile_n = 256;
  double gemm_efficiency = 0.75;      // fraction of dense peak a large, well-shaped GEMM reaches
  double gemm_k_half = 96;            // K at which a GEMM's efficiency halves (short reductions)
  double fp8_efficiency_scale = 0.7;  // FP8 GEMMs reach a smaller fraction of their (2x) peak
  double attention_fwd_efficiency = 0.55;  // fused (flash) attention forward, fraction of peak
  double attention_bwd_efficiency = 0.45;  // its backward (5 matmuls, atomics, recompute of S)
  double memory_efficiency = 0.8;     // fraction of HBM bandwidth elementwise kernels reach
  Time launch_overhead = Time::us(8);  // per op (a few kernels): launch, tail and sync gaps
  // Compute that runs while a collective is in flight on the same GPU is slower: NCCL's kernels
  // hold SMs and share HBM bandwidth. Applied by the executor.
  double comm_overlap_slowdown = 0.15;

  // Defaults for a GPU, chosen by its architecture (compute capability), with the attention
  // efficiencies of the given kernel generation.
  static ComputeModelParams for_gpu(const topology::GpuSpec& gpu, Attention attention = Attention::flash3);
};

class ComputeModel {
 public:
  explicit ComputeModel(const topology::GpuSpec& gpu, Attention attention = Attention::flash3);
  ComputeModel(const topology::GpuSpec& gpu, const ComputeModelParams& params);

  Time time(const Op& op) const;
  // Fraction of peak a GEMM of this shape reaches (for tests and reports).
  double gemm_efficiency(int64_t m, int64_t n, int64_t k, int64_t batch, topology::Dtype dtype) const;
  double peak_flops(topology::Dtype dtype) const;
  const ComputeModelParams& params() const { return params_; }

 private:
  topology::GpuSpec gpu_;
  ComputeModelParams params_;
};

}  // namespace dtsim::workloads
