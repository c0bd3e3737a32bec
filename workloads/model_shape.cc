#include "workloads/model_shape.h"

namespace dtsim::workloads {

ModelShape model_shape(const TrainingSpec& t) {
  const ModelSpec& m = t.model;
  ModelShape z{};
  z.L = m.layers;
  z.h = m.hidden;
  z.a = m.heads;
  z.g = m.kv_heads;
  const int64_t head = m.head_dim > 0 ? m.head_dim : m.hidden / m.heads;
  z.dr = m.mla() ? m.qk_rope_head_dim : 0;
  z.dqk = head + z.dr;
  z.dv = m.v_head_dim > 0 ? m.v_head_dim : head;
  z.qd = z.a * z.dqk;
  // MLA expands its latent to full keys and values for every head.
  z.kd = (m.mla() ? z.a : z.g) * z.dqk;
  z.vd = (m.mla() ? z.a : z.g) * z.dv;
  z.q_lora = m.mla() ? m.q_lora_rank : 0;
  z.kv_lora = m.kv_lora_rank;
  z.mtp = m.mtp_layers;
  z.f = m.ffn_hidden;
  z.s = m.seq_len;
  z.V = m.vocab;
  z.E = m.experts;
  z.topk = m.top_k;
  z.fm = m.moe_ffn_hidden;
  z.shared = m.shared_experts;
  z.first_dense = m.first_dense_layers;
  z.gated = m.gated_ffn;
  return z;
}

}  // namespace dtsim::workloads
