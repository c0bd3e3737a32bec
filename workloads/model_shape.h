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
  int64_t L, h, a, g, d, kvd, f, s, V, E, topk, fm, shared, first_dense;
  bool gated;
  bool moe(int64_t layer) const { return E > 1 && layer >= first_dense; }
  // QKV (GQA: K and V at kvd) and the output projection.
  double attn_params() const { return static_cast<double>(h * (h + 2 * kvd) + h * h); }
  // The dense FFN: two matrices, three when gated (SwiGLU).
  double mlp_params() const { return static_cast<double>((gated ? 3 : 2) * h * f); }
  // One expert's FFN.
  double expert_params() const { return static_cast<double>((gated ? 3 : 2) * h * fm); }
};

// The shape of a resolved spec (resolve_training fills kv_heads, ffn_hidden, moe_ffn_hidden).
ModelShape model_shape(const TrainingSpec& resolved);

}  // namespace dtsim::workloads
