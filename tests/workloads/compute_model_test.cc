#include "workloads/compute_model.h"

#include <gtest/gtest.h>

#include "topology/catalog.h"

namespace dtsim::workloads {
namespace {

const topology::GpuSpec& h100() { return *topology::find_gpu_preset("h100-sxm"); }

Op gemm(int64_t m, int64_t n, int64_t k) {
  Op op;
  op.compute = ComputeKind::gemm;
  op.m = m;
  op.n = n;
  op.k = k;
  op.flops = 2.0 * static_cast<double>(m * n * k);
  op.bytes = Bytes((m * k + k * n + m * n) * 2);
  return op;
}

TEST(ComputeModel, LargeGemmReachesTheCalibratedEfficiency) {
  ComputeModel cm(h100());
  EXPECT_NEAR(cm.gemm_efficiency(16384, 16384, 16384, 1, topology::Dtype::bf16), cm.params().gemm_efficiency, 0.02);
}

TEST(ComputeModel, ShortReductionLowersGemmEfficiency) {
  ComputeModel cm(h100());
  EXPECT_LT(cm.gemm_efficiency(8192, 8192, 128, 1, topology::Dtype::bf16),
            0.6 * cm.gemm_efficiency(8192, 8192, 8192, 1, topology::Dtype::bf16));
}

TEST(ComputeModel, PartialLastWaveLowersGemmEfficiency) {
  ComputeModel cm(h100());
  // 133 tiles of 128x256 on 132 SMs need two waves; 132 tiles need one.
  EXPECT_LT(cm.gemm_efficiency(128 * 7, 256 * 19, 4096, 1, topology::Dtype::bf16),
            cm.gemm_efficiency(128 * 12, 256 * 11, 4096, 1, topology::Dtype::bf16));
}

TEST(ComputeModel, ElementwiseOpIsPricedByHbmBandwidth) {
  ComputeModelParams p = ComputeModelParams::for_gpu(h100());
  p.launch_overhead = Time::zero();
  ComputeModel cm(h100(), p);
  Op op;
  op.compute = ComputeKind::elementwise;
  op.bytes = Bytes(3'350'000'000);
  EXPECT_NEAR(cm.time(op).seconds(), 1e-3 / p.memory_efficiency, 1e-9);
}

TEST(ComputeModel, MeasuredDurationWinsOverTheModel) {
  ComputeModel cm(h100());
  Op op = gemm(8192, 8192, 8192);
  op.measured = Time::us(42);
  EXPECT_EQ(cm.time(op), Time::us(42));
}

TEST(ComputeModel, Fp8GemmIsFasterThanBf16ButNotTwice) {
  ComputeModel cm(h100());
  Op a = gemm(8192, 8192, 8192);
  Op b = a;
  b.dtype = topology::Dtype::fp8;
  const double ratio = cm.time(a) / cm.time(b);
  EXPECT_GT(ratio, 1.2);
  EXPECT_LT(ratio, 2.0);
}

TEST(ComputeModel, CausalAttentionBackwardCostsMoreThanForward) {
  ComputeModel cm(h100());
  Op f;
  f.compute = ComputeKind::attention_fwd;
  f.flops = 1e12;
  Op b = f;
  b.compute = ComputeKind::attention_bwd;
  b.flops = 2.5e12;
  EXPECT_GT(cm.time(b), cm.time(f) * 2);
}

TEST(ComputeModel, AttentionKernelGenerationsOrderByHardwareGeneration) {
  Op f;
  f.compute = ComputeKind::attention_fwd;
  f.flops = 1e13;
  auto time = [&](const topology::GpuSpec& g, Attention a) { return ComputeModel(g, a).time(f).seconds(); };
  // Hopper: each generation faster; FlashAttention-3 roughly twice FlashAttention-2.
  EXPECT_GT(time(h100(), Attention::flash1), time(h100(), Attention::flash2));
  EXPECT_GT(time(h100(), Attention::flash2), 1.5 * time(h100(), Attention::flash3));
  // Ampere has no Hopper kernels: flash3 runs as flash2.
  const topology::GpuSpec& a100 = *topology::find_gpu_preset("a100-sxm-80g");
  EXPECT_DOUBLE_EQ(time(a100, Attention::flash3), time(a100, Attention::flash2));
  EXPECT_GT(time(a100, Attention::flash1), time(a100, Attention::flash2));
}

TEST(ComputeModel, BlackwellUltraTakesBlackwellEfficienciesNotHoppersAndAFasterSoftmax) {
  // B300/GB300 report compute capability 10.3; they once fell through to the Hopper branch.
  const auto b200 = ComputeModelParams::for_gpu(*topology::find_gpu_preset("b200"));
  const auto b300 = ComputeModelParams::for_gpu(*topology::find_gpu_preset("b300"));
  const auto gb300 = ComputeModelParams::for_gpu(*topology::find_gpu_preset("gb300"));
  const auto hopper = ComputeModelParams::for_gpu(h100());
  for (const auto* p : {&b300, &gb300}) {
    EXPECT_EQ(p->gemm_efficiency, b200.gemm_efficiency);
    EXPECT_EQ(p->fp8_efficiency_scale, b200.fp8_efficiency_scale);
    // Blackwell Ultra's doubled exponent rate: the forward pass 35% faster, the backward as B200.
    EXPECT_DOUBLE_EQ(p->attention_fwd_efficiency, 1.35 * b200.attention_fwd_efficiency);
    EXPECT_EQ(p->attention_bwd_efficiency, b200.attention_bwd_efficiency);
    EXPECT_NE(p->gemm_efficiency, hopper.gemm_efficiency);
    EXPECT_EQ(p->sm_count, 160);
  }
  EXPECT_EQ(b200.sm_count, 148);
}

TEST(ComputeModel, AGpuOutsideTheCatalogTakesItsGenerationsFigures) {
  topology::GpuSpec volta = *topology::find_gpu_preset("a100-sxm-80g");
  volta.name = "v100-custom";
  volta.compute_capability = 70;
  topology::GpuSpec hopper_like = h100();
  hopper_like.name = "h20-custom";
  topology::GpuSpec consumer_blackwell = *topology::find_gpu_preset("b200");
  consumer_blackwell.compute_capability = 120;
  const auto a100 = ComputeModelParams::for_gpu(*topology::find_gpu_preset("a100-sxm-80g"));
  EXPECT_EQ(ComputeModelParams::for_gpu(volta).gemm_efficiency, a100.gemm_efficiency);  // not Hopper's
  EXPECT_EQ(ComputeModelParams::for_gpu(hopper_like).gemm_efficiency, ComputeModelParams::for_gpu(h100()).gemm_efficiency);
  EXPECT_EQ(ComputeModelParams::for_gpu(consumer_blackwell).gemm_efficiency,
            ComputeModelParams::for_gpu(*topology::find_gpu_preset("b200")).gemm_efficiency);
}

}  // namespace
}  // namespace dtsim::workloads
