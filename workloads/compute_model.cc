#include "workloads/compute_model.h"

#include <algorithm>
#include <cmath>

namespace dtsim::workloads {

ComputeModelParams ComputeModelParams::for_gpu(const topology::GpuSpec& gpu, Attention attention) {
  ComputeModelParams p;
  // Fused attention, forward and backward, as fractions of the dense BF16 peak, by GPU and kernel
  // generation. flash1 on Ampere and Hopper was fitted on llm-foundry's Triton kernel (the MPT
  // runs); flash2 and flash3 follow the FlashAttention-2/-3 papers' causal head-dim-128 figures
  // (A100: FA2 ~190 fwd / ~150 bwd TFLOP/s; H100: FA2 ~330 / ~270, FA3 ~600 / ~450) and were
  // checked on the NeMo and Llama 3 runs (docs/training.md).
  auto attention_efficiency = [&](double f1, double b1, double f2, double b2, double f3, double b3) {
    switch (attention) {
      case Attention::flash1: p.attention_fwd_efficiency = f1; p.attention_bwd_efficiency = b1; break;
      case Attention::flash2: p.attention_fwd_efficiency = f2; p.attention_bwd_efficiency = b2; break;
      default: p.attention_fwd_efficiency = f3; p.attention_bwd_efficiency = b3; break;
    }
  };
  // The generation a compute capability belongs to: a GPU not in the catalog (a custom `gpu:`)
  // takes the figures of its generation, and one older than Ampere takes Ampere's (not validated).
  const int cc = gpu.compute_capability;
  const int generation = cc >= 100 ? 100 : cc >= 90 ? 90 : cc == 89 ? 89 : (cc == 86 || cc == 87) ? 86 : 80;
  switch (generation) {
    case 80:  // A100: 108 SMs; cuBLAS reaches ~80% of 312 TFLOP/s on large bf16 GEMMs. Volta (V100,
              // 80 SMs) takes Ampere's efficiencies, not validated on any run.
      p.sm_count = cc >= 80 ? 108 : 80;
      p.gemm_efficiency = 0.75;
      p.gemm_k_half = 64;
      attention_efficiency(0.45, 0.30, 0.60, 0.48, 0.60, 0.48);  // no Hopper kernels: flash3 runs as flash2
      break;
    case 86:  // A40 / GA102
      p.sm_count = 84;
      p.gemm_efficiency = 0.75;
      break;
    case 89:  // L40S / AD102
      p.sm_count = 142;
      p.gemm_efficiency = 0.58;
      break;
    case 100:  // B200 / GB200, and B300 / GB300 (Blackwell Ultra, 10.3): one SM design; 148 and 160 SMs
      p.sm_count = cc == 103 ? 160 : 148;
      p.gemm_efficiency = 0.65;
      // cuDNN's Blackwell attention; the older kernels are not tuned for it (not validated).
      attention_efficiency(0.30, 0.22, 0.35, 0.28, 0.50, 0.40);
      // Blackwell Ultra doubles the SFUs' exponent rate, the forward softmax's bottleneck: NVIDIA
      // measures attention forward ~35% faster than on GB200 (FP8, DeepSeek-V3's attention;
      // "Making Softmax More Efficient with NVIDIA Blackwell Ultra"). The backward pass does 2.5x
      // the tensor work per exponent and keeps Blackwell's figure.
      if (cc == 103) p.attention_fwd_efficiency *= 1.35;
      break;
    default:  // Hopper (90)
      p.sm_count = gpu.name.find("pcie") != std::string::npos ? 114 : 132;
      p.gemm_efficiency = 0.58;
      p.gemm_k_half = 128;
      // FP8 GEMMs through Transformer Engine's cuBLASLt path (the casts are modelled apart).
      p.fp8_efficiency_scale = 0.8;
      attention_efficiency(0.28, 0.18, 0.33, 0.27, 0.60, 0.45);
      break;
  }
  return p;
}

ComputeModel::ComputeModel(const topology::GpuSpec& gpu, Attention attention)
    : ComputeModel(gpu, ComputeModelParams::for_gpu(gpu, attention)) {}

ComputeModel::ComputeModel(const topology::GpuSpec& gpu, const ComputeModelParams& params)
    : gpu_(gpu), params_(params) {}

double ComputeModel::peak_flops(topology::Dtype dtype) const {
  auto it = gpu_.peak_flops.find(dtype);
  if (it != gpu_.peak_flops.end()) return it->second;
  // A dtype the GPU lacks runs at the next wider one it has (FP8 on Ampere runs as BF16).
  for (auto d : {topology::Dtype::bf16, topology::Dtype::fp16, topology::Dtype::tf32, topology::Dtype::fp32}) {
    auto w = gpu_.peak_flops.find(d);
    if (w != gpu_.peak_flops.end()) return w->second;
  }
  return 1e12;
}

double ComputeModel::gemm_efficiency(int64_t m, int64_t n, int64_t k, int64_t batch,
                                     topology::Dtype dtype) const {
  if (m <= 0 || n <= 0 || k <= 0) return params_.gemm_efficiency;
  // Wave quantisation: output tiles are spread over the SMs in whole waves; a partial last wave
  // leaves SMs idle, and padding to whole tiles wastes the rest. Libraries choose among tile
  // shapes per problem, trading that waste against the lower efficiency of smaller tiles, so
  // the best of a few candidates is taken.
  struct Tile {
    int64_t m, n;
    double rel;  // throughput of this tile shape relative to the largest
  };
  const Tile tiles[] = {{params_.gemm_tile_m, params_.gemm_tile_n, 1.0},
                        {params_.gemm_tile_n, params_.gemm_tile_m, 1.0},
                        {128, 128, 0.92},
                        {64, 128, 0.75},
                        {128, 64, 0.75},
                        {64, 64, 0.55}};
  double best = 0;
  for (const Tile& t : tiles) {
    const int64_t tiles_m = (m + t.m - 1) / t.m;
    const int64_t tiles_n = (n + t.n - 1) / t.n;
    const double count = static_cast<double>(tiles_m * tiles_n) * static_cast<double>(batch);
    const double sms = params_.sm_count;
    const double waves = std::ceil(count / sms);
    const double wave_eff = count / (waves * sms);
    const double pad_eff = static_cast<double>(m) * static_cast<double>(n) /
                           (static_cast<double>(tiles_m * t.m) * static_cast<double>(tiles_n * t.n));
    best = std::max(best, t.rel * wave_eff * pad_eff);
  }
  // A short reduction (K) leaves the tile's prologue and epilogue unamortised.
  const double k_eff = static_cast<double>(k) / (static_cast<double>(k) + params_.gemm_k_half);
  double e = params_.gemm_efficiency * best * k_eff;
  if (topology::quantized(dtype)) e *= params_.fp8_efficiency_scale;
  return e;
}

Time ComputeModel::time(const Op& op) const {
  if (op.has_measured()) return op.measured;
  double flop_time = 0;
  switch (op.compute) {
    case ComputeKind::gemm:
      flop_time = op.flops / (peak_flops(op.dtype) * gemm_efficiency(op.m, op.n, op.k, op.batch, op.dtype));
      break;
    case ComputeKind::attention_fwd:
      flop_time = op.flops / (peak_flops(op.dtype) * params_.attention_fwd_efficiency);
      break;
    case ComputeKind::attention_bwd:
      flop_time = op.flops / (peak_flops(op.dtype) * params_.attention_bwd_efficiency);
      break;
    case ComputeKind::elementwise:
    case ComputeKind::optimizer:
    case ComputeKind::measured:
      flop_time = op.flops > 0 ? op.flops / peak_flops(topology::Dtype::fp32) : 0;
      break;
  }
  const double mem_time =
      op.bytes.as_double() / (gpu_.hbm_bandwidth.bytes_per_s() * params_.memory_efficiency);
  return Time::s(std::max(flop_time, mem_time)) + params_.launch_overhead;
}

}  // namespace dtsim::workloads
