#include "workloads/megatron_generator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "topology/node_template.h"
#include "workloads/memory_model.h"
#include "workloads/model_catalog.h"
#include "workloads/model_shape.h"
#include "workloads/placement.h"

namespace dtsim::workloads {
namespace {

using collectives::CollectiveKind;
constexpr uint32_t kNone = UINT32_MAX;

int64_t bytes_per_element(topology::Dtype d) {
  switch (d) {
    case topology::Dtype::fp32:
    case topology::Dtype::tf32: return 4;
    default: return 2;  // FP8 recipes keep activations and communication in BF16
  }
}

// A rule of the training spec, naming the workload key (below `workload.`) it blames.
void require(bool ok, const char* key, const std::string& what) {
  if (!ok) throw TrainingSpecError(key, what);
}

// What a communicator is for: with every rank simulated, groups of different roles stay apart
// even when their members are the same GPUs.
enum class CommRole : uint8_t { tp, cp, ep, dp, shard, replicas, expert_dp, pp };

// The workload's communicators, handed out by index. For one representative rank a stage they
// are shared by member list alone (Workload::add_comm). With every rank simulated, the executor
// matches a collective across a group's members by (communicator index, the op's number on that
// communicator), so each member building the same group must get the same index, and groups of
// different roles must not share one: ops on them are numbered independently. There they are
// interned by (role, members in the order built); groups are built in coordinate order, the same
// from every member, and a send's pair is ordered sender first.
class CommTable {
 public:
  CommTable(Workload& w, bool by_role) : w_(w), by_role_(by_role) {}

  int add(CommRole role, collectives::Communicator c) {
    if (!by_role_) return w_.add_comm(std::move(c));
    Key key{role, c.ranks};
    const auto [it, fresh] = index_.try_emplace(std::move(key), static_cast<int>(w_.comms.size()));
    if (fresh) w_.comms.push_back(std::move(c));
    return it->second;
  }

 private:
  struct Key {
    CommRole role;
    std::vector<int> ranks;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = static_cast<uint64_t>(k.role) + 0x9E3779B97F4A7C15ULL;
      for (int g : k.ranks) h = (h ^ static_cast<uint64_t>(static_cast<uint32_t>(g))) * 0x100000001B3ULL;
      return static_cast<size_t>(h);
    }
  };
  Workload& w_;
  bool by_role_;
  std::unordered_map<Key, int, KeyHash> index_;
};

// One rank's program under construction: a pipeline stage's, as its rank (tp, cp, dp) runs it.
// Its sends and receives name the ranks of the previous and the next stage it exchanges with.
class StageBuilder {
 public:
  StageBuilder(const TrainingSpec& t, const ModelShape& z, CommTable& comms, RankGraph& r, int prev_rank,
               int next_rank, const Placement& pl, int layers_per_block, int gpus_per_node,
               const topology::GpuSpec& cluster_gpu)
      : t_(t), z_(z), r_(r), prev_rank_(prev_rank), next_rank_(next_rank), lpb_(layers_per_block) {
    const ParallelSpec& p = t.parallel;
    tp_ = p.tp;
    cp_ = p.cp;
    ep_ = p.ep;
    sp_ = p.sequence_parallel && tp_ > 1;
    B_ = bytes_per_element(t.precision);
    gemm_dtype_ = t.precision;
    // FP8 and FP4 recipes quantize only the GEMM inputs: attention, elementwise work and
    // communication stay in BF16 (Transformer Engine's NVFP4 recipe has no FP4 attention).
    act_dtype_ = topology::quantized(t.precision) ? topology::Dtype::bf16 : t.precision;
    T_ = static_cast<int64_t>(t.batch.micro) * z.s / cp_;
    Tsp_ = sp_ ? T_ / tp_ : T_;
    if (t.cpu_offload_layers > 0) {
      // A layer kept in BF16 under FP8/FP4 saves its GEMM inputs in BF16, as the memory model counts.
      const Bandwidth host = topology::host_link_bandwidth(cluster_gpu);
      TrainingSpec wide = t;
      wide.precision = topology::Dtype::bf16;
      for (int bf16 = 0; bf16 < 2; ++bf16) {
        for (int moe = 0; moe < 2; ++moe) {
          const double bytes = activation_bytes_per_token(bf16 == 1 ? wide : t, moe == 1) * static_cast<double>(T_);
          offload_time_[bf16][moe] = host.transfer_time(Bytes(static_cast<int64_t>(bytes)));
        }
      }
    }
    const int gpu = r.gpu;
    if (tp_ > 1) tp_comm_ = comms.add(CommRole::tp, pl.group(Dim::tp, gpu));
    if (cp_ > 1) cp_comm_ = comms.add(CommRole::cp, pl.group(Dim::cp, gpu));
    if (ep_ > 1) {
      auto epc = pl.ep_group(gpu, ep_);
      if (t.moe_dispatch == MoeDispatch::deduplicated) dispatch_share_ = deduplicated_share(epc, gpus_per_node);
      ep_comm_ = comms.add(CommRole::ep, std::move(epc));
    }
    // Dense gradients are reduced over every replica of this shard: DP x CP.
    collectives::Communicator dpc;
    Coord c = pl.coord(gpu);
    for (int di = 0; di < p.dp; ++di) {
      for (int ci = 0; ci < cp_; ++ci) {
        c[Dim::dp] = di;
        c[Dim::cp] = ci;
        dpc.ranks.push_back(pl.gpu(c));
      }
    }
    dp_size_ = dpc.size();
    // HSDP: ZeRO/FSDP states sharded over shard_group consecutive members of the DP x CP group
    // (one node's, with TP innermost) and replicated over the others; the replicas all-reduce
    // their shards' gradients.
    shard_size_ = dp_size_;
    if (p.shard_group > 0 && p.shard_group < dp_size_) {
      shard_size_ = p.shard_group;
      const auto at =
          static_cast<int>(std::find(dpc.ranks.begin(), dpc.ranks.end(), gpu) - dpc.ranks.begin());
      collectives::Communicator shard, replicas;
      for (int i = 0; i < shard_size_; ++i)
        shard.ranks.push_back(dpc.ranks[static_cast<size_t>(at / shard_size_ * shard_size_ + i)]);
      for (int j = 0; j < dp_size_ / shard_size_; ++j)
        replicas.ranks.push_back(
            dpc.ranks[static_cast<size_t>(j * shard_size_ + at % shard_size_)]);
      if (shard_size_ > 1) shard_comm_ = comms.add(CommRole::shard, std::move(shard));
      replica_comm_ = comms.add(CommRole::replicas, std::move(replicas));
    }
    if (dp_size_ > 1) dp_comm_ = comms.add(CommRole::dp, std::move(dpc));
    if (shard_size_ == dp_size_) shard_comm_ = dp_comm_;
    if (z.E > 1) {
      auto edp = pl.expert_dp_group(gpu, ep_);
      edp_size_ = edp.size();
      if (edp_size_ > 1) edp_comm_ = comms.add(CommRole::expert_dp, std::move(edp));
    }
  }

  // The share of an all-to-all's bytes a deduplicating dispatcher still sends when the EP group
  // spans N nodes, each holding E/N of the experts: a token's top_k experts (distinct, uniformly
  // routed) sit on N (1 - P0) nodes on average, P0 = C(E - E/N, k) / C(E, k) the chance that a
  // node holds none of them, and it crosses to each once instead of once per expert. Traffic
  // inside a node is scaled alike, which leaves the NVLink side, rarely the bottleneck, light.
  double deduplicated_share(const collectives::Communicator& ep, int gpus_per_node) const {
    std::vector<int> nodes;
    for (int g : ep.ranks) nodes.push_back(g / std::max(1, gpus_per_node));
    std::sort(nodes.begin(), nodes.end());
    const auto n = static_cast<double>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
    if (n <= 1 || z_.topk <= 1) return 1.0;
    const double e = static_cast<double>(z_.E), per_node = e / n;
    double p0 = 1;
    for (int64_t i = 0; i < z_.topk; ++i) p0 *= std::max(0.0, (e - per_node - i) / (e - i));
    return std::min(1.0, n * (1 - p0) / static_cast<double>(z_.topk));
  }

  // --- op makers -------------------------------------------------------------------------
  // Labels are interned once per (literal, recompute) pair: generation runs in sweeps, and
  // building and comparing strings per op would dominate it.
  uint32_t lab(std::string_view label) {
    const auto key = std::make_tuple(static_cast<const void*>(label.data()), label.size(), recompute_);
    auto it = label_ids_.find(key);
    if (it != label_ids_.end()) return it->second;
    const uint32_t id = recompute_ ? r_.label(std::string(label) + ".recompute") : r_.label(label);
    label_ids_.emplace(key, id);
    return id;
  }
  uint32_t chain(Op op, uint32_t prev, std::string_view label, int rep) {
    op.label = lab(label);
    op.repeat = rep;
    if (prev == kNone) return r_.add(op);
    return r_.add(op, {prev});
  }
  uint32_t gemm(std::string_view label, uint32_t prev, int rep, int64_t m, int64_t n, int64_t k,
                int64_t batch = 1, double flop_scale = 1) {
    last_gemm_input_ = prev;
    if (gemm_dtype_ == topology::Dtype::fp8 && !t_.fp8_fused_casts && batch == 1) {
      // Unfused FP8 recipe: a kernel casts each BF16 input to FP8 (read 2 + write 1 bytes an
      // element) before the GEMM; the backward also casts the output gradient and transposes
      // the FP8 input, weight and gradient (read 1 + write 1) for the wgrad and dgrad GEMMs.
      const int64_t bytes = flop_scale > 1 ? 5 * m * n + 2 * m * k + 2 * k * n : 3 * m * k + 3 * k * n;
      prev = elem("fp8.cast", prev, rep, bytes);
    }
    if (gemm_dtype_ == topology::Dtype::fp4 && batch == 1) {
      // NVFP4 (Transformer Engine's recipe) adds to what an FP8 recipe does a random Hadamard
      // transform of the weight-gradient GEMM's operands before they are quantized column-wise:
      // a kernel of its own that reads the BF16 input (forward, kept for the backward) or output
      // gradient (backward) and writes 4-bit values plus an FP8 scale per 16 (2 + 9/16 bytes an
      // element). It is memory bound, so unlike the GEMM it does not speed up with FP4's peak.
      const int64_t operand = flop_scale > 1 ? m * n : m * k;
      prev = elem("fp4.hadamard_quantize", prev, rep, operand * 41 / 16);
    }
    Op op;
    op.compute = ComputeKind::gemm;
    op.dtype = gemm_dtype_;
    op.m = m;
    op.n = n;
    op.k = k;
    op.batch = batch;
    op.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
               static_cast<double>(batch) * flop_scale;
    op.bytes = Bytes((m * k + k * n + m * n) * batch * B_ * static_cast<int64_t>(flop_scale));
    const uint32_t g = chain(op, prev, label, rep);
    if (pending_gather_ == kNone) return g;
    // An all-gather pipelined with this GEMM: the next op waits for both.
    const uint32_t ag = pending_gather_;
    pending_gather_ = kNone;
    return wait_all(g, ag);
  }
  uint32_t elem(std::string_view label, uint32_t prev, int rep, int64_t bytes) {
    Op op;
    op.compute = ComputeKind::elementwise;
    op.dtype = act_dtype_;
    op.bytes = Bytes(bytes);
    return chain(op, prev, label, rep);
  }
  uint32_t coll(std::string_view label, uint32_t prev, int rep, Stream st, CollectiveKind kind,
                int comm, int64_t bytes) {
    if (comm < 0) return prev;
    return chain(Op::collective_on(st, kind, comm, act_dtype_, Bytes(bytes)), prev, label, rep);
  }
  // Width of the K and V a token carries through the CP exchange: the KV heads, or with PyTorch's
  // ring attention under torchtitan (cp_torch_ring) K and V repeated to every query head, as its
  // SDPA takes them.
  int64_t cp_kv_width() const {
    return t_.cp_torch_ring && !z_.mla() ? z_.a * (z_.dqk + z_.dv) : z_.kd + z_.vd;
  }
  uint32_t attention(bool fwd, uint32_t prev, int rep) {
    const int64_t heads = z_.a / tp_;
    const int64_t sq = z_.s / cp_;
    const int64_t b = t_.batch.micro;
    if (t_.attention != Attention::unfused) {
      Op op;
      op.compute = fwd ? ComputeKind::attention_fwd : ComputeKind::attention_bwd;
      op.dtype = act_dtype_;
      op.batch = b * heads;
      op.m = sq;
      op.n = z_.s;
      op.k = z_.dqk;
      // Causal: a fused kernel skips the masked half of the score matrix.
      op.flops = static_cast<double>(b * sq) * static_cast<double>(z_.s) * z_.core_flops_per_key() / tp_ * 0.5 *
                 (fwd ? 1.0 : 2.5);
      op.bytes = Bytes(2 * b * sq * heads * (z_.dqk + z_.dv) * B_ * (fwd ? 1 : 2));
      return chain(op, prev, fwd ? "attn.core.fwd" : "attn.core.bwd", rep);
    }
    // Unfused: two batched GEMMs around a softmax that writes and rereads the full s x s scores.
    const double scale = fwd ? 1.0 : 2.0;
    const int64_t scores = b * heads * sq * z_.s;
    uint32_t x = gemm(fwd ? "attn.qk.fwd" : "attn.qk.bwd", prev, rep, sq, z_.s, z_.dqk, b * heads, scale);
    x = elem(fwd ? "attn.softmax.fwd" : "attn.softmax.bwd", x, rep, scores * B_ * (fwd ? 4 : 6));
    return gemm(fwd ? "attn.av.fwd" : "attn.av.bwd", x, rep, sq, z_.dv, z_.s, b * heads, scale);
  }
  // The Q, K and V projections: one fused GEMM (grouped-query attention), or MLA's projections
  // down to the latents (replicated over TP, as Megatron-Core runs them) and back up per head.
  uint32_t qkv(bool fwd, uint32_t x, int rep) {
    const double scale = fwd ? 1 : 2;
    auto L = [fwd](const char* f, const char* b) { return std::string_view(fwd ? f : b); };
    if (!z_.mla()) return gemm(L("attn.qkv.fwd", "attn.qkv.bwd"), x, rep, T_, (z_.qd + z_.kd + z_.vd) / tp_, z_.h, 1, scale);
    if (z_.q_lora > 0) {
      x = gemm(L("attn.q_down.fwd", "attn.q_down.bwd"), x, rep, T_, z_.q_lora, z_.h, 1, scale);
      x = gemm(L("attn.q_up.fwd", "attn.q_up.bwd"), x, rep, T_, z_.qd / tp_, z_.q_lora, 1, scale);
    } else {
      x = gemm(L("attn.q.fwd", "attn.q.bwd"), x, rep, T_, z_.qd / tp_, z_.h, 1, scale);
    }
    x = gemm(L("attn.kv_down.fwd", "attn.kv_down.bwd"), x, rep, T_, z_.kv_lora + z_.dr, z_.h, 1, scale);
    return gemm(L("attn.kv_up.fwd", "attn.kv_up.bwd"), x, rep, T_, z_.kv_up_width() / tp_, z_.kv_lora, 1, scale);
  }
  // With overlap_tp_comm (Megatron's --tp-comm-overlap, SP only) the all-gather runs beside the
  // GEMM that consumes it and the reduce-scatter beside the GEMM that produces it, chunk by chunk:
  // the pair takes about the longer of the two (plus the overlap slowdown on the GEMM).
  uint32_t tp_enter(std::string_view label, uint32_t prev, int rep, bool fp8_input = false) {
    if (!sp_) return prev;
    const int64_t element = fp8_input && t_.fp8_tp_all_gather && gemm_dtype_ == topology::Dtype::fp8 ? 1 : B_;
    const uint32_t ag = coll(label, prev, rep, Stream::tp, CollectiveKind::all_gather, tp_comm_, T_ * z_.h * element);
    if (!t_.overlap_tp_comm) return ag;
    pending_gather_ = ag;
    return prev;
  }
  uint32_t tp_exit(std::string_view label, uint32_t prev, int rep) {
    if (tp_ == 1) return prev;
    if (sp_ && t_.overlap_tp_comm && prev + 1 == r_.ops.size() && r_.ops[prev].compute == ComputeKind::gemm) {
      const uint32_t rs = coll(label, last_gemm_input_, rep, Stream::tp, CollectiveKind::reduce_scatter, tp_comm_,
                               T_ * z_.h * B_);
      return wait_all(prev, rs);
    }
    return coll(label, prev, rep, Stream::tp, sp_ ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce,
                tp_comm_, T_ * z_.h * B_);
  }

  // --- elementwise work ----------------------------------------------------------------------
  // Bytes an element of a layer norm moves. Fused: read and write once. PyTorch eager (Llama's
  // RMSNorm as torchtitan writes it): a cast to FP32, the square, the mean, the scaling, the cast
  // back and the weight's product, each a kernel reading and writing HBM. A backward moves twice
  // its forward's bytes (the gradient and the saved input in, a gradient out).
  int64_t norm_bytes(bool fwd) const {
    const int64_t f = t_.fused_elementwise ? 2 * B_ : 4 * B_ + 28;
    return fwd ? f : (t_.fused_elementwise ? 3 * B_ : 2 * f);
  }
  // The FFN's activation, all its elements: fused, read the one or two inputs and write the output;
  // eager and gated, SiLU (read, write) and the gate's product (read two, write one) apart.
  int64_t act_bytes(bool fwd) const {
    const int64_t passes = t_.fused_elementwise || !z_.gated ? (fwd ? (z_.gated ? 3 : 2) : (z_.gated ? 5 : 3))
                                                             : (fwd ? 5 : 10);
    return passes * T_ * z_.f / tp_ * B_;
  }
  // Eager only: rotary embedding of Q and K in FP32 through a complex product (cast in, multiply,
  // cast out), and grouped-query attention's K and V repeated to every query head as copies.
  // Fused stacks apply the rotation inside a neighbouring kernel and attend the shared heads.
  uint32_t eager_attention_prep(bool fwd, uint32_t x, int rep) {
    if (t_.fused_elementwise || z_.mla()) return x;
    const int64_t rope = (2 * B_ + 16) * T_ * (z_.qd + z_.kd) / tp_ * (fwd ? 1 : 2);
    x = elem(fwd ? "attn.rope.fwd" : "attn.rope.bwd", x, rep, rope);
    if (z_.qd <= z_.kd) return x;
    return elem(fwd ? "attn.repeat_kv.fwd" : "attn.repeat_kv.bwd", x, rep,
                B_ * T_ * (z_.kd + z_.vd + 2 * z_.qd) / tp_);
  }

  // --- one block of identical layers --------------------------------------------------------
  uint32_t block_fwd(uint32_t x, int rep, bool moe, bool recompute) {
    recompute_ = recompute;
    auto L = [](const char* base) { return std::string_view(base); };
    x = elem(L("ln1.fwd"), x, rep, Tsp_ * z_.h * norm_bytes(true));
    x = tp_enter(L("attn.ag.fwd"), x, rep, true);
    x = qkv(true, x, rep);
    x = eager_attention_prep(true, x, rep);
    x = coll(L("attn.cp_kv.fwd"), x, rep, Stream::cp, CollectiveKind::all_gather, cp_comm_,
             T_ * cp_ * cp_kv_width() / tp_ * B_);
    x = attention(true, x, rep);
    x = gemm(L("attn.proj.fwd"), x, rep, T_, z_.h, z_.a * z_.dv / tp_);
    x = tp_exit(L("attn.rs.fwd"), x, rep);
    x = elem(L("ln2.fwd"), x, rep, Tsp_ * z_.h * (3 * B_ + norm_bytes(true)));
    if (!moe) {
      x = tp_enter(L("mlp.ag.fwd"), x, rep, true);
      x = gemm(L("mlp.fc1.fwd"), x, rep, T_, (z_.gated ? 2 : 1) * z_.f / tp_, z_.h);
      x = elem(L("mlp.act.fwd"), x, rep, act_bytes(true));
      x = gemm(L("mlp.fc2.fwd"), x, rep, T_, z_.h, z_.f / tp_);
      x = tp_exit(L("mlp.rs.fwd"), x, rep);
    } else {
      x = moe_mlp(x, rep, true);
    }
    x = elem(L("residual.fwd"), x, rep, 3 * Tsp_ * z_.h * B_);
    recompute_ = false;
    return x;
  }

  // Per-op selective checkpointing (Recompute::every_other_matmul): before a layer's backward,
  // the matmuls it did not keep (K, the output projection, FC1's up half) and the elementwise ops
  // between them run again. The attention core and the TP reduce-scatters are kept; the TP
  // all-gathers feeding the recomputed matmuls are not repeated here.
  uint32_t block_op_recompute(uint32_t x, int rep, bool moe) {
    recompute_ = true;
    x = elem("ln1.fwd", x, rep, Tsp_ * z_.h * norm_bytes(true));
    if (!z_.mla()) x = gemm("attn.k.fwd", x, rep, T_, z_.kd / tp_, z_.h);
    x = eager_attention_prep(true, x, rep);
    x = gemm("attn.proj.fwd", x, rep, T_, z_.h, z_.a * z_.dv / tp_);
    x = elem("ln2.fwd", x, rep, Tsp_ * z_.h * (3 * B_ + norm_bytes(true)));
    if (!moe) {
      x = gemm("mlp.fc1_up.fwd", x, rep, T_, z_.f / tp_, z_.h);
      x = elem("mlp.act.fwd", x, rep, act_bytes(true));
    }
    recompute_ = false;
    return x;
  }

  uint32_t block_bwd(uint32_t x, int rep, bool moe) {
    x = elem("residual.bwd", x, rep, 3 * Tsp_ * z_.h * B_);
    if (!moe) {
      x = tp_enter("mlp.ag.bwd", x, rep);
      x = gemm("mlp.fc2.bwd", x, rep, T_, z_.h, z_.f / tp_, 1, 2);
      x = elem("mlp.act.bwd", x, rep, act_bytes(false));
      x = gemm("mlp.fc1.bwd", x, rep, T_, (z_.gated ? 2 : 1) * z_.f / tp_, z_.h, 1, 2);
      x = tp_exit("mlp.rs.bwd", x, rep);
    } else {
      x = moe_mlp(x, rep, false);
    }
    x = elem("ln2.bwd", x, rep, Tsp_ * z_.h * (3 * B_ + norm_bytes(false)));
    x = tp_enter("attn.ag.bwd", x, rep);
    x = gemm("attn.proj.bwd", x, rep, T_, z_.h, z_.a * z_.dv / tp_, 1, 2);
    if (t_.activation_recompute == Recompute::selective && t_.attention == Attention::unfused) {
      recompute_ = true;
      x = attention(true, x, rep);
      recompute_ = false;
    }
    x = attention(false, x, rep);
    x = eager_attention_prep(false, x, rep);
    x = coll("attn.cp_kv.bwd", x, rep, Stream::cp, CollectiveKind::reduce_scatter, cp_comm_,
             T_ * cp_ * cp_kv_width() / tp_ *
                 (t_.cp_torch_ring ? bytes_per_element(topology::Dtype::fp32) : B_));
    x = qkv(false, x, rep);
    x = tp_exit("attn.rs.bwd", x, rep);
    return elem("ln1.bwd", x, rep, Tsp_ * z_.h * norm_bytes(false));
  }

  // Routed experts: tokens of this rank's sequence shard go to top_k experts over the EP group
  // (all_to_all), run as a grouped GEMM over the local experts, and come back. With routing
  // imbalance (moe_imbalance) the busiest rank receives that many times the balanced share; the
  // exchanges wait for it, so its expert work and its exchanges set every rank's pace.
  uint32_t moe_mlp(uint32_t x, int rep, bool fwd) {
    const double scale = fwd ? 1 : 2;
    auto L = [&](const char* f, const char* b) { return std::string_view(fwd ? f : b); };
    const int64_t tokens = Tsp_;
    const int64_t local = std::max<int64_t>(1, z_.E / ep_);
    const int64_t routed = tokens * z_.topk;
    const double load = t_.moe_imbalance;
    const auto busiest = static_cast<int64_t>(std::llround(static_cast<double>(routed) * load));
    const int64_t per_expert = std::max<int64_t>(1, busiest / local);
    const int64_t up = (z_.gated ? 2 : 1) * z_.fm;
    x = gemm(L("moe.router.fwd", "moe.router.bwd"), x, rep, tokens, z_.E, z_.h, 1, scale);
    // Token permutation around the exchange, memory-bound: gather each token's top_k copies in
    // expert order before the dispatch and sort the received chunks by local expert; after the
    // combine, the inverse (unsort, then scatter back and sum the copies by their router weights).
    const int64_t permuted_bytes = (tokens + 3 * routed) * z_.h * B_;
    x = elem(L("moe.permute.fwd", "moe.permute.bwd"), x, rep, permuted_bytes);
    // A deduplicating dispatcher sends a token to each remote node once, not once per expert.
    const auto exchanged =
        static_cast<int64_t>(static_cast<double>(busiest * z_.h * B_) * dispatch_share_);
    const uint32_t dispatch = coll(L("moe.dispatch.fwd", "moe.dispatch.bwd"), x, rep, Stream::ep,
                                   CollectiveKind::all_to_all, ep_comm_, exchanged);
    // Overlapped, the exchanges hide behind computation (in Megatron-Core and DualPipe another
    // microbatch's; here the expert GEMMs beside them) and the block ends once both are done.
    const bool overlap = t_.overlap_ep_comm && dispatch != x;
    if (!overlap) x = dispatch;
    x = gemm(L("moe.expert_fc1.fwd", "moe.expert_fc1.bwd"), x, rep, per_expert, up, z_.h, local, scale);
    x = elem(L("moe.expert_act.fwd", "moe.expert_act.bwd"), x, rep,
             (z_.gated ? 3 : 2) * busiest * z_.fm * B_);
    x = gemm(L("moe.expert_fc2.fwd", "moe.expert_fc2.bwd"), x, rep, per_expert, z_.h, z_.fm, local, scale);
    const uint32_t combine = coll(L("moe.combine.fwd", "moe.combine.bwd"), x, rep, Stream::ep,
                                  CollectiveKind::all_to_all, ep_comm_, exchanged);
    if (!overlap) x = combine;
    x = elem(L("moe.unpermute.fwd", "moe.unpermute.bwd"), x, rep, permuted_bytes);
    if (z_.shared > 0) {
      x = gemm(L("moe.shared_fc1.fwd", "moe.shared_fc1.bwd"), x, rep, tokens, up * z_.shared, z_.h, 1, scale);
      x = gemm(L("moe.shared_fc2.fwd", "moe.shared_fc2.bwd"), x, rep, tokens, z_.h, z_.fm * z_.shared, 1, scale);
    }
    return overlap ? wait_all(wait_all(x, dispatch), combine) : x;
  }

  // One multi-token-prediction module (DeepSeek-V3): the next token's embedding and the hidden
  // state, each normalised, projected from 2 x hidden to hidden (split over TP like a layer's
  // output projection), one more layer (MoE in an MoE model), and the shared LM head with its loss.
  uint32_t mtp_fwd(uint32_t x) {
    const bool moe = z_.mtp_moe();
    x = elem("mtp.norms.fwd", x, 1, 6 * Tsp_ * z_.h * B_);
    x = tp_enter("mtp.ag.fwd", x, 1);
    x = gemm("mtp.proj.fwd", x, 1, T_, z_.h, 2 * z_.h / tp_);
    x = tp_exit("mtp.rs.fwd", x, 1);
    x = block_fwd(x, 1, moe, false);
    x = tp_enter("mtp.head.ag.fwd", x, 1);
    x = gemm("mtp.logits.fwd", x, 1, T_, z_.V / tp_, z_.h);
    return elem("mtp.cross_entropy.fwd", x, 1, 2 * T_ * z_.V / tp_ * 4);
  }
  uint32_t mtp_bwd(uint32_t x) {
    const bool moe = z_.mtp_moe();
    x = elem("mtp.cross_entropy.bwd", x, 1, 2 * T_ * z_.V / tp_ * 4);
    x = gemm("mtp.logits.bwd", x, 1, T_, z_.V / tp_, z_.h, 1, 2);
    x = tp_exit("mtp.head.rs.bwd", x, 1);
    if (t_.activation_recompute == Recompute::full) x = block_fwd(x, 1, moe, true);
    x = block_bwd(x, 1, moe);
    x = tp_enter("mtp.ag.bwd", x, 1);
    x = gemm("mtp.proj.bwd", x, 1, T_, z_.h, 2 * z_.h / tp_, 1, 2);
    x = tp_exit("mtp.rs.bwd", x, 1);
    return elem("mtp.norms.bwd", x, 1, 7 * Tsp_ * z_.h * B_);
  }

  // Parameters of one layer held by this rank: dense ones split over TP, experts over EP.
  double dense_params(bool moe) const {
    double p = z_.attn_params();
    if (!moe) p += z_.mlp_params();
    if (moe && z_.shared > 0) p += z_.shared * z_.expert_params();
    return p / tp_;
  }
  double expert_params(bool moe) const {
    return moe ? static_cast<double>(std::max<int64_t>(1, z_.E / ep_)) * z_.expert_params() : 0;
  }

  // --- the stage's whole program -------------------------------------------------------------
  struct Block {
    int first_layer;
    int rep;
    bool moe;
    bool bf16 = false;  // its GEMMs stay in BF16 under an FP8/FP4 run (TrainingSpec::bf16_layer)
  };
  struct Chunk {
    int vstage;
    std::vector<Block> blocks;
    bool embedding = false;
    bool head = false;
  };

  void set_chunks(std::vector<Chunk> chunks) { chunks_ = std::move(chunks); }
  const std::vector<Chunk>& chunks() const { return chunks_; }

  struct Item {
    bool fwd;
    int mb;
    int chunk;
  };

  struct Endpoint {
    uint64_t key;
    uint32_t op;
  };
  std::vector<Endpoint> sends, recvs;

  // Sizes of a program already built for the same stage, which every rank of it matches.
  struct Sizes {
    size_t ops = 0, deps = 0;
  };

  // `known`: another rank's sizes for this stage, to allocate exactly; null to estimate them.
  void build(const std::vector<Item>& order, int microbatches, int vstages, const Sizes* known = nullptr) {
    const int zero = t_.parallel.zero;
    const bool fsdp = zero >= 3 && dp_comm_ >= 0;
    // FSDP without resharding after forward: a block's parameters are gathered before the first
    // microbatch's forward and kept, and its gradients reduced after the last one's backward.
    const bool keep_unsharded = fsdp && !t_.fsdp_reshard_after_forward;
    const bool zero12 = zero >= 1 && zero <= 2 && dp_comm_ >= 0;
    const int64_t act_bytes = Tsp_ * z_.h * B_;
    const int64_t grad_B = B_;  // gradients reduced at the training precision
    const int64_t last_mb = microbatches - 1;

    // ZeRO-1/2: parameters all-gathered after the previous step, prefetched under the first
    // forward pass layer by layer; recorded per (chunk, block, layer) for the first
    // microbatch's dependencies.
    std::vector<std::vector<std::vector<uint32_t>>> param_ag(chunks_.size());
    if (zero12 && t_.overlap_param_gather) {
      for (size_t c = 0; c < chunks_.size(); ++c) {
        for (const Block& b : chunks_[c].blocks) {
          const double p = dense_params(b.moe) + expert_params(b.moe);
          auto& layers = param_ag[c].emplace_back();
          for (int k = 0; k < b.rep; ++k) {
            layers.push_back(coll("param.ag", kNone, 1, Stream::dp_gather,
                                  CollectiveKind::all_gather, shard_comm_,
                                  static_cast<int64_t>(p) * B_));
          }
        }
      }
    }

    // One allocation up front: sweeps generate thousands of graphs, and growing the vectors
    // op by op costs more (page faults on fresh memory) than building them.
    if (known != nullptr) {
      r_.ops.reserve(known->ops);
      r_.deps.reserve(known->deps);
    } else {
      size_t blocks = 0;
      for (const Chunk& ch : chunks_) blocks += ch.blocks.size();
      const size_t per_block = (t_.activation_recompute == Recompute::full                 ? 60
                                : t_.activation_recompute == Recompute::every_other_matmul ? 48
                                                                                           : 40) +
                               (fsdp ? 6 : 0);
      const size_t estimate = order.size() * (blocks / chunks_.size() * per_block + 12) + 64;
      r_.ops.reserve(estimate);
      r_.deps.reserve(estimate + estimate / 4);
    }

    std::vector<uint32_t> dp_ops;    // every gradient collective, for the optimizer's dependency
    uint32_t last_compute = kNone;
    for (const Item& it : order) {
      const Chunk& ch = chunks_[it.chunk];
      const int v = ch.vstage;
      uint32_t x = kNone;
      if (it.fwd) {
        if (v > 0) {
          x = recv(static_cast<uint64_t>(it.mb) * vstages + v, 0, act_bytes, prev_rank_);
        }
        if (ch.embedding) x = elem("embedding.fwd", x, 1, 2 * T_ * z_.h * B_);
        uint32_t prev_block_first = kNone, block_first = kNone;
        // Offloaded blocks' copies to the host: a block waits for the copy of the one two before
        // it (double buffering, as Transformer Engine's offload keeps one layer in flight).
        std::vector<uint32_t> to_host(ch.blocks.size(), kNone);
        for (size_t bi = 0; bi < ch.blocks.size(); ++bi) {
          const Block& b = ch.blocks[bi];
          if (bi >= 2 && to_host[bi - 2] != kNone) x = after_both(x, to_host[bi - 2]);
          if (fsdp && (!keep_unsharded || it.mb == 0)) x = fsdp_gather(x, b, prev_block_first);
          const uint32_t before = static_cast<uint32_t>(r_.ops.size());
          gemms_in(b);
          if (zero12 && it.mb == 0 && !param_ag[it.chunk].empty()) {
            // The first microbatch waits for each layer's parameters: a merged block runs it
            // layer by layer, as the exact graph does.
            for (const uint32_t ag : param_ag[it.chunk][bi]) x = block_fwd(after_both(x, ag), 1, b.moe, false);
          } else {
            x = block_fwd(x, b.rep, b.moe, false);
          }
          if (offloaded(b) > 0) to_host[bi] = offload_copy("offload.d2h", x, b);
          prev_block_first = block_first;
          block_first = before;
        }
        gemms_in_run_precision();
        if (ch.head) {
          x = tp_enter("head.ag.fwd", x, 1);
          x = elem("final_ln.fwd", x, 1, 2 * Tsp_ * z_.h * B_);
          x = gemm("logits.fwd", x, 1, T_, z_.V / tp_, z_.h);
          x = elem("cross_entropy.fwd", x, 1, T_ * z_.V / tp_ * (t_.fused_cross_entropy ? 8 : 18));
          for (int64_t k = 0; k < z_.mtp; ++k) x = mtp_fwd(x);
        }
        last_compute = x;
        if (v < vstages - 1) send(static_cast<uint64_t>(it.mb) * vstages + v + 1, 0, x, act_bytes, next_rank_);
      } else {
        if (v < vstages - 1) {
          x = recv(static_cast<uint64_t>(it.mb) * vstages + v, 1, act_bytes, next_rank_);
        }
        if (ch.head) {
          for (int64_t k = 0; k < z_.mtp; ++k) x = mtp_bwd(x);
          x = elem("cross_entropy.bwd", x, 1, T_ * z_.V / tp_ * (t_.fused_cross_entropy ? 8 : 22));
          x = gemm("logits.bwd", x, 1, T_, z_.V / tp_, z_.h, 1, 2);
          x = tp_exit("head.rs.bwd", x, 1);
        }
        double bucket = 0, bucket_expert = 0, deferred = 0, deferred_expert = 0;
        const bool sync_now = it.mb == last_mb && t_.overlap_grad_reduce && !fsdp && dp_comm_ >= 0;
        uint32_t next_block_first = kNone;
        // Offloaded blocks come back one ahead: block bi-1's copy starts with block bi's backward.
        std::vector<uint32_t> from_host(ch.blocks.size(), kNone);
        for (size_t bi = ch.blocks.size(); bi-- > 0;) {
          const Block& b = ch.blocks[bi];
          if (offloaded(b) > 0 && from_host[bi] == kNone) from_host[bi] = offload_copy("offload.h2d", x, b);
          if (from_host[bi] != kNone) x = after_both(x, from_host[bi]);
          if (bi > 0 && offloaded(ch.blocks[bi - 1]) > 0) {
            from_host[bi - 1] = offload_copy("offload.h2d", x, ch.blocks[bi - 1]);
          }
          if (fsdp && !keep_unsharded) x = fsdp_gather(x, b, next_block_first);
          const uint32_t before = static_cast<uint32_t>(r_.ops.size());
          gemms_in(b);
          // The last microbatch's backward hands gradients to the reduction bucket by bucket as
          // layers finish, so a merged block runs it layer by layer: the reduction then starts
          // where the exact graph starts it (merging saves the ops of every other microbatch).
          const int steps = sync_now ? b.rep : 1;
          const int rep = sync_now ? 1 : b.rep;
          for (int k = 0; k < steps; ++k) {
            if (t_.activation_recompute == Recompute::full) x = block_fwd(x, rep, b.moe, true);
            if (t_.activation_recompute == Recompute::every_other_matmul) x = block_op_recompute(x, rep, b.moe);
            x = block_bwd(x, rep, b.moe);
            const double dense = dense_params(b.moe) * rep;
            const double expert = expert_params(b.moe) * rep;
            const bool last = bi == 0 && k == steps - 1;
            if (keep_unsharded) {
              if (it.mb == last_mb) {
                deferred += dense;
                deferred_expert += expert;
              }
            } else if (fsdp) {
              dp_ops.push_back(
                  replica_sync(coll("grad.rs", x, 1, Stream::dp, CollectiveKind::reduce_scatter,
                                    shard_comm_, static_cast<int64_t>(dense) * grad_B),
                               dense, grad_B));
              if (expert > 0) {
                const uint32_t e = coll("expert_grad.rs", x, 1, Stream::dp, CollectiveKind::reduce_scatter,
                                        edp_comm_, static_cast<int64_t>(expert) * grad_B);
                if (e != x) dp_ops.push_back(e);
              }
            } else if (sync_now) {
              bucket += dense;
              bucket_expert += expert;
              if (bucket >= static_cast<double>(t_.dp_bucket_params) || last) {
                dp_ops.push_back(grad_sync(x, bucket, grad_B, false));
                bucket = 0;
              }
              if (bucket_expert > 0 && (bucket_expert >= static_cast<double>(t_.dp_bucket_params) || last)) {
                const uint32_t e = grad_sync(x, bucket_expert, grad_B, true);
                if (e != x) dp_ops.push_back(e);
                bucket_expert = 0;
              }
            }
          }
          next_block_first = before;
        }
        gemms_in_run_precision();
        if (ch.embedding) {
          x = elem("embedding.bwd", x, 1, 3 * T_ * z_.h * B_);
        }
        // Kept unsharded: the chunk's accumulated gradients are reduce-scattered once its last
        // backward is done (PyTorch's pipelining runs FSDP's post-backward for the whole stage).
        if (deferred > 0) {
          dp_ops.push_back(replica_sync(coll("grad.rs", x, 1, Stream::dp, CollectiveKind::reduce_scatter, shard_comm_,
                                             static_cast<int64_t>(deferred) * grad_B),
                                        deferred, grad_B));
        }
        if (deferred_expert > 0) {
          const uint32_t e = coll("expert_grad.rs", x, 1, Stream::dp, CollectiveKind::reduce_scatter, edp_comm_,
                                  static_cast<int64_t>(deferred_expert) * grad_B);
          if (e != x) dp_ops.push_back(e);
        }
        last_compute = x;
        if (v > 0) send(static_cast<uint64_t>(it.mb) * vstages + v - 1, 1, x, act_bytes, prev_rank_);
      }
    }

    // Embedding and LM-head gradients, and everything when reduction is not overlapped, are
    // reduced after the last backward pass.
    double tail = 0;
    for (const Chunk& ch : chunks_) {
      if (ch.embedding || ch.head) tail += static_cast<double>(z_.V * z_.h / tp_);
    }
    // Multi-token-prediction modules: reduced with the head's gradients.
    double tail_expert = 0;
    for (const Chunk& ch : chunks_) {
      if (!ch.head) continue;
      const bool moe = z_.mtp_moe();
      tail += static_cast<double>(z_.mtp) * (dense_params(moe) + static_cast<double>(2 * z_.h * z_.h / tp_));
      tail_expert += static_cast<double>(z_.mtp) * expert_params(moe);
    }
    if (!t_.overlap_grad_reduce && !fsdp) {
      for (const Chunk& ch : chunks_) {
        for (const Block& b : ch.blocks) {
          tail += dense_params(b.moe) * b.rep;
          tail_expert += expert_params(b.moe) * b.rep;
        }
      }
    }
    if (dp_comm_ >= 0 && tail > 0) {
      if (fsdp) {
        dp_ops.push_back(replica_sync(
            coll("grad.rs", last_compute, 1, Stream::dp, CollectiveKind::reduce_scatter,
                 shard_comm_, static_cast<int64_t>(tail) * grad_B),
            tail, grad_B));
      } else {
        dp_ops.push_back(grad_sync(last_compute, tail, grad_B, false));
      }
    }
    if (tail_expert > 0) {
      const uint32_t e = grad_sync(last_compute, tail_expert, grad_B, true);
      if (e != last_compute) dp_ops.push_back(e);
    }

    // Optimizer step (Adam, mixed precision): ~30 bytes of HBM traffic per parameter held.
    double held = 0;
    for (const Chunk& ch : chunks_) {
      for (const Block& b : ch.blocks) {
        held += dense_params(b.moe) * b.rep / (zero >= 1 ? shard_size_ : 1);
        held += expert_params(b.moe) * b.rep / (zero >= 1 ? std::max(1, edp_size_) : 1);
      }
      if (ch.embedding || ch.head)
        held += static_cast<double>(z_.V * z_.h / tp_) / (zero >= 1 ? shard_size_ : 1);
    }
    std::vector<uint32_t> opt_deps = dp_ops;
    if (last_compute != kNone) opt_deps.push_back(last_compute);
    Op opt;
    opt.compute = ComputeKind::optimizer;
    opt.dtype = topology::Dtype::fp32;
    opt.bytes = Bytes(static_cast<int64_t>(held * 30));
    opt.label = lab("optimizer.step");
    const uint32_t step = r_.add(opt, opt_deps);
    if (zero12 && !t_.overlap_param_gather) {
      double all = 0;
      for (const Chunk& ch : chunks_) {
        for (const Block& b : ch.blocks) all += (dense_params(b.moe) + expert_params(b.moe)) * b.rep;
      }
      coll("param.ag", step, 1, Stream::dp_gather, CollectiveKind::all_gather, shard_comm_,
           static_cast<int64_t>(all) * B_);
    }
  }

 private:
  uint32_t join(uint32_t x, uint32_t other) {
    // Makes the op added last (x) also wait for `other`.
    if (x + 1 == r_.ops.size()) {
      r_.add_dep(x, other);
      return x;
    }
    Op nop;
    nop.compute = ComputeKind::measured;
    nop.measured = Time::zero();
    nop.label = lab("wait");
    return r_.add(nop, {x, other});
  }

  // CPU offload: the layers of block `b` whose activations go to host memory, and one copy of
  // them (D2H after the forward, H2D before the backward) on the host stream, which runs beside
  // the GPU's streams; compute waits on it only through dependencies.
  int offloaded(const Block& b) const {
    return std::clamp(t_.cpu_offload_layers - b.first_layer, 0, b.rep);
  }
  uint32_t offload_copy(std::string_view label, uint32_t after, const Block& b) {
    Op op;
    op.stream = Stream::host;
    op.compute = ComputeKind::measured;
    op.measured = offload_time_[b.bf16 ? 1 : 0][b.moe ? 1 : 0] * offloaded(b);
    return chain(op, after, label, 1);
  }
  uint32_t after_both(uint32_t x, uint32_t other) { return x == kNone ? other : join(x, other); }

  uint32_t wait_all(uint32_t a, uint32_t b) {
    Op nop;
    nop.compute = ComputeKind::measured;
    nop.measured = Time::zero();
    nop.label = lab("wait");
    return r_.add(nop, {a, b});
  }

  // FSDP unit = block: all-gather its parameters before use, at most one block ahead.
  // The GEMM precision for a block's layers; the run's own once the block loops end.
  void gemms_in(const Block& b) { gemm_dtype_ = b.bf16 ? topology::Dtype::bf16 : t_.precision; }
  void gemms_in_run_precision() { gemm_dtype_ = t_.precision; }

  uint32_t fsdp_gather(uint32_t x, const Block& b, uint32_t ahead_of) {
    const double p = (dense_params(b.moe) + expert_params(b.moe)) * b.rep;
    Op op = Op::collective_on(Stream::dp_gather, CollectiveKind::all_gather, shard_comm_,
                              act_dtype_, Bytes(static_cast<int64_t>(p) * B_));
    op.label = lab("fsdp.param.ag");
    const uint32_t ag = ahead_of == kNone ? r_.add(op) : r_.add(op, {ahead_of});
    // FSDP copies the gathered flat buffer out into the parameters' views (read and write).
    Op copy;
    copy.compute = ComputeKind::elementwise;
    copy.dtype = act_dtype_;
    copy.bytes = Bytes(static_cast<int64_t>(p) * B_ * 2);
    copy.label = lab("fsdp.unshard_copy");
    if (x == kNone) return r_.add(copy, {ag});
    return r_.add(copy, {x, ag});
  }

  uint32_t grad_sync(uint32_t after, double params, int64_t grad_B, bool expert) {
    const bool zero = t_.parallel.zero >= 1;
    const int comm = expert ? edp_comm_ : zero ? shard_comm_ : dp_comm_;
    const auto kind = zero ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
    const uint32_t x = coll(expert ? "expert_grad.sync" : "grad.sync", after, 1, Stream::dp, kind,
                            comm, static_cast<int64_t>(params) * grad_B);
    return expert ? x : replica_sync(x, params, grad_B);
  }

  // HSDP: the shard's reduced gradients all-reduced across the replicas (none without).
  uint32_t replica_sync(uint32_t after, double params, int64_t grad_B) {
    return coll("grad.ar.replicas", after, 1, Stream::dp, CollectiveKind::all_reduce, replica_comm_,
                static_cast<int64_t>(params / shard_size_) * grad_B);
  }

  uint32_t recv(uint64_t base, int dir, int64_t bytes, int peer_rank) {
    Op op;
    op.kind = OpKind::recv;
    op.stream = Stream::pp;
    op.collective = CollectiveKind::send_recv;
    op.bytes = Bytes(bytes);
    op.peer_rank = peer_rank;
    op.label = lab(dir == 0 ? "pp.recv.fwd" : "pp.recv.bwd");
    const uint32_t idx = r_.add(op);
    recvs.push_back({base * 2 + static_cast<uint64_t>(dir), idx});
    return idx;
  }
  void send(uint64_t base, int dir, uint32_t after, int64_t bytes, int peer_rank) {
    Op op;
    op.kind = OpKind::send;
    op.stream = Stream::pp;
    op.collective = CollectiveKind::send_recv;
    op.bytes = Bytes(bytes);
    op.peer_rank = peer_rank;
    op.label = lab(dir == 0 ? "pp.send.fwd" : "pp.send.bwd");
    const uint32_t idx = after == kNone ? r_.add(op) : r_.add(op, {after});
    sends.push_back({base * 2 + static_cast<uint64_t>(dir), idx});
  }

  const TrainingSpec& t_;
  const ModelShape& z_;
  RankGraph& r_;
  int prev_rank_, next_rank_;  // indices in Workload::ranks of the neighbouring stages' ranks
  [[maybe_unused]] int lpb_;
  int tp_ = 1, cp_ = 1, ep_ = 1;
  bool sp_ = false;
  int64_t B_ = 2, T_ = 0, Tsp_ = 0;
  // CPU offload (TrainingSpec::cpu_offload_layers): a layer's saved activations for one
  // microbatch, dense and MoE, and the host link's time for them.
  Time offload_time_[2][2];  // one layer's copy, by [kept in BF16][MoE layer]
  topology::Dtype gemm_dtype_ = topology::Dtype::bf16, act_dtype_ = topology::Dtype::bf16;
  int tp_comm_ = -1, cp_comm_ = -1, ep_comm_ = -1, dp_comm_ = -1, edp_comm_ = -1;
  int shard_comm_ = -1,
      replica_comm_ = -1;  // HSDP's (shard_group); shard_comm_ is dp_comm_ without
  int dp_size_ = 1, edp_size_ = 1, shard_size_ = 1;
  double dispatch_share_ = 1;  // of an MoE exchange's bytes that a deduplicating dispatcher sends
  std::vector<Chunk> chunks_;
  bool recompute_ = false;
  uint32_t pending_gather_ = kNone;   // an overlapped TP all-gather waiting for its GEMM
  uint32_t last_gemm_input_ = kNone;  // the op the last GEMM depends on
  std::map<std::tuple<const void*, size_t, bool>, uint32_t> label_ids_;
};

// Megatron-LM's pipeline order for one stage: (forward?, microbatch, chunk) in program order.
std::vector<StageBuilder::Item> schedule(int stage, int P, int M, int vp) {
  std::vector<StageBuilder::Item> out;
  if (vp == 1) {
    const int warm = std::min(P - stage - 1, M);
    for (int i = 0; i < warm; ++i) out.push_back({true, i, 0});
    for (int i = 0; i < M - warm; ++i) {
      out.push_back({true, warm + i, 0});
      out.push_back({false, i, 0});
    }
    for (int i = M - warm; i < M; ++i) out.push_back({false, i, 0});
    return out;
  }
  // Megatron's interleaved order walks microbatches in groups of P. With M not a multiple of P,
  // the order for the next multiple is built and the missing microbatches dropped: every stage
  // drops the same ones, so the remaining order still satisfies every dependency.
  if (M % P != 0) {
    const int padded = (M + P - 1) / P * P;
    std::vector<StageBuilder::Item> all = schedule(stage, P, padded, vp);
    std::vector<StageBuilder::Item> kept;
    for (const auto& it : all) {
      if (it.mb < M) kept.push_back(it);
    }
    return kept;
  }
  const int total = M * vp;
  auto item = [&](int k, bool fwd) {
    const int group = k / (P * vp);
    const int within = k % (P * vp);
    int chunk = within / P;
    if (!fwd) chunk = vp - 1 - chunk;
    return StageBuilder::Item{fwd, group * P + within % P, chunk};
  };
  int warm = M == P ? total : std::min(total, (P - stage - 1) * 2 + (vp - 1) * P);
  for (int k = 0; k < warm; ++k) out.push_back(item(k, true));
  for (int k = 0; k < total - warm; ++k) {
    out.push_back(item(warm + k, true));
    out.push_back(item(k, false));
  }
  for (int k = total - warm; k < total; ++k) out.push_back(item(k, false));
  return out;
}

}  // namespace

std::vector<int> pipeline_split(int L, int VS) {
  const int base = (L + VS - 1) / VS;
  std::vector<int> count(VS, base);
  for (int short_by = VS * base - L, k = 0; short_by > 0; ++k) {
    // Take a layer from the two ends inwards (0, VS-1, 1, VS-2, ...), round after round.
    const int i = k % VS;
    const int v = i % 2 == 0 ? i / 2 : VS - 1 - i / 2;
    if (count[v] > 0) {
      --count[v];
      --short_by;
    }
  }
  std::vector<int> first(VS + 1, 0);
  for (int v = 0; v < VS; ++v) first[v + 1] = first[v] + count[v];
  return first;
}

std::vector<int> decoder_split(int L, int mtp, int VS) {
  std::vector<int> first = pipeline_split(L + mtp, VS);
  for (int& f : first) f = std::min(f, L);
  return first;
}

TrainingSpec resolve_training(const TrainingSpec& spec, const topology::ClusterSpec& cluster) {
  TrainingSpec t = spec;
  ModelSpec& m = t.model;
  if (!m.preset.empty() && m.layers == 0) {
    const ModelSpec* p = find_model_preset(m.preset);
    require(p != nullptr, "model.preset", "unknown model preset '" + m.preset + "'");
    m = *p;
  }
  require(m.layers > 0 && m.hidden > 0 && m.heads > 0, "model", "model needs layers, hidden and heads");
  // Without head_dim a head is hidden / heads wide, which must be whole.
  require(m.head_dim > 0 || m.mla() || m.hidden % m.heads == 0, "model.heads",
          "heads (" + std::to_string(m.heads) + ") must divide hidden (" + std::to_string(m.hidden) +
              ") unless model.head_dim is given");
  if (m.kv_heads == 0 || m.mla()) m.kv_heads = m.heads;
  require(m.heads % m.kv_heads == 0, "model.kv_heads",
          "kv_heads (" + std::to_string(m.kv_heads) + ") must divide heads (" + std::to_string(m.heads) + ")");
  if (m.ffn_hidden == 0) m.ffn_hidden = 4 * m.hidden;
  if (m.moe_ffn_hidden == 0) m.moe_ffn_hidden = m.ffn_hidden;
  ParallelSpec& p = t.parallel;
  require(p.tp >= 1 && p.pp >= 1 && p.cp >= 1 && p.ep >= 1 && p.vp >= 1, "parallel", "parallel sizes must be >= 1");
  const int gpus = cluster.total_gpus();
  if (p.dp <= 0) p.dp = gpus / (p.tp * p.pp * p.cp);
  // A job may use fewer GPUs than the cluster has (the first tp x pp x cp x dp of them).
  require(p.dp >= 1 && p.tp * p.pp * p.cp * p.dp <= gpus, "parallel",
          "tp x pp x cp x dp = " + std::to_string(p.tp * p.pp * p.cp * p.dp) + " but the cluster has " +
              std::to_string(gpus) + " GPUs");
  require(m.heads % p.tp == 0, "parallel.tp",
          "tp (" + std::to_string(p.tp) + ") must divide heads (" + std::to_string(m.heads) + ")");
  require(m.seq_len % p.cp == 0, "parallel.cp",
          "cp (" + std::to_string(p.cp) + ") must divide seq_len (" + std::to_string(m.seq_len) + ")");
  // Megatron's rules: interleaving splits a pipeline, and expert parallelism splits experts.
  require(p.vp == 1 || p.pp > 1, "parallel.vp",
          "vp = " + std::to_string(p.vp) + " interleaves pipeline stages, but pp is 1");
  require(p.ep == 1 || m.experts > 1, "parallel.ep",
          "ep = " + std::to_string(p.ep) + " splits experts, but the model is dense (model.experts is 1)");
  require(m.experts <= 1 || m.experts % p.ep == 0, "parallel.ep",
          "ep (" + std::to_string(p.ep) + ") must divide experts (" + std::to_string(m.experts) + ")");
  require(m.experts <= 1 || (p.dp * p.cp * p.tp) % p.ep == 0, "parallel.ep",
          "ep (" + std::to_string(p.ep) + ") must divide dp x cp x tp (" + std::to_string(p.dp * p.cp * p.tp) + ")");
  if (p.shard_group == p.dp * p.cp) p.shard_group = 0;  // the whole group: plain ZeRO
  if (p.shard_group == 1) p.zero = p.shard_group = 0;   // shards of one: every rank holds it all
  require(p.shard_group == 0 || p.zero >= 1, "parallel.shard_group", "shard_group = " + std::to_string(p.shard_group) +
                                                 " shards ZeRO/FSDP states, but zero is 0");
  require(p.shard_group == 0 || (p.dp * p.cp) % p.shard_group == 0, "parallel.shard_group",
          "shard_group = " + std::to_string(p.shard_group) +
              " must divide dp x cp = " + std::to_string(p.dp * p.cp));
  // The first and the last pipeline chunk may hold only the embedding and the LM head.
  require(m.layers + 2 >= p.pp * p.vp, p.vp > 1 ? "parallel.vp" : "parallel.pp",
          "pp x vp = " + std::to_string(p.pp * p.vp) + " pipeline chunks for " + std::to_string(m.layers) +
              " layers (at most layers + 2)");
  require(t.bf16_layers_at_start + t.bf16_layers_at_end <= m.layers, "bf16_layers_at_start",
          "bf16_layers_at_start + bf16_layers_at_end = " +
              std::to_string(t.bf16_layers_at_start + t.bf16_layers_at_end) + " but the model has " +
              std::to_string(m.layers) + " layers");
  // Megatron refuses CPU offloading with pipeline parallelism, and the last layer's backward
  // starts as soon as its forward ends, so at least that one stays.
  require(t.cpu_offload_layers == 0 || p.pp == 1, "cpu_offload_layers",
          "cpu_offload_layers needs pp 1 (Megatron offloads to the CPU only without pipeline parallelism), "
          "got pp " + std::to_string(p.pp));
  require(t.cpu_offload_layers < m.layers, "cpu_offload_layers", "cpu_offload_layers = " + std::to_string(t.cpu_offload_layers) +
                                               " but the model has " + std::to_string(m.layers) +
                                               " layers; at most " + std::to_string(m.layers - 1));
  require(t.batch.micro >= 1, "batch.micro", "micro batch must be >= 1");
  if (t.batch.global <= 0) t.batch.global = t.batch.micro * p.dp;
  require(t.batch.global % (t.batch.micro * p.dp) == 0, "batch.global",
          "global batch (" + std::to_string(t.batch.global) + ") must divide by micro x dp (" +
              std::to_string(t.batch.micro) + " x " + std::to_string(p.dp) + ")");
  const int M = t.batch.global / (t.batch.micro * p.dp);
  require(M >= 1, "batch.global", "no microbatches");
  if (p.tp == 1) p.sequence_parallel = false;
  if (t.activation_recompute == Recompute::fit) {
    // The least recomputation whose memory estimate fits (selective saves memory only with
    // unfused attention; with flash attention it is the same as none).
    for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
      t.activation_recompute = r;
      if (r == Recompute::full || estimate_memory(t, cluster).fits()) break;
    }
  }
  return t;
}

double megatron_model_flops(const TrainingSpec& t) {
  const ModelShape z = model_shape(t);
  const double tokens = static_cast<double>(t.batch.global) * static_cast<double>(z.s);
  double per_token = 0;
  const double core = static_cast<double>(z.s) * z.core_flops_per_key();
  const double head = 2.0 * static_cast<double>(z.h) * static_cast<double>(z.V);
  for (int64_t l = 0; l < z.L; ++l) per_token += 2 * z.active_layer_params(z.moe(l)) + core;
  per_token += head;
  // Multi-token prediction: per module a 2h x h projection, one more layer, the head again.
  const double mtp_proj = static_cast<double>(2 * z.h * z.h);
  per_token += static_cast<double>(z.mtp) * (2 * (z.active_layer_params(z.mtp_moe()) + mtp_proj) + core + head);
  return 3 * tokens * per_token;
}

Workload generate_megatron(const TrainingSpec& spec, const topology::ClusterSpec& cluster,
                           const GeneratorOptions& options) {
  const TrainingSpec t = resolve_training(spec, cluster);
  const ModelShape z = model_shape(t);
  const ParallelSpec& p = t.parallel;
  const Placement pl(p, p.placement);
  const int P = p.pp, vp = p.vp, VS = P * vp;
  const int M = t.batch.global / (t.batch.micro * p.dp);

  Workload w;
  w.name = t.model.preset.empty() ? "transformer" : t.model.preset;
  w.total_gpus = p.tp * p.pp * p.cp * p.dp;
  w.model_flops = megatron_model_flops(t);
  w.tokens = static_cast<double>(t.batch.global) * static_cast<double>(z.s);

  // Ranks: one a stage (the GPU at tp = cp = dp = 0), or with all_ranks one a GPU, GPU g at
  // index g (the job's GPUs are 0 .. total_gpus - 1). A rank's lane is its position among its
  // stage's tp x cp x dp GPUs: sends and receives pair the ranks of one lane in adjacent stages.
  const int lanes = options.all_ranks ? p.tp * p.cp * p.dp : 1;
  const int rank_count = P * lanes;
  w.ranks.resize(static_cast<size_t>(rank_count));
  std::vector<Coord> coord(static_cast<size_t>(rank_count));
  std::vector<int> lane(static_cast<size_t>(rank_count), 0);
  std::vector<int> rank_at(static_cast<size_t>(rank_count));  // [stage x lanes + lane]
  for (int i = 0; i < rank_count; ++i) {
    Coord& c = coord[static_cast<size_t>(i)];
    if (options.all_ranks) {
      c = pl.coord(i);
      lane[static_cast<size_t>(i)] = pl.dense_index(c);
    } else {
      c[Dim::pp] = i;
    }
    rank_at[static_cast<size_t>(c[Dim::pp] * lanes + lane[static_cast<size_t>(i)])] = i;
  }

  const std::vector<int> first = decoder_split(static_cast<int>(z.L), static_cast<int>(z.mtp), VS);

  CommTable comms(w, options.all_ranks);
  std::vector<StageBuilder> builders;
  builders.reserve(static_cast<size_t>(rank_count));
  for (int i = 0; i < rank_count; ++i) {
    RankGraph& r = w.ranks[static_cast<size_t>(i)];
    const Coord& c = coord[static_cast<size_t>(i)];
    const int s = c[Dim::pp], l = lane[static_cast<size_t>(i)];
    r.gpu = pl.gpu(c);
    r.represents = options.all_ranks ? 1 : p.tp * p.cp * p.dp;
    r.stage = s;
    const int prev = rank_at[static_cast<size_t>((s + P - 1) % P * lanes + l)];
    const int next = rank_at[static_cast<size_t>((s + 1) % P * lanes + l)];
    // A deduplicating dispatcher crosses the network once per NVLink domain (a rack of trays is one).
    builders.emplace_back(t, z, comms, r, prev, next, pl, options.layers_per_block,
                          cluster.gpus_per_node * cluster.nodes_per_domain(), cluster.gpu);
  }
  std::vector<std::vector<StageBuilder::Chunk>> stage_chunks(static_cast<size_t>(P));
  std::vector<std::vector<StageBuilder::Item>> order(static_cast<size_t>(P));
  for (int s = 0; s < P; ++s) {
    std::vector<StageBuilder::Chunk>& chunks = stage_chunks[static_cast<size_t>(s)];
    for (int c = 0; c < vp; ++c) {
      StageBuilder::Chunk ch;
      ch.vstage = c * P + s;
      ch.embedding = ch.vstage == 0;
      ch.head = ch.vstage == VS - 1;
      const int lo = first[ch.vstage], hi = first[ch.vstage + 1];
      int lpb = options.layers_per_block;
      // Auto: FSDP gathers per block, so keep 4 blocks a chunk to leave prefetch something to hide
      // behind; otherwise one block a chunk (the DP reduction then starts after the chunk).
      const int blocks_per_chunk = t.parallel.zero >= 3 ? 4 : 1;
      if (lpb <= 0) lpb = std::max(1, (hi - lo + blocks_per_chunk - 1) / blocks_per_chunk);
      for (int l = lo; l < hi;) {
        const bool moe = z.moe(l);
        const bool bf16 = t.bf16_layer(l, z.L);
        int n = 0;
        while (l + n < hi && n < lpb && z.moe(l + n) == moe && t.bf16_layer(l + n, z.L) == bf16) ++n;
        ch.blocks.push_back({l, n, moe, bf16});
        l += n;
      }
      chunks.push_back(std::move(ch));
    }
    order[static_cast<size_t>(s)] = schedule(s, P, M, vp);
  }
  // The ranks of a stage run programs of one size: the first one built sizes the others'.
  std::vector<StageBuilder::Sizes> stage_sizes(static_cast<size_t>(P));
  for (int i = 0; i < rank_count; ++i) {
    const RankGraph& r = w.ranks[static_cast<size_t>(i)];
    const auto s = static_cast<size_t>(r.stage);
    StageBuilder::Sizes& sizes = stage_sizes[s];
    builders[static_cast<size_t>(i)].set_chunks(stage_chunks[s]);
    builders[static_cast<size_t>(i)].build(order[s], M, VS, sizes.ops > 0 ? &sizes : nullptr);
    if (sizes.ops == 0) sizes = {r.ops.size(), r.deps.size()};
  }

  // Pair each receive with its send: the key names the microbatch, virtual stage and direction
  // (below 2 x M x VS), and with the lane the pair of ranks.
  const auto keys = static_cast<uint64_t>(2) * static_cast<uint64_t>(M) * static_cast<uint64_t>(VS);
  std::vector<std::pair<int, uint32_t>> send_at(keys * static_cast<uint64_t>(lanes), {-1, 0});
  auto slot = [&](uint64_t key, int i) {
    if (key >= keys) throw std::logic_error("megatron generator: pipeline transfer key out of range");
    return key * static_cast<uint64_t>(lanes) + static_cast<uint64_t>(lane[static_cast<size_t>(i)]);
  };
  for (int i = 0; i < rank_count; ++i) {
    for (const auto& e : builders[static_cast<size_t>(i)].sends) send_at[slot(e.key, i)] = {i, e.op};
  }
  for (int i = 0; i < rank_count; ++i) {
    for (const auto& e : builders[static_cast<size_t>(i)].recvs) {
      const auto [from, op] = send_at[slot(e.key, i)];
      if (from < 0) throw std::logic_error("megatron generator: receive without a send");
      RankGraph& receiver = w.ranks[static_cast<size_t>(i)];
      RankGraph& sender = w.ranks[static_cast<size_t>(from)];
      Op& rv = receiver.ops[e.op];
      rv.peer_rank = from;
      rv.peer_op = static_cast<int32_t>(op);
      Op& sd = sender.ops[op];
      sd.comm = comms.add(CommRole::pp, collectives::Communicator{{sender.gpu, receiver.gpu}});
      rv.comm = sd.comm;
    }
  }
  return w;
}

}  // namespace dtsim::workloads
