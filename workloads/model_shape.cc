#include "workloads/model_shape.h"

namespace dtsim::workloads {

ModelShape model_shape(const TrainingSpec& t) {
  const ModelSpec& m = t.model;
  ModelShape z{};
  z.L = m.layers;
  z.h = m.hidden;
  z.a = m.heads;
  z.g = m.kv_heads;
  z.d = m.hidden / m.heads;
  z.kvd = z.d * z.g;
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
