#include "workloads/memory_model.h"

#include <algorithm>

#include "workloads/megatron_generator.h"
#include "workloads/model_shape.h"

namespace dtsim::workloads {
namespace {

// CUDA context, cuBLAS workspaces, NCCL's per-communicator buffers and the caching allocator's
// slack: about what PyTorch reports reserved beyond its tensors on a Hopper training job.
constexpr double kRuntimeBytes = 2.0 * (1 << 30);

double element_bytes(topology::Dtype d) {
  return d == topology::Dtype::fp32 || d == topology::Dtype::tf32 ? 4 : 2;  // FP8 keeps BF16 copies
}

// Bytes an element of a saved GEMM input: FP8 training keeps the FP8 copy, NVFP4 the FP4 one
// with an FP8 scale per 16 elements.
double gemm_input_bytes(topology::Dtype d) {
  return d == topology::Dtype::fp8 ? 1 : d == topology::Dtype::fp4 ? 9.0 / 16 : element_bytes(d);
}

// Parameters of one layer held by one GPU: dense (split by tp) and routed experts (split by ep).
struct LayerParams {
  double dense = 0, expert = 0;
};

LayerParams layer_params(const ModelShape& z, const ParallelSpec& p, bool moe) {
  LayerParams lp;
  lp.dense = (z.attn_params() + (moe ? static_cast<double>(z.shared) * z.expert_params() : z.mlp_params())) / p.tp;
  if (moe) lp.expert = static_cast<double>(std::max<int64_t>(1, z.E / p.ep)) * z.expert_params();
  return lp;
}

// Bytes stored per token by one layer without recomputation, on one GPU, split into what tensor
// parallelism divides and what it replicates when sequence parallelism is off.
struct LayerActivations {
  double split = 0, replicated = 0;
};

LayerActivations layer_activations(const TrainingSpec& t, bool moe) {
  const ModelShape z = model_shape(t);
  const double h = static_cast<double>(z.h);
  const double f = static_cast<double>(z.f), fm = static_cast<double>(z.fm);
  const double B = element_bytes(t.precision);
  // FP8 training keeps the FP8 copy of each GEMM's input for its weight gradient (Transformer
  // Engine's linear layers): a byte an element for the four GEMM inputs. NVFP4 keeps the
  // Hadamard-transformed FP4 copy: half a byte, plus an FP8 scale per 16 elements.
  const double G = gemm_input_bytes(t.precision);
  LayerActivations a;
  // Inputs of the two layer norms and of the two input projections (QKV, FC1), and the two
  // dropout masks (a byte per element): what sequence parallelism shards and TP alone replicates.
  a.replicated = 2 * B * h + 2 * G * h + 2 * h;
  // Attention: Q, K, V and the output projection's input (and MLA's latents, the inputs of its
  // up-projections).
  a.split = B * static_cast<double>(z.qd + z.kd + z.vd) + G * static_cast<double>(z.a * z.dv + z.q_lora + z.kv_lora);
  // Unfused attention keeps the softmax output, its dropout mask and the dropout output for every
  // (query, key) pair; flash attention recomputes them, as does selective recomputation.
  if (t.attention == Attention::unfused && t.activation_recompute == Recompute::none) a.split += static_cast<double>(z.a * z.s) * (2 * B + 1);
  // FFN: FC1's output (both halves when gated) and the activation's output; an MoE layer does so
  // for each of the top_k experts a token visits (on the busiest rank moe_imbalance times as
  // many), plus the shared experts.
  const double per_ffn = B * (z.gated ? 2 : 1) * f + G * f;
  const double per_expert = B * (z.gated ? 2 : 1) * fm + G * fm + G * h;
  a.split += moe ? (static_cast<double>(z.topk) * t.moe_imbalance + static_cast<double>(z.shared)) *
                       per_expert
                 : per_ffn;
  return a;
}

double per_token(const LayerActivations& a, const ParallelSpec& p) {
  const bool sp = p.sequence_parallel && p.tp > 1;
  return a.split / p.tp + a.replicated / (sp ? p.tp : 1);
}

// Chunk-microbatches a stage holds activations for at the peak of Megatron's schedule: the
// warm-up forwards plus the one in flight (P - s for 1F1B; more when interleaved).
int in_flight(int stage, int P, int M, int vp) {
  const int total = M * vp;
  if (vp == 1) return std::min(M, P - stage);
  const int warm = M == P ? total : std::min(total, (P - stage - 1) * 2 + (vp - 1) * P);
  return std::min(total, warm + 1);
}

}  // namespace

double activation_bytes_per_token(const TrainingSpec& t, bool moe_layer) {
  const bool sp = t.parallel.sequence_parallel && t.parallel.tp > 1;
  if (t.activation_recompute == Recompute::full) {
    return element_bytes(t.precision) * t.model.hidden / (sp ? t.parallel.tp : 1);
  }
  if (t.activation_recompute == Recompute::every_other_matmul) {
    // Per-op selective checkpointing keeps the layer's input and FC2's output, Q, V and the
    // attention output, and FC1's gate half (FC1's output without a gate); an MoE layer keeps
    // its expert activations whole, as the generator does not recompute them. PyTorch's
    // checkpointing saves operator outputs as they are, BF16 also under Float8 linears.
    const ModelShape z = model_shape(t);
    const double B = 2;
    const int tp = t.parallel.tp;
    double split = B * static_cast<double>(z.qd + z.vd + z.a * z.dv);
    if (moe_layer) {
      const LayerActivations whole = layer_activations(t, true);
      const double attention = B * static_cast<double>(z.qd + z.kd + z.vd) +
                               gemm_input_bytes(t.precision) * static_cast<double>(z.a * z.dv + z.q_lora + z.kv_lora);
      split += std::max(0.0, whole.split - attention);
    } else {
      split += B * static_cast<double>(z.f);
    }
    return split / tp + 2 * B * static_cast<double>(z.h) / (sp ? tp : 1);
  }
  return per_token(layer_activations(t, moe_layer), t.parallel);
}

MemoryEstimate estimate_memory(const TrainingSpec& t, const topology::ClusterSpec& cluster) {
  const ModelSpec& m = t.model;
  const ParallelSpec& p = t.parallel;
  const ModelShape z = model_shape(t);
  const double vocab_params = static_cast<double>(z.V) * static_cast<double>(z.h) / p.tp;
  const double B = element_bytes(t.precision);
  const int P = p.pp, vp = p.vp, VS = P * vp;
  const int M = t.batch.global / (t.batch.micro * p.dp);
  const double tokens = static_cast<double>(t.batch.micro) * m.seq_len / p.cp;  // per microbatch
  // ZeRO shards dense over DP x CP, or over its shard_group (HSDP).
  const double shard = p.shard_group > 0 ? p.shard_group : static_cast<double>(p.dp) * p.cp;
  const double expert_shard = std::max(1.0, static_cast<double>(p.dp) / p.ep * p.cp * p.tp);
  const double master = B == 4 ? 8 : 12;  // Adam moments (+ fp32 master weights when training below fp32)
  const bool fsdp = p.zero >= 3;
  const std::vector<int> first = decoder_split(m.layers, m.mtp_layers, VS);
  // Per token, stored and (for a recomputed layer) working, for a dense and an MoE layer.
  const double stored_of[2] = {activation_bytes_per_token(t, false), activation_bytes_per_token(t, true)};
  const double working_of[2] = {per_token(layer_activations(t, false), p), per_token(layer_activations(t, true), p)};
  // Layers kept in BF16 under FP8/FP4 (TrainingSpec::bf16_layer) store their GEMM inputs in BF16.
  TrainingSpec wide = t;
  wide.precision = topology::Dtype::bf16;
  const double stored_wide[2] = {activation_bytes_per_token(wide, false), activation_bytes_per_token(wide, true)};

  MemoryEstimate best;
  best.capacity = static_cast<double>(cluster.gpu.hbm_capacity.count());
  for (int s = 0; s < P; ++s) {
    MemoryEstimate e;
    e.stage = s;
    e.capacity = best.capacity;
    e.runtime = kRuntimeBytes;
    double dense = 0, expert = 0, stored = 0, largest_layer = 0, largest_working = 0;
    double offloaded = 0, largest_offloaded = 0;  // per token: CPU offload's layers (host memory)
    int layers = 0;
    bool embedding = false, head = false;
    for (int c = 0; c < vp; ++c) {
      const int v = c * P + s;
      embedding = embedding || v == 0;
      head = head || v == VS - 1;
      for (int l = first[v]; l < first[v + 1]; ++l) {
        const LayerParams lp = layer_params(z, p, z.moe(l));
        dense += lp.dense;
        expert += lp.expert;
        largest_layer = std::max(largest_layer, lp.dense + lp.expert);
        const double saved = (t.bf16_layer(l, z.L) ? stored_wide : stored_of)[z.moe(l) ? 1 : 0];
        if (l < t.cpu_offload_layers) {
          offloaded += saved;
          largest_offloaded = std::max(largest_offloaded, saved);
        } else {
          stored += saved;
        }
        largest_working = std::max(largest_working, working_of[z.moe(l) ? 1 : 0]);
        ++layers;
      }
    }
    // The input embedding on the first stage, the output layer on the last (untied; Megatron keeps
    // a copy on the last stage even when they are tied).
    if (embedding) dense += vocab_params;
    if (head) dense += vocab_params;
    // Multi-token-prediction modules on the last stage: one more layer of the last kind and the
    // 2 x hidden -> hidden projection each.
    const bool mtp_moe = z.mtp_moe();
    if (head && z.mtp > 0) {
      const LayerParams lp = layer_params(z, p, mtp_moe);
      dense += static_cast<double>(z.mtp) * (lp.dense + static_cast<double>(2 * z.h * z.h) / p.tp);
      expert += static_cast<double>(z.mtp) * lp.expert;
      // Its activations counted with every chunk-microbatch in flight: an upper bound.
      stored += static_cast<double>(z.mtp) * stored_of[mtp_moe ? 1 : 0] * vp;
    }
    // ZeRO-1 shards the optimizer states, ZeRO-2 the gradients too, ZeRO-3/FSDP the weights too.
    auto held = [&](int from_stage) {
      return dense / (p.zero >= from_stage ? shard : 1) + expert / (p.zero >= from_stage ? expert_shard : 1);
    };
    e.weights = B * held(3);
    e.gradients = B * held(2);
    e.optimizer = master * held(1);

    // Activations: each chunk-microbatch in flight holds its chunk's layers (the stage's average).
    e.microbatches_in_flight = in_flight(s, P, M, vp);
    e.recompute = t.activation_recompute;
    const double per_chunk = layers > 0 ? stored / vp : 0;
    e.activations = e.microbatches_in_flight * per_chunk * tokens;
    // CPU offload: the offloaded layers' activations live in host memory, but for the layer whose
    // copy is in flight (Transformer Engine double-buffers one layer); pipeline parallelism is 1.
    e.activations += largest_offloaded * tokens;
    e.offloaded = e.microbatches_in_flight * offloaded * tokens;
    const bool sp = p.sequence_parallel && p.tp > 1;
    if (embedding) e.activations += e.microbatches_in_flight * tokens * B * static_cast<double>(z.h) / (sp ? p.tp : 1) / vp;

    // Working set on top of what is stored, all at once at the stage's worst moment.
    if (fsdp && !t.fsdp_reshard_after_forward) {
      e.transient += 2 * B * (dense + expert);  // the stage's gathered parameters and their accumulated gradients
    } else if (fsdp) {
      e.transient += 3 * B * largest_layer;  // this layer and the prefetched one, this one's gradients
    }
    if (t.activation_recompute == Recompute::full || t.activation_recompute == Recompute::every_other_matmul) {
      e.transient += largest_working * tokens;  // the layer being recomputed, whole
    }
    // The logits and their FP32 copy for a fused loss; unfused (PyTorch's cross-entropy on an FP32
    // copy), at the backward's start: the kept FP32 log-softmax, its gradient and the one it returns.
    const double per_logit = t.fused_cross_entropy ? B + 4.0 : 12.0;
    if (head) e.transient += per_logit * tokens * static_cast<double>(z.V) / p.tp;
    if (s == 0 || e.total() > best.total()) best = e;
  }
  return best;
}

}  // namespace dtsim::workloads
