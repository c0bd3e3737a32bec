// WorkloadSpec: what the scenario asks the cluster to run: a collective sweep (nccl-tests style),
// a hybrid-parallel training job generated from a model description, or recorded traces.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/collective.h"
#include "sim/units.h"
#include "topology/cluster_spec.h"

namespace dtsim::workloads {

enum class WorkloadKind { collective_sweep, training, trace, dlrm };

struct CollectiveSweepSpec {
  collectives::CollectiveKind collective = collectives::CollectiveKind::all_reduce;
  Bytes min_bytes{8};
  Bytes max_bytes = Bytes::gib(8);
  int step_factor = 2;
  topology::Dtype dtype = topology::Dtype::fp32;
  int ranks = 0;                     // 0: every GPU of the cluster
  // GPUs one host thread launches each iteration for (nccl-tests -g): iterations run back to back,
  // so one takes at least this many host launches (host_launch_floor, collective_sweep.h).
  int gpus_per_thread = 1;
};

struct ModelSpec {
  std::string preset;                // catalog name, e.g. "gpt3-175b"; empty for a custom model
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;                  // 0: same as heads
  int ffn_hidden = 0;                // 0: 4 * hidden
  int seq_len = 2048;
  int vocab = 50257;
  int experts = 1;                   // routed experts per MoE layer; 1: dense
  int top_k = 1;
  int moe_ffn_hidden = 0;            // FFN width of one expert; 0: ffn_hidden
  int shared_experts = 0;            // always-active experts (DeepSeek)
  int first_dense_layers = 0;        // leading layers with a dense FFN in an MoE model
  bool gated_ffn = false;            // SwiGLU-style FFN (Llama, Mixtral): three weight matrices
  // Attention head widths. head_dim is a query/key head's width (0: hidden / heads; Qwen3 and
  // gpt-oss set it apart from hidden / heads); v_head_dim a value head's (0: head_dim).
  int head_dim = 0;
  int v_head_dim = 0;
  // Multi-head latent attention (DeepSeek-V2/V3, Kimi K2): with kv_lora_rank > 0 keys and values
  // are projected up from a kv_lora_rank latent (plus a shared qk_rope_head_dim rotary key), and
  // queries from a q_lora_rank latent (0: straight from the hidden state). A query/key head is
  // head_dim + qk_rope_head_dim wide.
  int kv_lora_rank = 0;
  int q_lora_rank = 0;
  int qk_rope_head_dim = 0;
  // Multi-token prediction (DeepSeek-V3): after the LM head, each of mtp_layers modules combines
  // the hidden state with the next token's embedding (a 2 x hidden -> hidden projection), runs
  // one more transformer layer (an MoE layer in an MoE model) and the shared LM head again.
  int mtp_layers = 0;
  bool mla() const { return kv_lora_rank > 0; }
};

struct ParallelSpec {
  int tp = 1, pp = 1, dp = 1, ep = 1, cp = 1, vp = 1;
  bool sequence_parallel = true;
  int zero = 0;                      // 0 none, 1/2/3 ZeRO stage; FSDP is zero 3
  // Rank-to-GPU order, innermost first: consecutive GPUs (one node) hold the first dimension.
  std::string placement = "tp-cp-dp-pp";
  // Ranks of the DP x CP group one ZeRO/FSDP shard spans (PyTorch HSDP, Megatron's distributed
  // optimizer instances): states are sharded over shard_group consecutive ranks and replicated
  // over the dp x cp / shard_group copies, whose gradients are then all-reduced. 0: the whole
  // group.
  int shard_group = 0;
};

struct BatchSpec {
  int global = 0;                    // sequences per iteration
  int micro = 1;                     // sequences per micro-batch
};

// Activation recomputation: none keeps every activation; selective recomputes only the attention
// core in the backward pass (Megatron's --recompute-activations; free with flash attention, which
// recomputes the scores anyway); full reruns each layer's forward pass before its backward;
// every_other_matmul (scenario value `op`) is torchtitan's per-op selective checkpointing: a layer
// keeps its input, the attention output and every second matmul's output in forward order (Q, V,
// FC1's gate half, FC2), and reruns the others (K, the output projection, FC1's up half) and its
// elementwise ops before its backward.
// fit (scenario value `auto`) takes the first of none, selective, full whose memory estimate fits
// the GPU's HBM (full when none does); resolve_training replaces it with the one it took.
enum class Recompute { none, selective, full, fit, every_other_matmul };
inline std::string_view name(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
    case Recompute::fit: return "auto";
    case Recompute::every_other_matmul: return "op";
  }
  return "none";
}

// How attention runs. unfused: two batched GEMMs around a softmax that materialises the s x s
// scores (Megatron-LM 2021). The fused kernels by generation: flash1 (FlashAttention 1 and the
// Triton kernel llm-foundry used in 2023), flash2 (FlashAttention-2, tuned for Ampere; what
// PyTorch's SDPA runs), flash3 (Hopper-native: FlashAttention-3, cuDNN fused attention as
// Transformer Engine picks it; on GPUs before Hopper it runs as flash2).
enum class Attention { unfused, flash1, flash2, flash3 };

// How MoE tokens reach their experts across nodes. alltoall: NCCL's all-to-all, one copy per
// (token, expert) pair, so a token bound for k experts on another node crosses the network up
// to k times (Megatron-Core's alltoall dispatcher). deduplicated: a token crosses to each remote
// node once and is fanned out to that node's experts over NVLink (DeepEP, Megatron-Core's flex
// dispatcher).
enum class MoeDispatch { alltoall, deduplicated };

struct TrainingSpec {
  ModelSpec model;
  ParallelSpec parallel;
  BatchSpec batch;
  topology::Dtype precision = topology::Dtype::bf16;
  int iterations = 2;
  Recompute activation_recompute = Recompute::none;
  // What the framework overlaps and how it computes attention: these differ between releases
  // (Megatron-LM 2021 neither fused attention nor overlapped the gradient all-reduce).
  Attention attention = Attention::flash3;
  // FP8 only: the casts to FP8 fused into the kernels before each GEMM (Transformer Engine's
  // LayerNormLinear and fused activations, 2024 on); false runs a cast (and for the backward a
  // transpose) kernel per GEMM input, as the 2023 recipes that wrapped only the linear layers did.
  bool fp8_fused_casts = true;
  // The loss: true is a fused (vocab-parallel) cross-entropy kernel, as Megatron's, reading the
  // logits and keeping one FP32 copy; false is PyTorch's F.cross_entropy on an FP32 copy of the
  // logits (torchtitan): cast, log-softmax kept for the backward, its incoming gradient and the
  // one it returns, each a pass over the logits.
  bool fused_cross_entropy = true;
  // A layer's elementwise work: true runs it fused (Transformer Engine, torch.compile); false is
  // PyTorch eager, one kernel and one pass over HBM per operator (docs/training.md, "FSDP stacks").
  bool fused_elementwise = true;
  // FP8 only: the sequence-parallel all-gathers before the column-parallel GEMMs carry their FP8
  // inputs, a byte an element (torchtitan's Float8ColwiseParallel under tensorwise scaling); the
  // reduce-scatters and every backward collective stay BF16.
  bool fp8_tp_all_gather = false;
  // Context parallelism as PyTorch's ring attention runs it under torchtitan's Llama
  // (torch.distributed.tensor.experimental.context_parallel): the model repeats K and V to every
  // query head before SDPA, so the ring moves the repeated heads, and the backward accumulates and
  // passes dK and dV in FP32 (its convert_to_f32). False: K and V at their own heads and their
  // gradients at the training precision (Megatron-Core's and Transformer Engine's attention).
  bool cp_torch_ring = false;
  // FP8/FP4 only: the first and last decoder layers whose GEMMs stay in BF16 (Megatron's
  // --first-last-layers-bf16 with --num-layers-at-start/end-in-bf16; Megatron-Bridge's NVFP4
  // recipe for Nemotron 3 Super keeps its last 14 so). Their saved GEMM inputs stay BF16 too.
  int bf16_layers_at_start = 0;
  int bf16_layers_at_end = 0;
  // Whether decoder layer `l` (of `layers`) runs its GEMMs in BF16 under a lower precision.
  bool bf16_layer(int64_t l, int64_t layers) const {
    return topology::quantized(precision) && (l < bf16_layers_at_start || l >= layers - bf16_layers_at_end);
  }
  // Activations of the first this-many decoder layers go to host memory after their forward pass
  // and come back before their backward (Megatron's --cpu-offloading-num-layers, Transformer
  // Engine's CPU offload; without pipeline parallelism, as Megatron allows it). The copies run
  // beside compute over the GPU's host link (topology::host_link_bandwidth).
  int cpu_offload_layers = 0;
  bool overlap_grad_reduce = true;   // gradient reduction bucketed under the last backward pass
  bool overlap_param_gather = true;  // ZeRO/FSDP parameter all-gather prefetched under compute
  bool overlap_tp_comm = false;      // TP all-gather/reduce-scatter pipelined with their GEMMs (SP only)
  // ZeRO-3/FSDP: false keeps each block's gathered parameters from its first microbatch's forward
  // to its last microbatch's backward (one all-gather a step), their gradients accumulating
  // unsharded, reduce-scattered once after the last backward: FSDP2's reshard_after_forward=False,
  // which torchtitan sets under pipeline parallelism, where PyTorch's pipelining also defers the
  // gradient reduction to the last microbatch.
  bool fsdp_reshard_after_forward = true;
  // MoE: the dispatch and combine all-to-alls run beside expert computation instead of before and
  // after it (Megatron-Core's --overlap-moe-expert-parallel-comm, DeepSeek's DualPipe).
  bool overlap_ep_comm = false;
  MoeDispatch moe_dispatch = MoeDispatch::alltoall;
  // MoE routing imbalance: the busiest expert-parallel rank's routed tokens over the balanced
  // share (max / mean). The exchanges wait for that rank, so every rank's expert work and
  // exchanges are priced at its load. 1: balanced, as benchmarks force it; at most ep.
  double moe_imbalance = 1.0;
  int64_t dp_bucket_params = 40'000'000;  // gradient bucket size in parameters (Megatron default)
};

struct TraceSpec {
  std::string format = "chakra";
  std::string path;                  // prefix: PATH.0.et, PATH.1.et, ...
};

// A DLRM-style recommendation model (workload.kind: dlrm, dlrm_generator.h): embedding tables
// spread over the GPUs (model parallel), bottom and top MLPs replicated (data parallel).
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

struct WorkloadSpec {
  WorkloadKind kind = WorkloadKind::collective_sweep;
  CollectiveSweepSpec sweep;
  TrainingSpec training;
  TraceSpec trace;
  DlrmSpec dlrm;
  // How a generated training run lays out its layers (GeneratorOptions::layers_per_block): 1 is
  // exact, N merges N consecutive layers of a pipeline chunk into one block of repeated ops, 0
  // (`auto`, for large sweeps) one block a chunk, four under FSDP.
  int layers_per_block = 1;
};

}  // namespace dtsim::workloads
