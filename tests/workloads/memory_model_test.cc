#include "workloads/memory_model.h"

#include <gtest/gtest.h>

#include "topology/catalog.h"
#include "workloads/megatron_generator.h"

namespace dtsim::workloads {
namespace {

topology::ClusterSpec cluster(int nodes) {
  topology::ClusterSpec c = *topology::find_node_preset("hgx-a100");
  c.nodes = nodes;
  return c;
}

// A four-layer model of hidden size h, 1,024-token sequences, 64 of them per step, data parallel
// over every GPU of the cluster.
TrainingSpec four_layers(int h, int heads) {
  TrainingSpec t;
  t.model.layers = 4;
  t.model.hidden = h;
  t.model.heads = heads;
  t.model.seq_len = 1024;
  t.model.vocab = 32000;
  t.batch.global = 64;
  t.parallel.dp = 0;
  return t;
}

// GPT-3 175B's layer (Korthikanti et al. 2022, table 3): h 12288, 96 heads, s 2048, FFN 4h.
TrainingSpec gpt175b(int tp, bool sp) {
  TrainingSpec t;
  t.model.layers = 96;
  t.model.hidden = 12288;
  t.model.heads = 96;
  t.model.seq_len = 2048;
  t.model.vocab = 51200;
  t.parallel.tp = tp;
  t.parallel.pp = 8;
  t.parallel.sequence_parallel = sp;
  t.batch.global = 64;
  t.attention = Attention::unfused;
  return t;
}

TEST(MemoryModel, ActivationsPerLayerFollowKorthikantisTable2) {
  const double h = 12288, a = 96, s = 2048, t = 8;
  const topology::ClusterSpec c = cluster(8);
  // Tensor parallel only: sbh (10 + 24/t + 5as/(ht)) per layer, i.e. per token h (10 + 24/t) + 5as/t.
  TrainingSpec spec = resolve_training(gpt175b(8, false), c);
  EXPECT_DOUBLE_EQ(activation_bytes_per_token(spec, false), h * (10 + 24 / t) + 5 * a * s / t);
  // With sequence parallelism everything divides by t: sbh (34/t + 5as/(ht)).
  spec = resolve_training(gpt175b(8, true), c);
  EXPECT_DOUBLE_EQ(activation_bytes_per_token(spec, false), 34 * h / t + 5 * a * s / t);
  // Selective recomputation (or flash attention) drops the 5as term.
  spec.activation_recompute = Recompute::selective;
  EXPECT_DOUBLE_EQ(activation_bytes_per_token(spec, false), 34 * h / t);
  spec.activation_recompute = Recompute::none;
  spec.attention = Attention::flash2;
  EXPECT_DOUBLE_EQ(activation_bytes_per_token(spec, false), 34 * h / t);
  // Full recomputation keeps each layer's input: 2sbh/t.
  spec.activation_recompute = Recompute::full;
  EXPECT_DOUBLE_EQ(activation_bytes_per_token(spec, false), 2 * h / t);
  // FP8 keeps its four GEMM inputs (QKV, projection, FC1, FC2: 3h + 4h elements) at a byte.
  spec.activation_recompute = Recompute::none;
  const double bf16 = activation_bytes_per_token(spec, false);
  spec.precision = topology::Dtype::fp8;
  EXPECT_DOUBLE_EQ(bf16 - activation_bytes_per_token(spec, false), (3 * h + 4 * h) / t);
  // NVFP4 keeps them at 4 bits plus a one-byte scale per 16 elements.
  spec.precision = topology::Dtype::fp4;
  EXPECT_DOUBLE_EQ(bf16 - activation_bytes_per_token(spec, false), (2 - 9.0 / 16) * (3 * h + 4 * h) / t);
}

// torchtitan's per-op checkpointing keeps a layer's input and FC2's output (2h, / t with SP), and
// Q, V, the attention output and FC1's gate half (3h + f for GPT-3's layer, / t), in BF16 under
// FP8 too; the layer being recomputed is counted whole on top, as under full recomputation.
TEST(MemoryModel, PerOpCheckpointingKeepsEveryOtherMatmulsOutput) {
  const double h = 12288, t = 8;
  const topology::ClusterSpec c = cluster(8);
  TrainingSpec spec = resolve_training(gpt175b(8, true), c);
  spec.activation_recompute = Recompute::every_other_matmul;
  EXPECT_DOUBLE_EQ(activation_bytes_per_token(spec, false), 2 * (2 * h + 3 * h + 4 * h) / t);
  spec.precision = topology::Dtype::fp8;
  EXPECT_DOUBLE_EQ(activation_bytes_per_token(spec, false), 2 * (2 * h + 3 * h + 4 * h) / t);
  spec.precision = topology::Dtype::bf16;
  const MemoryEstimate op = estimate_memory(spec, c);
  spec.activation_recompute = Recompute::full;
  const MemoryEstimate full = estimate_memory(spec, c);
  EXPECT_DOUBLE_EQ(op.transient, full.transient);
  EXPECT_GT(op.activations, full.activations);
}

// Layers kept in BF16 under FP8 store their GEMM inputs in BF16: with every layer so, the
// activations are the BF16 run's; with none, the FP8 run's.
TEST(MemoryModel, Bf16LayersOfAnFp8RunStoreBf16Activations) {
  TrainingSpec spec = resolve_training(gpt175b(8, true), cluster(8));
  spec.activation_recompute = Recompute::none;
  const double bf16 = estimate_memory(spec, cluster(8)).activations;
  spec.precision = topology::Dtype::fp8;
  const double fp8 = estimate_memory(spec, cluster(8)).activations;
  ASSERT_LT(fp8, bf16);
  spec.bf16_layers_at_end = spec.model.layers;
  EXPECT_DOUBLE_EQ(estimate_memory(spec, cluster(8)).activations, bf16);
  // The first half in BF16, the rest FP8: the peak is above the FP8 run's and at most the BF16
  // run's (stage 0, which holds the most microbatches, holds only BF16 layers here).
  spec.bf16_layers_at_end = 0;
  spec.bf16_layers_at_start = spec.model.layers / 2;
  const double half = estimate_memory(spec, cluster(8)).activations;
  EXPECT_GT(half, fp8);
  EXPECT_LE(half, bf16);
}

// CPU offload: the first N layers' activations move to host memory, but for one layer's in
// flight (double buffering), so the GPU holds N - 1 layers fewer.
TEST(MemoryModel, CpuOffloadMovesAllButOneOffloadedLayerToTheHost) {
  TrainingSpec spec = gpt175b(8, true);
  spec.parallel.pp = 1;
  spec.parallel.vp = 1;
  spec.batch.global = 8;
  spec = resolve_training(spec, cluster(8));
  const double tokens = 2048;
  const double per_layer = activation_bytes_per_token(spec, false) * tokens;
  const MemoryEstimate none = estimate_memory(spec, cluster(8));
  EXPECT_EQ(none.offloaded, 0);
  spec.cpu_offload_layers = 40;
  const MemoryEstimate some = estimate_memory(spec, cluster(8));
  EXPECT_NEAR(some.offloaded, 40 * per_layer, 1e-9 * some.offloaded);
  EXPECT_NEAR(none.activations - some.activations, 39 * per_layer, 1e-9 * none.activations);
  EXPECT_EQ(some.weights, none.weights);
}

TEST(MemoryModel, TheFirstStageOf1F1BHoldsAMicrobatchPerStage) {
  // 1F1B: stage s holds pp - s microbatches, so the first stage holds activations of every layer
  // of the model once (pp stages x layers / pp), whatever pp is.
  TrainingSpec spec = resolve_training(gpt175b(8, true), cluster(8));
  const MemoryEstimate m = estimate_memory(spec, cluster(8));
  EXPECT_EQ(m.stage, 0);
  EXPECT_EQ(m.microbatches_in_flight, 8);
  const double tokens = 2048;
  const double per_layer = activation_bytes_per_token(spec, false) * tokens;
  const double embedding_output = 2 * 12288 * tokens / 8;
  EXPECT_NEAR(m.activations, 96 * per_layer + 8 * embedding_output, 1e-6 * m.activations);
  // Interleaving with vp chunks holds more: (pp - 1) x 2 + (vp - 1) x pp warm-up chunks, plus one.
  spec.parallel.vp = 2;
  spec = resolve_training(spec, cluster(8));
  EXPECT_EQ(estimate_memory(spec, cluster(8)).microbatches_in_flight, 7 * 2 + 8 + 1);
}

// A multi-token-prediction module is one more layer and a 2h x h projection on the last stage.
TEST(MemoryModel, MultiTokenPredictionAddsALayerAndAProjectionToTheLastStage) {
  TrainingSpec t = four_layers(1024, 16);
  const double without = estimate_memory(resolve_training(t, cluster(1)), cluster(1)).weights;
  t.model.mtp_layers = 1;
  const double with = estimate_memory(resolve_training(t, cluster(1)), cluster(1)).weights;
  const double h = 1024;
  EXPECT_DOUBLE_EQ(with - without, 2 * (12 * h * h + 2 * h * h));  // bf16: attention 4h^2, FFN 8h^2
}

// activation_recompute: auto takes the least recomputation that fits: GPT-3 175B at TP 8 x PP 8
// without sequence parallelism and with unfused attention needs 120% of an A100's 80 GB keeping
// everything, 92% recomputing the attention core; at TP 1 nothing fits and it takes full.
TEST(MemoryModel, AutoRecomputeTakesTheLeastThatFits) {
  const topology::ClusterSpec c = cluster(8);
  TrainingSpec t = gpt175b(8, false);
  for (Recompute r : {Recompute::none, Recompute::selective}) {
    t.activation_recompute = r;
    EXPECT_EQ(estimate_memory(resolve_training(t, c), c).fits(), r == Recompute::selective) << name(r);
  }
  t.activation_recompute = Recompute::fit;
  const TrainingSpec chosen = resolve_training(t, c);
  EXPECT_EQ(chosen.activation_recompute, Recompute::selective);
  EXPECT_EQ(estimate_memory(chosen, c).recompute, Recompute::selective);
  TrainingSpec tp1 = gpt175b(1, false);
  tp1.activation_recompute = Recompute::fit;
  EXPECT_EQ(resolve_training(tp1, c).activation_recompute, Recompute::full);
}

TEST(MemoryModel, ZeroStagesShardOptimizerThenGradientsThenWeights) {
  // One stage, no TP, 64 data-parallel GPUs: 16 bytes per parameter unsharded (2 weights, 2
  // gradients, 12 Adam), then ZeRO-1 (12/dp), ZeRO-2 (14/dp), ZeRO-3 (16/dp).
  TrainingSpec t = four_layers(4096, 32);
  const topology::ClusterSpec c = cluster(8);
  double params = 0;
  for (int zero = 0; zero <= 3; ++zero) {
    t.parallel.zero = zero;
    const MemoryEstimate m = estimate_memory(resolve_training(t, c), c);
    if (zero == 0) {
      params = m.weights / 2;
      EXPECT_DOUBLE_EQ(m.gradients, 2 * params);
      EXPECT_DOUBLE_EQ(m.optimizer, 12 * params);
      // 4 layers of 12 h^2 plus input and output embeddings.
      EXPECT_DOUBLE_EQ(params, 4 * 12.0 * 4096 * 4096 + 2.0 * 32000 * 4096);
    }
    EXPECT_DOUBLE_EQ(m.optimizer, 12 * params / (zero >= 1 ? 64 : 1)) << "zero " << zero;
    EXPECT_DOUBLE_EQ(m.gradients, 2 * params / (zero >= 2 ? 64 : 1)) << "zero " << zero;
    EXPECT_DOUBLE_EQ(m.weights, 2 * params / (zero >= 3 ? 64 : 1)) << "zero " << zero;
    EXPECT_EQ(m.transient > 0, true);  // the logits at least
  }
}

// HSDP shards over its group only: shard_group 8 of 64 data-parallel GPUs holds 8x a ZeRO-3
// shard of the whole group.
TEST(MemoryModel, HybridShardingDividesTheStatesByItsGroup) {
  TrainingSpec t = four_layers(4096, 32);
  const topology::ClusterSpec c = cluster(8);
  t.parallel.zero = 3;
  const MemoryEstimate whole = estimate_memory(resolve_training(t, c), c);
  t.parallel.shard_group = 8;
  const MemoryEstimate hybrid = estimate_memory(resolve_training(t, c), c);
  EXPECT_DOUBLE_EQ(hybrid.weights, 8 * whole.weights);
  EXPECT_DOUBLE_EQ(hybrid.gradients, 8 * whole.gradients);
  EXPECT_DOUBLE_EQ(hybrid.optimizer, 8 * whole.optimizer);
}

TEST(MemoryModel, SaysWhenAJobDoesNotFit) {
  // GPT-3 175B with TP 8 and SP on 8 stages fits an 80 GB A100 (Korthikanti et al. ran it);
  // without tensor parallelism its weights and optimizer alone do not.
  TrainingSpec spec = gpt175b(8, true);
  spec.activation_recompute = Recompute::selective;
  MemoryEstimate m = estimate_memory(resolve_training(spec, cluster(8)), cluster(8));
  EXPECT_TRUE(m.fits()) << m.total() / (1 << 30) << " GiB";
  EXPECT_DOUBLE_EQ(m.capacity, 80.0 * (1 << 30));
  spec.parallel.tp = 1;
  spec.parallel.pp = 8;
  spec.parallel.dp = 1;
  m = estimate_memory(resolve_training(spec, cluster(1)), cluster(1));
  EXPECT_FALSE(m.fits());
  EXPECT_GT(m.weights + m.gradients + m.optimizer, m.capacity);
}

}  // namespace
}  // namespace dtsim::workloads
