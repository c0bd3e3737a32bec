// ModelShape: a transformer's dimensions as the generator and the memory model use them, with
// the parameter counts both derive from them (one place, so the op graph and the memory estimate
// count the same weights).
//   const ModelShape z = model_shape(resolve_training(spec, cluster));
//   double per_layer = z.attn_params() + z.mlp_params();
#pragma once

#include <cstdint>

#include "workloads/workload_spec.h"

namespace dtsim::workloads {

struct ModelShape {
  int64_t L, h, a, g, f, s, V, E, topk, fm, shared, first_dense;
  // Head widths: dqk of a query/key head (with MLA including its rotary part dr), dv of a value
  // head; qd, kd, vd the widths of all query, key and value heads together.
  int64_t dqk, dv, dr, qd, kd, vd;
  int64_t q_lora, kv_lora;  // MLA latent ranks (kv_lora 0: grouped-query attention)
  int64_t mtp;              // multi-token prediction modules after the LM head
  bool gated;
  bool mla() const { return kv_lora > 0; }
  bool moe(int64_t layer) const { return E > 1 && layer >= first_dense; }
  // A multi-token-prediction module's layer is of the last layer's kind.
  bool mtp_moe() const { return moe(L - 1); }
  // MLA's up-projection width: every head's key without the shared rotary part, and its value.
  int64_t kv_up_width() const { return a * (dqk - dr + dv); }
  // Attention weights: the Q, K and V projections (GQA: K and V for g heads; MLA: down to the
  // latents, then up) and the output projection.
  double attn_params() const {
    if (!mla()) return static_cast<double>(h * (qd + kd + vd) + a * dv * h);
    const int64_t q = q_lora > 0 ? h * q_lora + q_lora * qd : h * qd;
    return static_cast<double>(q + h * (kv_lora + dr) + kv_lora * kv_up_width() + a * dv * h);
  }
  // FLOPs of the attention core (scores and weighted values) per token per key, forward.
  double core_flops_per_key() const { return 2.0 * static_cast<double>(a * (dqk + dv)); }
  // The dense FFN: two matrices, three when gated (SwiGLU).
  double mlp_params() const { return static_cast<double>((gated ? 3 : 2) * h * f); }
  // One expert's FFN.
  double expert_params() const { return static_cast<double>((gated ? 3 : 2) * h * fm); }
  // The weights one token passes through in a layer: attention, and the dense FFN or the router
  // with the top_k routed and the shared experts.
  double active_layer_params(bool moe_layer) const {
    return attn_params() + (moe_layer ? static_cast<double>(topk + shared) * expert_params() + static_cast<double>(h * E)
                                      : mlp_params());
  }
};

// The shape of a resolved spec (resolve_training fills kv_heads, ffn_hidden, moe_ffn_hidden).
ModelShape model_shape(const TrainingSpec& resolved);

}  // namespace dtsim::workloads
