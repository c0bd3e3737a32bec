#include "workloads/megatron_generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "collectives/analytical_model.h"
#include "topology/catalog.h"
#include "topology/node_template.h"
#include "workloads/alpha_beta_model.h"
#include "workloads/executor.h"
#include "workloads/memory_model.h"
#include "workloads/model_catalog.h"
#include "workloads/model_shape.h"
#include "workloads/placement.h"

namespace dtsim::workloads {
namespace {

topology::ClusterSpec cluster(int nodes) {
  topology::ClusterSpec c = *topology::find_node_preset("hgx-h100");
  c.nodes = nodes;
  return c;
}

TrainingSpec gpt(int tp, int pp, int vp, int global, int layers = 8) {
  TrainingSpec t;
  t.model.layers = layers;
  t.model.hidden = 1024;
  t.model.heads = 16;
  t.model.seq_len = 1024;
  t.model.vocab = 32000;
  t.parallel.tp = tp;
  t.parallel.pp = pp;
  t.parallel.vp = vp;
  t.parallel.dp = 0;  // the rest of the cluster
  t.batch.global = global;
  t.batch.micro = 1;
  return t;
}

int count_label(const RankGraph& r, std::string_view label) {
  int n = 0;
  for (const Op& op : r.ops) n += r.labels[op.label] == label ? 1 : 0;
  return n;
}

int64_t label_bytes(const RankGraph& r, std::string_view label) {
  int64_t b = 0;
  for (const Op& op : r.ops) b += r.labels[op.label] == label ? op.bytes.count() : 0;
  return b;
}

// CPU offload: each offloaded layer's activations go out after its forward and come back before
// its backward, once per microbatch, on the host stream at the host link's rate.
TEST(MegatronGenerator, CpuOffloadCopiesEachOffloadedLayerOutAndBack) {
  const auto c = cluster(1);
  TrainingSpec t = gpt(1, 1, 1, 16);
  t.cpu_offload_layers = 5;
  const Workload w = generate_megatron(t, c, {.layers_per_block = 1});
  const RankGraph& r = w.ranks[0];
  const int microbatches = 16 / 8;  // dp 8
  EXPECT_EQ(count_label(r, "offload.d2h"), 5 * microbatches);
  EXPECT_EQ(count_label(r, "offload.h2d"), 5 * microbatches);
  const TrainingSpec resolved = resolve_training(t, c);
  const double bytes = activation_bytes_per_token(resolved, false) * 1024;  // micro 1 x seq 1024
  for (const Op& op : r.ops) {
    if (r.labels[op.label].rfind("offload.", 0) != 0) continue;
    EXPECT_EQ(op.stream, Stream::host);
    EXPECT_EQ(op.measured, topology::pcie_x16_bandwidth(5).transfer_time(Bytes(static_cast<int64_t>(bytes))));
  }
  // Under FP8, layers kept in BF16 (--first-last-layers-bf16) save, and copy, BF16 activations.
  TrainingSpec fp8 = t;
  fp8.precision = topology::Dtype::fp8;
  fp8.bf16_layers_at_start = 2;
  const TrainingSpec fp8_resolved = resolve_training(fp8, c);
  TrainingSpec wide = fp8_resolved;
  wide.precision = topology::Dtype::bf16;
  const Time narrow_copy = topology::pcie_x16_bandwidth(5).transfer_time(
      Bytes(static_cast<int64_t>(activation_bytes_per_token(fp8_resolved, false) * 1024)));
  const Time wide_copy = topology::pcie_x16_bandwidth(5).transfer_time(
      Bytes(static_cast<int64_t>(activation_bytes_per_token(wide, false) * 1024)));
  ASSERT_GT(wide_copy, narrow_copy);
  const Workload fw = generate_megatron(fp8, c, {.layers_per_block = 1});
  const RankGraph& f = fw.ranks[0];
  int wide_ops = 0, narrow_ops = 0;
  for (const Op& op : f.ops) {
    if (f.labels[op.label].rfind("offload.", 0) != 0) continue;
    wide_ops += op.measured == wide_copy ? 1 : 0;
    narrow_ops += op.measured == narrow_copy ? 1 : 0;
  }
  EXPECT_EQ(wide_ops, 2 * 2 * microbatches);    // layers 0 and 1, out and back
  EXPECT_EQ(narrow_ops, 3 * 2 * microbatches);  // layers 2 to 4
  t.parallel.pp = 2;
  EXPECT_THROW(generate_megatron(t, c), std::invalid_argument);  // Megatron: no offload with pp > 1
  t.parallel.pp = 1;
  t.cpu_offload_layers = 8;
  EXPECT_THROW(generate_megatron(t, c), std::invalid_argument);  // the last layer stays
}

TEST(MegatronGenerator, SimulatesOneRankPerPipelineStage) {
  const Workload w = generate_megatron(gpt(2, 4, 1, 16), cluster(1));
  ASSERT_EQ(w.ranks.size(), 4u);
  for (const auto& r : w.ranks) EXPECT_EQ(r.represents, 2);
}

TEST(MegatronGenerator, EveryStageRunsEachMicrobatchForwardAndBackward) {
  // 8 GPUs: tp 2 x pp 2 x dp 2; 16 sequences / (1 x 2) = 8 microbatches; 4 layers per stage.
  const Workload w = generate_megatron(gpt(2, 2, 1, 16), cluster(1));
  for (const auto& r : w.ranks) {
    EXPECT_EQ(count_label(r, "mlp.fc1.fwd"), 8 * 4);
    EXPECT_EQ(count_label(r, "mlp.fc1.bwd"), 8 * 4);
  }
}

TEST(MegatronGenerator, EveryReceiveIsPairedWithASendOfTheSameSize) {
  const Workload w = generate_megatron(gpt(1, 4, 2, 16), cluster(1));
  int recvs = 0;
  for (const auto& r : w.ranks) {
    for (const Op& op : r.ops) {
      if (op.kind != OpKind::recv) continue;
      ++recvs;
      ASSERT_GE(op.peer_rank, 0);
      const Op& send = w.ranks[op.peer_rank].ops[op.peer_op];
      EXPECT_EQ(send.kind, OpKind::send);
      EXPECT_EQ(send.bytes, op.bytes);
    }
  }
  // 8 virtual stages, 8 microbatches: 7 boundaries x 8 microbatches x 2 directions.
  EXPECT_EQ(recvs, 7 * 8 * 2);
}

TEST(MegatronGenerator, SequenceParallelGathersAndScattersTwicePerLayerEachWay) {
  const Workload w = generate_megatron(gpt(8, 1, 1, 1, 2), cluster(1));
  const RankGraph& r = w.ranks[0];
  std::map<collectives::CollectiveKind, int> kinds;
  for (const Op& op : r.ops) {
    if (op.kind == OpKind::collective && op.stream == Stream::tp) kinds[op.collective] += op.repeat;
  }
  // 2 layers x (2 fwd + 2 bwd) of each, plus the LM head's gather and scatter.
  EXPECT_EQ(kinds[collectives::CollectiveKind::all_gather], 2 * 4 + 1);
  EXPECT_EQ(kinds[collectives::CollectiveKind::reduce_scatter], 2 * 4 + 1);
}

TEST(MegatronGenerator, WithoutSequenceParallelTensorParallelAllReduces) {
  TrainingSpec t = gpt(8, 1, 1, 1, 2);
  t.parallel.sequence_parallel = false;
  const Workload w = generate_megatron(t, cluster(1));
  int all_reduce = 0;
  for (const Op& op : w.ranks[0].ops) {
    if (op.kind == OpKind::collective && op.stream == Stream::tp) {
      EXPECT_EQ(op.collective, collectives::CollectiveKind::all_reduce);
      ++all_reduce;
    }
  }
  EXPECT_EQ(all_reduce, 2 * 4 + 1);  // and the vocabulary-parallel LM head's input gradient
}

TEST(MegatronGenerator, FsdpGathersParametersForEveryMicrobatchForwardAndBackward) {
  TrainingSpec t = gpt(1, 1, 1, 32, 4);
  t.parallel.zero = 3;
  const Workload w = generate_megatron(t, cluster(1));  // dp 8: 4 microbatches
  EXPECT_EQ(count_label(w.ranks[0], "fsdp.param.ag"), 4 * 4 * 2);
  EXPECT_EQ(count_label(w.ranks[0], "grad.rs"), 4 * 4 + 1);  // + embedding and head, once
}

// Without resharding after forward (torchtitan under PP): one gather a block per step, before the
// first microbatch's forward, and one reduce-scatter of the chunk's gradients after the last
// microbatch's backward, of all its layers' bytes.
TEST(MegatronGenerator, FsdpWithoutReshardingGathersOnceAStepAndReducesOnceAfterTheLastBackward) {
  TrainingSpec t = gpt(1, 1, 1, 32, 4);
  t.parallel.zero = 3;
  const Workload every = generate_megatron(t, cluster(1));
  t.fsdp_reshard_after_forward = false;
  const Workload once = generate_megatron(t, cluster(1));  // dp 8: 4 microbatches
  EXPECT_EQ(count_label(once.ranks[0], "fsdp.param.ag"), 4);
  EXPECT_EQ(count_label(once.ranks[0], "grad.rs"), 1 + 1);  // the layers, then embedding and head
  auto scattered = [](const RankGraph& r) {
    std::vector<double> bytes;
    for (const Op& op : r.ops) {
      if (r.labels[op.label] == "grad.rs") bytes.push_back(static_cast<double>(op.bytes.count()));
    }
    return bytes;
  };
  // The layers' gradients once (the first reduction, the embedding and head's last), against
  // every microbatch's: 4 x 4 reductions of a layer's bytes.
  const std::vector<double> o = scattered(once.ranks[0]), e = scattered(every.ranks[0]);
  ASSERT_EQ(o.size(), 2u);
  ASSERT_EQ(e.size(), 4u * 4 + 1);
  EXPECT_NEAR(o[0], 4 * e[0], 4);
  EXPECT_EQ(o[1], e.back());
}

// PyTorch eager (fused_elementwise false): a Llama layer's RMSNorms move 4B + 28 bytes an element
// forward instead of 2B, its SwiGLU 5B per FFN element instead of 3B, and the rotary embedding
// (in FP32) and GQA's repeated K and V become kernels of their own; GEMMs do not change.
TEST(MegatronGenerator, EagerElementwiseRunsAKernelPerOperator) {
  TrainingSpec t = gpt(1, 1, 1, 8, 2);
  t.model.kv_heads = 4;
  t.model.gated_ffn = true;
  t.model.ffn_hidden = 2816;
  const Workload fused = generate_megatron(t, cluster(1));
  t.fused_elementwise = false;
  const Workload eager = generate_megatron(t, cluster(1));
  auto bytes = [](const RankGraph& r, std::string_view label) {
    int64_t b = 0;
    for (const Op& op : r.ops) b += r.labels[op.label] == label ? op.bytes.count() : 0;
    return b;
  };
  const RankGraph &f = fused.ranks[0], &e = eager.ranks[0];
  EXPECT_EQ(bytes(e, "ln1.fwd") * 2 * 2, bytes(f, "ln1.fwd") * (4 * 2 + 28));
  EXPECT_EQ(bytes(e, "mlp.act.fwd") * 3, bytes(f, "mlp.act.fwd") * 5);
  EXPECT_EQ(count_label(f, "attn.rope.fwd"), 0);
  EXPECT_EQ(count_label(e, "attn.rope.fwd"), count_label(e, "attn.qkv.fwd"));
  EXPECT_EQ(count_label(e, "attn.repeat_kv.bwd"), count_label(e, "attn.qkv.bwd"));
  EXPECT_EQ(bytes(e, "mlp.fc1.fwd"), bytes(f, "mlp.fc1.fwd"));
}

// Float8 TP (torchtitan): the forward's sequence-parallel all-gathers carry the FP8 GEMM inputs,
// a byte an element; the backward's collectives stay BF16, as does a BF16 run's.
TEST(MegatronGenerator, Fp8TensorParallelAllGathersMoveOneByteAnElementForward) {
  TrainingSpec t = gpt(8, 1, 1, 8, 2);
  t.precision = topology::Dtype::fp8;
  t.fp8_tp_all_gather = true;
  auto bytes = [](const RankGraph& r, std::string_view label) {
    for (const Op& op : r.ops) {
      if (r.labels[op.label] == label) return op.bytes.count();
    }
    return int64_t{0};
  };
  const RankGraph r = generate_megatron(t, cluster(1)).ranks[0];
  EXPECT_EQ(2 * bytes(r, "attn.ag.fwd"), bytes(r, "attn.ag.bwd"));
  EXPECT_EQ(2 * bytes(r, "mlp.ag.fwd"), bytes(r, "mlp.ag.bwd"));
  t.precision = topology::Dtype::bf16;
  const RankGraph b = generate_megatron(t, cluster(1)).ranks[0];
  EXPECT_EQ(bytes(b, "attn.ag.fwd"), bytes(b, "attn.ag.bwd"));
}

// PyTorch's ring attention under torchtitan's Llama: the ring moves K and V repeated to every
// query head (16 heads over 4 KV heads: 4x the bytes), and the backward's dK and dV in FP32 (2x
// again over BF16).
TEST(MegatronGenerator, TorchRingAttentionExchangesRepeatedHeadsAndFp32Gradients) {
  TrainingSpec t = gpt(1, 1, 1, 8, 2);
  t.model.kv_heads = 4;
  t.parallel.cp = 2;
  const RankGraph gqa = generate_megatron(t, cluster(1)).ranks[0];
  t.cp_torch_ring = true;
  const RankGraph ring = generate_megatron(t, cluster(1)).ranks[0];
  ASSERT_GT(label_bytes(gqa, "attn.cp_kv.fwd"), 0);
  EXPECT_EQ(label_bytes(ring, "attn.cp_kv.fwd"), 4 * label_bytes(gqa, "attn.cp_kv.fwd"));
  EXPECT_EQ(label_bytes(ring, "attn.cp_kv.bwd"), 2 * 4 * label_bytes(gqa, "attn.cp_kv.bwd"));
}

// HSDP (shard_group 8 of a DP group of 16, two nodes): parameters are gathered and gradients
// reduce-scattered inside the node's 8 GPUs, and the shard's gradients (1/8 of them) all-reduced
// with the other node's copy.
TEST(MegatronGenerator, HybridShardingGathersInsideTheShardGroupAndAllReducesAcrossItsCopies) {
  TrainingSpec t = gpt(1, 1, 1, 32, 4);
  t.parallel.zero = 3;
  t.parallel.shard_group = 8;
  const Workload w = generate_megatron(t, cluster(2));  // dp 16: 2 microbatches
  const RankGraph& r = w.ranks[0];
  int gathers = 0, scatters = 0, replicas = 0;
  double scattered = 0, all_reduced = 0;
  for (const Op& op : r.ops) {
    const std::string_view label = r.labels[op.label];
    if (op.comm < 0) continue;
    const auto& ranks = w.comms[static_cast<size_t>(op.comm)].ranks;
    if (label == "fsdp.param.ag") {
      ++gathers;
      EXPECT_EQ(ranks, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    } else if (label == "grad.rs") {
      ++scatters;
      scattered += static_cast<double>(op.bytes.count());
      EXPECT_EQ(ranks.size(), 8u);
    } else if (label == "grad.ar.replicas") {
      ++replicas;
      all_reduced += static_cast<double>(op.bytes.count());
      EXPECT_EQ(ranks, (std::vector<int>{0, 8}));
      EXPECT_EQ(op.collective, collectives::CollectiveKind::all_reduce);
    }
  }
  EXPECT_EQ(gathers, 4 * 2 * 2);
  EXPECT_EQ(replicas, scatters);
  EXPECT_NEAR(all_reduced, scattered / 8, scatters);  // each shard's bytes, rounded per op
  // The whole group or a group of one are plain ZeRO-3 and plain data parallelism.
  t.parallel.shard_group = 16;
  EXPECT_EQ(count_label(generate_megatron(t, cluster(2)).ranks[0], "grad.ar.replicas"), 0);
  t.parallel.shard_group = 1;
  const Workload ddp = generate_megatron(t, cluster(2));
  EXPECT_EQ(count_label(ddp.ranks[0], "fsdp.param.ag"), 0);
  EXPECT_GT(count_label(ddp.ranks[0], "grad.sync"), 0);
  t.parallel.shard_group = 3;
  EXPECT_THROW(generate_megatron(t, cluster(2)), std::invalid_argument);
  t.parallel.shard_group = 8;
  t.parallel.zero = 0;
  EXPECT_THROW(generate_megatron(t, cluster(2)), std::invalid_argument);
}

TEST(MegatronGenerator, ModelFlopsMatchMegatronsClosedForm) {
  // Narayanan et al. 2021, eq. 3 without recompute: 72 B s l h^2 (1 + s/6h + V/12lh).
  TrainingSpec t = resolve_training(gpt(1, 1, 1, 64, 24), cluster(1));
  const double B = 64, s = 1024, l = 24, h = 1024, V = 32000;
  const double expected = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(megatron_model_flops(t) / expected, 1.0, 1e-9);
}

TEST(MegatronGenerator, InterleavingWithMicrobatchesNotDivisibleByStagesStillRunsEachOnce) {
  // 8 GPUs: pp 4 x dp 2; 12 sequences: 6 microbatches over 4 stages, 2 chunks each.
  const Workload w = generate_megatron(gpt(1, 4, 2, 12), cluster(1));
  for (const auto& r : w.ranks) EXPECT_EQ(count_label(r, "mlp.fc1.fwd"), 6 * 2);
}

TEST(MegatronGenerator, AShortfallOfLayersFallsOnTheChunksWithTheEmbeddingAndTheHead) {
  // Llama 3 405B's split in miniature: 14 layers on pp 4 x vp 4 = 16 chunks. The first chunk
  // (embedding) and the last (LM head) hold no layer; stages 1 and 2 hold 4 layers, 0 and 3 hold 3.
  // 8 GPUs: pp 4 x dp 2; 16 sequences: 8 microbatches.
  const Workload w = generate_megatron(gpt(1, 4, 4, 16, 14), cluster(1));
  const int expected[] = {3, 4, 4, 3};
  for (int s = 0; s < 4; ++s) {
    EXPECT_EQ(count_label(w.ranks[s], "mlp.fc1.fwd"), 8 * expected[s]) << "stage " << s;
  }
  EXPECT_EQ(count_label(w.ranks[0], "embedding.fwd"), 8);
  EXPECT_EQ(count_label(w.ranks[3], "logits.fwd"), 8);
  AlphaBetaCollectiveModel comm(cluster(1));
  ComputeModel cm(cluster(1).gpu);
  EXPECT_GT(Executor(cm, comm).run(w).iteration, Time::zero());

  // 30 layers on 8 chunks: 4 each, the two short ones at the ends (3 + 4 x 6 + 3).
  const Workload even = generate_megatron(gpt(1, 4, 2, 16, 30), cluster(1));
  EXPECT_EQ(count_label(even.ranks[0], "mlp.fc1.fwd"), 8 * (3 + 4));
  EXPECT_EQ(count_label(even.ranks[3], "mlp.fc1.fwd"), 8 * (4 + 3));
  EXPECT_EQ(count_label(even.ranks[1], "mlp.fc1.fwd"), 8 * 8);

  // More than two chunks short of a layer is refused.
  EXPECT_THROW(generate_megatron(gpt(1, 4, 4, 16, 13), cluster(1)), std::invalid_argument);
}

TEST(MegatronGenerator, UnfusedFp8CastsAddAKernelBeforeEachGemm) {
  TrainingSpec t = gpt(2, 1, 1, 4, 2);
  t.precision = topology::Dtype::fp8;
  const Workload fused = generate_megatron(t, cluster(1));
  EXPECT_EQ(count_label(fused.ranks[0], "fp8.cast"), 0);
  t.fp8_fused_casts = false;
  const Workload unfused = generate_megatron(t, cluster(1));
  // 4 linear layers a block (QKV, projection, FC1, FC2), forward and backward, plus the LM head,
  // for each of 2 layers and 1 microbatch (tp 2 x dp 4).
  EXPECT_EQ(count_label(unfused.ranks[0], "fp8.cast"), 2 * 4 * 2 + 2);
  // BF16 runs never cast.
  t.precision = topology::Dtype::bf16;
  EXPECT_EQ(count_label(generate_megatron(t, cluster(1)).ranks[0], "fp8.cast"), 0);
}

TEST(MegatronGenerator, Nvfp4QuantizesOnlyGemmInputsAndAddsTheHadamardKernel) {
  TrainingSpec t = gpt(2, 1, 1, 4, 2);
  t.precision = topology::Dtype::fp4;
  const Workload w = generate_megatron(t, cluster(1));
  const RankGraph& r = w.ranks[0];
  int gemms = 0, quantizes = 0, attention = 0;
  for (size_t i = 0; i < r.ops.size(); ++i) {
    const Op& op = r.ops[i];
    if (op.compute == ComputeKind::gemm) {
      ++gemms;
      EXPECT_EQ(op.dtype, topology::Dtype::fp4);
    } else if (op.compute == ComputeKind::attention_fwd || op.compute == ComputeKind::attention_bwd) {
      // Attention runs in BF16: it used to be priced at the FP4 peak, 2-3x too fast.
      ++attention;
      EXPECT_EQ(op.dtype, topology::Dtype::bf16);
    } else if (r.labels[op.label] == "fp4.hadamard_quantize") {
      ++quantizes;
      // Each feeds the GEMM after it: its input (forward) or output gradient (backward), read
      // in BF16 and written as 4 bits plus a scale per 16 elements.
      ASSERT_LT(i + 1, r.ops.size());
      const Op& g = r.ops[i + 1];
      ASSERT_EQ(g.compute, ComputeKind::gemm);
      const bool backward = r.labels[g.label].ends_with(".bwd");
      EXPECT_EQ(op.bytes.count(), (backward ? g.m * g.n : g.m * g.k) * 41 / 16) << r.labels[g.label];
    }
    if (op.compute != ComputeKind::gemm) {
      EXPECT_NE(op.dtype, topology::Dtype::fp4) << r.labels[op.label];
    }
  }
  // 4 linear layers a block forward and backward, for 2 layers, plus the LM head's two.
  EXPECT_EQ(gemms, 2 * 4 * 2 + 2);
  EXPECT_EQ(quantizes, gemms);
  EXPECT_EQ(attention, 2 * 2);
  // FP8 recipes have no such kernel.
  t.precision = topology::Dtype::fp8;
  EXPECT_EQ(count_label(generate_megatron(t, cluster(1)).ranks[0], "fp4.hadamard_quantize"), 0);
}

// Megatron's --first-last-layers-bf16: the first and last layers' GEMMs stay BF16 (no Hadamard
// kernel either); the LM head and the layers between keep the run's precision, in every pass.
TEST(MegatronGenerator, FirstAndLastLayersCanStayInBf16) {
  for (const int layers_per_block : {1, 0}) {  // a block per layer, and merged layers (sweeps)
    TrainingSpec t = gpt(2, 1, 1, 4, 8);
    t.precision = topology::Dtype::fp4;
    t.bf16_layers_at_start = 1;
    t.bf16_layers_at_end = 2;
    GeneratorOptions options;
    options.layers_per_block = layers_per_block;
    const Workload w = generate_megatron(t, cluster(1), options);
    const RankGraph& r = w.ranks[0];
    std::map<std::string, int> by_dtype;  // GEMM instances by dtype
    for (const Op& op : r.ops) {
      if (op.compute != ComputeKind::gemm) continue;
      by_dtype[op.dtype == topology::Dtype::bf16 ? "bf16" : op.dtype == topology::Dtype::fp4 ? "fp4" : "?"] += op.repeat;
      if (r.labels[op.label].starts_with("logits")) {
        EXPECT_EQ(op.dtype, topology::Dtype::fp4);
      }
    }
    // 4 GEMMs a layer forward and backward: 3 layers in BF16, 5 in FP4 plus the LM head's two.
    EXPECT_EQ(by_dtype["bf16"], 3 * 8) << layers_per_block;
    EXPECT_EQ(by_dtype["fp4"], 5 * 8 + 2) << layers_per_block;
    EXPECT_EQ(by_dtype["?"], 0);
    int quantizes = 0;
    for (const Op& op : r.ops) quantizes += r.labels[op.label] == "fp4.hadamard_quantize" ? op.repeat : 0;
    EXPECT_EQ(quantizes, 5 * 8 + 2) << layers_per_block;
  }
  // A BF16 run is BF16 throughout, and more BF16 layers than the model has is refused.
  TrainingSpec t = gpt(2, 1, 1, 4, 8);
  t.bf16_layers_at_end = 2;
  const Workload bf16 = generate_megatron(t, cluster(1));
  for (const Op& op : bf16.ranks[0].ops) {
    if (op.compute == ComputeKind::gemm) {
      EXPECT_EQ(op.dtype, topology::Dtype::bf16);
    }
  }
  t.precision = topology::Dtype::fp8;
  t.bf16_layers_at_start = 7;
  EXPECT_THROW(generate_megatron(t, cluster(1)), std::invalid_argument);
}

TEST(MegatronGenerator, RejectsAJobLargerThanTheCluster) {
  TrainingSpec t = gpt(8, 2, 1, 16);
  t.parallel.dp = 2;
  EXPECT_THROW(generate_megatron(t, cluster(3)), std::invalid_argument);
}

TEST(MegatronGenerator, AJobOnPartOfTheClusterCountsOnlyItsGpus) {
  TrainingSpec t = gpt(8, 2, 1, 16);
  t.parallel.dp = 2;
  EXPECT_EQ(generate_megatron(t, cluster(8)).total_gpus, 32);
}

TEST(MegatronGenerator, MoeLayersDispatchAndCombineOverTheExpertGroup) {
  TrainingSpec t;
  t.model = *find_model_preset("mixtral-8x7b");
  t.model.layers = 2;
  t.parallel.tp = 1;
  t.parallel.dp = 8;
  t.parallel.ep = 8;
  t.batch.global = 8;
  const Workload w = generate_megatron(t, cluster(1));
  int a2a = 0;
  for (const Op& op : w.ranks[0].ops) {
    if (op.kind == OpKind::collective && op.collective == collectives::CollectiveKind::all_to_all) {
      EXPECT_EQ(op.stream, Stream::ep);
      EXPECT_EQ(w.comms[op.comm].size(), 8);
      ++a2a;
    }
  }
  EXPECT_EQ(a2a, 2 * 4);  // 2 layers x (dispatch + combine) x (fwd + bwd)
}

// The presets' shapes give the parameter counts their papers publish: DeepSeek-V3 671B with
// 37B active per token (MLA attention, 3 dense layers, 256 + 1 experts of which 8 + 1 run),
// Qwen3-235B-A22B 235B and 22B (128-wide heads on a 4096 hidden).
double total_params(const ModelShape& z, bool active) {
  double p = 2.0 * static_cast<double>(z.V * z.h);  // embedding and LM head, untied
  for (int64_t l = 0; l < z.L; ++l) {
    p += z.attn_params();
    if (!z.moe(l)) {
      p += z.mlp_params();
      continue;
    }
    const double experts = static_cast<double>(active ? z.topk : z.E) + static_cast<double>(z.shared);
    p += experts * z.expert_params() + static_cast<double>(z.h * z.E);
  }
  return p;
}

TEST(MegatronGenerator, PresetsCountThePublishedParameters) {
  TrainingSpec t;
  t.model = *find_model_preset("deepseek-v3");
  const ModelShape dsv3 = model_shape(resolve_training(t, cluster(64)));
  EXPECT_NEAR(total_params(dsv3, false) / 671e9, 1.0, 0.005);
  EXPECT_NEAR(total_params(dsv3, true) / 37e9, 1.0, 0.03);
  t.model = *find_model_preset("qwen3-235b-a22b");
  const ModelShape qwen = model_shape(resolve_training(t, cluster(64)));
  EXPECT_NEAR(total_params(qwen, false) / 235e9, 1.0, 0.005);
  EXPECT_NEAR(total_params(qwen, true) / 22e9, 1.0, 0.01);
  EXPECT_EQ(qwen.qd, 64 * 128);  // wider than the 4096 hidden
}

// Megatron-LM's FLOP count with MLA: per token and layer, 2 x the attention weights plus the
// scores and weighted values over the sequence at (qk head + v head) width.
TEST(MegatronGenerator, ModelFlopsCountLatentAttentionAndMultiTokenPrediction) {
  TrainingSpec t;
  t.model = *find_model_preset("deepseek-v3");
  t.model.mtp_layers = 0;
  t.parallel.dp = 0;  // all 64 GPUs
  t.parallel.ep = 8;
  t.batch.global = 64;
  const TrainingSpec r = resolve_training(t, cluster(8));
  const ModelShape z = model_shape(r);
  const double attn = 7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
  EXPECT_DOUBLE_EQ(z.attn_params(), attn);
  const double tokens = 64.0 * 4096;
  const double dense = 3 * 3 * 7168.0 * 18432, moe = 58 * (9 * 3 * 7168.0 * 2048 + 7168.0 * 256);
  const double per_token = 2 * (61 * attn + dense + moe) + 61 * 4096.0 * 2 * 128 * (192 + 128) + 2 * 7168.0 * 129280;
  EXPECT_NEAR(megatron_model_flops(r) / (3 * tokens * per_token), 1.0, 1e-12);
  // One MTP module: one more MoE layer, its 2h x h projection and the LM head again.
  t.model.mtp_layers = 1;
  const double mtp = 2 * (attn + 2 * 7168.0 * 7168 + 9 * 3 * 7168.0 * 2048 + 7168.0 * 256) +
                     4096.0 * 2 * 128 * (192 + 128) + 2 * 7168.0 * 129280;
  EXPECT_NEAR(megatron_model_flops(resolve_training(t, cluster(8))) / (3 * tokens * (per_token + mtp)), 1.0, 1e-12);
}

TrainingSpec small_moe(int tp, int dp, int ep, int experts, int top_k) {
  TrainingSpec t;
  t.model.layers = 2;
  t.model.hidden = 1024;
  t.model.heads = 16;
  t.model.seq_len = 1024;
  t.model.vocab = 32000;
  t.model.experts = experts;
  t.model.top_k = top_k;
  t.model.moe_ffn_hidden = 1024;
  t.parallel.tp = tp;
  t.parallel.dp = dp;
  t.parallel.ep = ep;
  t.batch.global = dp;
  return t;
}

const Op* first_op(const Workload& w, std::string_view label) {
  for (const Op& op : w.ranks[0].ops) {
    if (w.ranks[0].labels[op.label] == label) return &op;
  }
  return nullptr;
}

// Parallel folding: an expert group larger than dp takes in the tensor-parallel ranks.
TEST(MegatronGenerator, AnExpertGroupLargerThanDataParallelFoldsInTensorRanks) {
  const Workload w = generate_megatron(small_moe(2, 4, 8, 8, 2), cluster(1));
  const Op* d = first_op(w, "moe.dispatch.fwd");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(w.comms[d->comm].size(), 8);
}

// A deduplicating dispatcher (DeepEP) sends a token to each remote node once: with 16 experts
// over 2 nodes and 8 active, a token reaches both nodes (all but 1 in 12,870 of them), so it
// sends 2 copies where the all-to-all sends 8.
TEST(MegatronGenerator, DeduplicatedDispatchSendsEachTokenToANodeOnce) {
  TrainingSpec t = small_moe(1, 16, 16, 16, 8);
  const Workload plain = generate_megatron(t, cluster(2));
  t.moe_dispatch = MoeDispatch::deduplicated;
  const Workload dedup = generate_megatron(t, cluster(2));
  const double expected = 2 * (1 - 1.0 / 12870) / 8;
  EXPECT_NEAR(static_cast<double>(first_op(dedup, "moe.dispatch.fwd")->bytes.count()) /
                  static_cast<double>(first_op(plain, "moe.dispatch.fwd")->bytes.count()),
              expected, 1e-6);
  // Inside one node there is nothing to deduplicate.
  TrainingSpec one = small_moe(1, 8, 8, 16, 8);
  const int64_t all = first_op(generate_megatron(one, cluster(1)), "moe.dispatch.fwd")->bytes.count();
  one.moe_dispatch = MoeDispatch::deduplicated;
  EXPECT_EQ(first_op(generate_megatron(one, cluster(1)), "moe.dispatch.fwd")->bytes.count(), all);
}

// Overlapped, the expert exchanges hide behind the expert GEMMs: less exposed EP time and a
// shorter iteration for the same work.
TEST(MegatronGenerator, OverlappedExpertExchangesHideBehindCompute) {
  TrainingSpec t = small_moe(1, 16, 16, 16, 4);
  t.batch.global = 64;
  const topology::ClusterSpec c = cluster(2);
  const topology::GpuSpec& gpu = *topology::find_gpu_preset("h100-sxm");
  AlphaBetaCollectiveModel comm(c);
  ComputeModel cm(gpu);
  const ExecutionResult plain = Executor(cm, comm).run(generate_megatron(t, c));
  t.overlap_ep_comm = true;
  const ExecutionResult overlapped = Executor(cm, comm).run(generate_megatron(t, c));
  const auto ep = static_cast<size_t>(CommCategory::ep);
  EXPECT_GT(plain.breakdown.exposed[ep], Time::zero());
  EXPECT_LT(overlapped.breakdown.exposed[ep].seconds(), 0.5 * plain.breakdown.exposed[ep].seconds());
  EXPECT_LT(overlapped.iteration, plain.iteration);
}

// Routing imbalance: the busiest EP rank gets 1.5x the balanced tokens, and the exchanges wait for
// it, so the expert GEMMs' rows and the exchanged bytes grow 1.5x, and so does the iteration's
// expert work; the router and the attention do not change.
TEST(MegatronGenerator, RoutingImbalancePacesEveryRankAtTheBusiestOnesLoad) {
  TrainingSpec t = small_moe(1, 16, 16, 16, 4);
  t.batch.global = 64;
  const topology::ClusterSpec c = cluster(2);
  const Workload balanced = generate_megatron(t, c);
  t.moe_imbalance = 1.5;
  const Workload skewed = generate_megatron(t, c);
  const Op& fc1 = *first_op(balanced, "moe.expert_fc1.fwd");
  const Op& fc1_skewed = *first_op(skewed, "moe.expert_fc1.fwd");
  EXPECT_EQ(fc1_skewed.m, fc1.m * 3 / 2);
  EXPECT_NEAR(fc1_skewed.flops / fc1.flops, 1.5, 1e-9);
  EXPECT_NEAR(static_cast<double>(first_op(skewed, "moe.dispatch.fwd")->bytes.count()) /
                  static_cast<double>(first_op(balanced, "moe.dispatch.fwd")->bytes.count()),
              1.5, 1e-6);
  EXPECT_EQ(first_op(skewed, "moe.router.fwd")->flops, first_op(balanced, "moe.router.fwd")->flops);
  const topology::GpuSpec& gpu = *topology::find_gpu_preset("h100-sxm");
  AlphaBetaCollectiveModel comm(c);
  ComputeModel cm(gpu);
  EXPECT_GT(Executor(cm, comm).run(skewed).iteration, Executor(cm, comm).run(balanced).iteration);
}

// Multi-token prediction runs on the stage with the LM head: its projection and its second
// pass through the head, once per microbatch each way.
TEST(MegatronGenerator, MultiTokenPredictionRunsAfterTheHead) {
  TrainingSpec t = small_moe(1, 4, 4, 8, 2);
  t.parallel.pp = 2;
  t.model.mtp_layers = 1;
  t.batch.global = 16;  // 4 microbatches
  const Workload w = generate_megatron(t, cluster(1));
  EXPECT_EQ(count_label(w.ranks[0], "mtp.logits.fwd"), 0);
  EXPECT_EQ(count_label(w.ranks[1], "mtp.logits.fwd"), 4);
  EXPECT_EQ(count_label(w.ranks[1], "mtp.proj.bwd"), 4);
}

// --- every GPU a rank (GeneratorOptions::all_ranks) -----------------------------------------

int count_kind(const Workload& w, OpKind kind) {
  int n = 0;
  for (const RankGraph& r : w.ranks) {
    for (const Op& op : r.ops) n += op.kind == kind ? 1 : 0;
  }
  return n;
}

// One generated workload with every GPU a rank, checked against the representatives' one.
void expect_all_ranks_run_their_stage_program(const TrainingSpec& spec, const topology::ClusterSpec& c,
                                               GeneratorOptions o = {}) {
  const TrainingSpec t = resolve_training(spec, c);
  const ParallelSpec& p = t.parallel;
  const Placement pl(p, p.placement);
  const Workload rep = generate_megatron(t, c, o);
  o.all_ranks = true;
  const Workload all = generate_megatron(t, c, o);
  EXPECT_EQ(all.total_gpus, rep.total_gpus);
  EXPECT_EQ(all.model_flops, rep.model_flops);
  EXPECT_EQ(all.tokens, rep.tokens);

  // Every GPU once, GPU i at rank i, each for itself.
  const int gpus = p.tp * p.cp * p.dp * p.pp;
  ASSERT_EQ(static_cast<int>(all.ranks.size()), gpus);
  ASSERT_EQ(static_cast<int>(rep.ranks.size()), p.pp);
  for (int i = 0; i < gpus; ++i) {
    const RankGraph& r = all.ranks[static_cast<size_t>(i)];
    EXPECT_EQ(r.gpu, i);
    EXPECT_EQ(r.represents, 1);
    EXPECT_EQ(r.stage, pl.coord(r.gpu)[Dim::pp]);
  }

  // Each rank runs its stage representative's program, op for op.
  for (const RankGraph& r : all.ranks) {
    const RankGraph& s = rep.ranks[static_cast<size_t>(r.stage)];
    ASSERT_EQ(r.ops.size(), s.ops.size()) << "GPU " << r.gpu;
    EXPECT_EQ(r.deps, s.deps) << "GPU " << r.gpu;
    for (size_t i = 0; i < r.ops.size(); ++i) {
      const Op& a = r.ops[i];
      const Op& b = s.ops[i];
      ASSERT_TRUE(a.kind == b.kind && a.stream == b.stream && a.compute == b.compute &&
                  a.collective == b.collective && a.dtype == b.dtype && a.m == b.m && a.n == b.n &&
                  a.k == b.k && a.batch == b.batch && a.flops == b.flops && a.bytes == b.bytes &&
                  a.measured == b.measured && a.dep_begin == b.dep_begin && a.dep_count == b.dep_count &&
                  a.repeat == b.repeat && a.causal == b.causal && (a.comm >= 0) == (b.comm >= 0) &&
                  r.labels[a.label] == s.labels[b.label])
          << "GPU " << r.gpu << " op " << i << " (" << s.labels[b.label] << ")";
    }
  }

  // Collectives: on a communicator of the rank's own GPU, and every member issues the same
  // sequence on it, so that the n-th collective on a communicator is one rendezvous.
  using Issued = std::tuple<collectives::CollectiveKind, int64_t, int32_t>;
  std::vector<std::map<int, std::vector<Issued>>> issued(all.comms.size());  // comm -> GPU -> ops
  for (const RankGraph& r : all.ranks) {
    for (const Op& op : r.ops) {
      if (op.kind != OpKind::collective || op.comm < 0) continue;
      const auto& members = all.comms[static_cast<size_t>(op.comm)].ranks;
      ASSERT_NE(std::find(members.begin(), members.end(), r.gpu), members.end())
          << "GPU " << r.gpu << " " << r.labels[op.label];
      issued[static_cast<size_t>(op.comm)][r.gpu].emplace_back(op.collective, op.bytes.count(), op.repeat);
    }
  }
  for (size_t k = 0; k < all.comms.size(); ++k) {
    if (issued[k].empty()) continue;  // a pipeline pair's
    const auto& members = all.comms[k].ranks;
    ASSERT_EQ(issued[k].size(), members.size()) << "communicator " << k << ": not every member uses it";
    for (int g : members) EXPECT_EQ(issued[k][g], issued[k][members[0]]) << "communicator " << k << " GPU " << g;
  }

  // Receives: from the same (tp, cp, dp) coordinates one stage back (forward) or on (backward),
  // a send of the same size on the pair {sender, receiver}; every send is received once.
  std::map<std::pair<int, int32_t>, int> received;
  int recvs = 0;
  for (size_t i = 0; i < all.ranks.size(); ++i) {
    const RankGraph& r = all.ranks[i];
    for (const Op& op : r.ops) {
      if (op.kind != OpKind::recv) continue;
      ++recvs;
      ASSERT_GE(op.peer_rank, 0);
      ASSERT_GE(op.peer_op, 0);
      const RankGraph& from = all.ranks[static_cast<size_t>(op.peer_rank)];
      const Op& send = from.ops[static_cast<size_t>(op.peer_op)];
      ++received[{op.peer_rank, op.peer_op}];
      EXPECT_EQ(send.kind, OpKind::send);
      EXPECT_EQ(send.bytes, op.bytes);
      EXPECT_EQ(send.peer_rank, static_cast<int>(i));
      const bool fwd = r.labels[op.label] == "pp.recv.fwd";
      EXPECT_EQ(from.stage, (r.stage + (fwd ? p.pp - 1 : 1)) % p.pp) << r.labels[op.label];
      const Coord a = pl.coord(r.gpu), b = pl.coord(from.gpu);
      EXPECT_EQ(a[Dim::tp], b[Dim::tp]);
      EXPECT_EQ(a[Dim::cp], b[Dim::cp]);
      EXPECT_EQ(a[Dim::dp], b[Dim::dp]);
      ASSERT_GE(op.comm, 0);
      EXPECT_EQ(send.comm, op.comm);
      EXPECT_EQ(all.comms[static_cast<size_t>(op.comm)].ranks, (std::vector<int>{from.gpu, r.gpu}));
    }
  }
  EXPECT_EQ(recvs, count_kind(all, OpKind::send));
  for (const auto& [send, n] : received) EXPECT_EQ(n, 1);
  EXPECT_EQ(recvs, count_kind(rep, OpKind::recv) * p.tp * p.cp * p.dp);

  // The closed-form executor waits at a rendezvous only for simulated members: with all of them
  // simulated, running the same programs, the iteration takes as long as the representatives'.
  const collectives::AnalyticalCollectiveModel comm(c, collectives::CollectiveOptions{},
                                                    collectives::ModelParameters{});
  const ComputeModel cm(c.gpu, t.attention);
  const ExecutionResult one = Executor(cm, comm).run(rep);
  const ExecutionResult every = Executor(cm, comm).run(all);
  EXPECT_GT(one.iteration, Time::zero());
  EXPECT_NEAR(every.iteration.seconds() / one.iteration.seconds(), 1.0, 1e-9);
}

// Tensor, context, data and interleaved pipeline parallel: 2 x 2 x 2 x (2 x 2 chunks), ZeRO-1
// with the parameter gather overlapped.
TEST(MegatronGeneratorAllRanks, DenseTpCpDpAndInterleavedPipeline) {
  TrainingSpec t = gpt(2, 2, 2, 16);
  t.parallel.cp = 2;
  t.parallel.zero = 1;
  t.overlap_param_gather = true;
  t.overlap_grad_reduce = true;
  expect_all_ranks_run_their_stage_program(t, cluster(2));
  // Four stages, no interleaving, the tensor-parallel exchanges overlapped with the GEMMs.
  TrainingSpec plain = gpt(2, 4, 1, 16);
  plain.overlap_tp_comm = true;
  expect_all_ranks_run_their_stage_program(plain, cluster(2));
}

// MoE: an expert group of 4 that folds in the tensor ranks, across two stages; then ep = tp = 2,
// where the expert group is the tensor group's GPUs and the expert-DP group the DP group's, and
// they must still be communicators of their own.
TEST(MegatronGeneratorAllRanks, MixtureOfExpertsWithExpertParallel) {
  TrainingSpec t = small_moe(2, 4, 4, 8, 2);
  t.parallel.pp = 2;
  t.model.layers = 4;
  t.batch.global = 16;
  t.overlap_grad_reduce = true;
  expect_all_ranks_run_their_stage_program(t, cluster(2));

  t.parallel.ep = 2;
  expect_all_ranks_run_their_stage_program(t, cluster(2));
  const Workload all = generate_megatron(t, cluster(2), {.all_ranks = true});
  const RankGraph& r = all.ranks[5];
  std::map<std::string, int> comm_of;
  for (const Op& op : r.ops) {
    if (op.kind == OpKind::collective) comm_of[r.labels[op.label]] = op.comm;
  }
  ASSERT_TRUE(comm_of.count("attn.rs.fwd") && comm_of.count("moe.dispatch.fwd"));
  ASSERT_TRUE(comm_of.count("grad.sync") && comm_of.count("expert_grad.sync"));
  const auto ranks = [&](const std::string& label) { return all.comms[static_cast<size_t>(comm_of[label])].ranks; };
  EXPECT_EQ(ranks("attn.rs.fwd"), ranks("moe.dispatch.fwd"));
  EXPECT_NE(comm_of["attn.rs.fwd"], comm_of["moe.dispatch.fwd"]);
  EXPECT_EQ(ranks("grad.sync"), ranks("expert_grad.sync"));
  EXPECT_NE(comm_of["grad.sync"], comm_of["expert_grad.sync"]);
  // The representatives' workload shares them, as it always has.
  const Workload rep = generate_megatron(t, cluster(2));
  EXPECT_EQ(first_op(rep, "attn.rs.fwd")->comm, first_op(rep, "moe.dispatch.fwd")->comm);
}

// A deduplicating dispatcher's share comes from each rank's own expert group (here 16 GPUs
// over two nodes, the same share for every rank).
TEST(MegatronGeneratorAllRanks, DeduplicatedDispatchAcrossNodes) {
  TrainingSpec t = small_moe(1, 16, 16, 16, 8);
  t.moe_dispatch = MoeDispatch::deduplicated;
  expect_all_ranks_run_their_stage_program(t, cluster(2));
}

// ZeRO-3 / FSDP sharded over groups of 4 of a DP group of 8 (HSDP), across two stages, exact
// and with merged layers (8 a stage in 4 blocks); and ZeRO-1 over the same shard groups, with
// the parameters gathered after the step.
TEST(MegatronGeneratorAllRanks, HybridShardedDataParallel) {
  TrainingSpec t = gpt(1, 2, 1, 16, 16);
  t.parallel.zero = 3;
  t.parallel.shard_group = 4;
  expect_all_ranks_run_their_stage_program(t, cluster(2));
  expect_all_ranks_run_their_stage_program(t, cluster(2), {.layers_per_block = 0});
  t.parallel.zero = 1;
  t.overlap_param_gather = false;
  expect_all_ranks_run_their_stage_program(t, cluster(2));
}

}  // namespace
}  // namespace dtsim::workloads

namespace dtsim::workloads {
namespace {

// Every combination of the parallelisms and framework switches generates a graph the executor
// runs to completion (no deadlock, no unmatched receive) with a breakdown that adds up.
TEST(MegatronGenerator, EveryParallelismCombinationRunsToCompletion) {
  const topology::GpuSpec& gpu = *topology::find_gpu_preset("h100-sxm");
  int runs = 0;
  for (int tp : {1, 2}) {
    for (int pp : {1, 2}) {
      for (int cp : {1, 2}) {
        for (int vp : {1, 2}) {
          for (int zero : {0, 1, 3}) {
            for (bool moe : {false, true}) {
              for (bool flags : {false, true}) {
                if (vp > 1 && pp == 1) continue;
                TrainingSpec t;
                t.model.layers = 4;
                t.model.hidden = 256;
                t.model.heads = 8;
                t.model.kv_heads = 4;
                t.model.seq_len = 512;
                t.model.vocab = 1000;
                t.model.gated_ffn = flags;
                if (moe) {
                  t.model.experts = 4;
                  t.model.top_k = 2;
                  t.model.moe_ffn_hidden = 512;
                  t.model.shared_experts = flags ? 1 : 0;
                  t.model.first_dense_layers = 1;
                  // DeepSeek's features on the flagged runs: MLA, MTP, deduplicated and
                  // overlapped expert exchanges.
                  if (flags) {
                    t.model.kv_heads = 0;
                    t.model.kv_lora_rank = 64;
                    t.model.q_lora_rank = 96;
                    t.model.qk_rope_head_dim = 16;
                    t.model.mtp_layers = 1;
                    t.overlap_ep_comm = true;
                    t.moe_dispatch = MoeDispatch::deduplicated;
                  }
                }
                t.parallel = {tp, pp, 0, moe ? 2 : 1, cp, vp, flags, zero, "tp-cp-dp-pp"};
                t.batch.global = 16;
                t.activation_recompute = flags ? Recompute::full : Recompute::none;
                t.attention = flags ? Attention::unfused : Attention::flash3;
                t.overlap_grad_reduce = flags;
                t.overlap_param_gather = !flags;
                const topology::ClusterSpec c = [] {
                  topology::ClusterSpec x = *topology::find_node_preset("hgx-h100");
                  x.nodes = 2;
                  return x;
                }();
                const int dp = 16 / (tp * pp * cp);
                if (t.batch.global % dp != 0 || (vp > 1 && (t.batch.global / dp) % pp != 0)) continue;
                if (moe && dp % 2 != 0) continue;
                GeneratorOptions o;
                o.layers_per_block = flags ? 0 : 1;
                const Workload w = generate_megatron(t, c, o);
                AlphaBetaCollectiveModel comm(c);
                ComputeModel cm(gpu);
                const ExecutionResult r = Executor(cm, comm).run(w);
                const Time sum = r.breakdown.total();
                EXPECT_NEAR(sum.seconds(), r.iteration.seconds(), 1e-9)
                    << "tp" << tp << " pp" << pp << " cp" << cp << " vp" << vp << " zero" << zero << " moe" << moe;
                EXPECT_GT(r.iteration, Time::zero());
                ++runs;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 50);
}

}  // namespace
}  // namespace dtsim::workloads
