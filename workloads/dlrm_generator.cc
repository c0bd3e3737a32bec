#include "workloads/dlrm_generator.h"

#include <stdexcept>

namespace dtsim::workloads {
namespace {

using collectives::CollectiveKind;

struct Builder {
  RankGraph& r;
  topology::Dtype dtype;
  int64_t B;

  uint32_t gemm(const char* label, std::vector<uint32_t> after, int64_t m, int64_t n, int64_t k, double scale = 1) {
    Op op;
    op.compute = ComputeKind::gemm;
    op.dtype = dtype;
    op.m = m;
    op.n = n;
    op.k = k;
    op.flops = 2.0 * static_cast<double>(m * n * k) * scale;
    op.bytes = Bytes((m * k + k * n + m * n) * B * static_cast<int64_t>(scale));
    op.label = r.label(label);
    return r.add(op, after);
  }
  uint32_t memory(const char* label, std::vector<uint32_t> after, int64_t bytes) {
    Op op;
    op.compute = ComputeKind::elementwise;
    op.dtype = dtype;
    op.bytes = Bytes(bytes);
    op.label = r.label(label);
    return r.add(op, after);
  }
  uint32_t coll(const char* label, std::vector<uint32_t> after, Stream s, CollectiveKind kind, int comm, int64_t bytes) {
    Op op = Op::collective_on(s, kind, comm, dtype, Bytes(bytes));
    op.label = r.label(label);
    return r.add(op, after);
  }
};

}  // namespace

Workload generate_dlrm(const DlrmSpec& spec, const topology::ClusterSpec& cluster, bool all_ranks) {
  const int gpus = cluster.total_gpus();
  if (gpus < 1 || spec.tables < 1 || spec.batch_per_gpu < 1 || spec.bottom_mlp.empty() || spec.top_mlp.empty()) {
    throw std::invalid_argument("dlrm workload: needs GPUs, tables, a batch and both MLPs");
  }
  Workload w;
  w.name = "dlrm";
  w.total_gpus = gpus;
  collectives::Communicator all;
  for (int g = 0; g < gpus; ++g) all.ranks.push_back(g);
  const int world = w.add_comm(std::move(all));
  w.ranks.resize(1);
  RankGraph& r = w.ranks[0];
  r.represents = gpus;
  const int64_t B = spec.precision == topology::Dtype::fp32 ? 4 : 2;
  Builder b{r, spec.precision, B};

  const int64_t batch = spec.batch_per_gpu;
  const int64_t global = batch * gpus;
  const int64_t dim = spec.embedding_dim;
  const int64_t local_tables = (spec.tables + gpus - 1) / gpus;
  // Each GPU looks up its tables for the whole global batch (fp32 rows), pools them, and sends
  // each GPU the pooled vectors of its samples: all_to_all of batch x tables x dim per GPU.
  const int64_t lookup_bytes = global * local_tables * spec.pooling * dim * 4;
  const int64_t a2a_bytes = batch * spec.tables * dim * B;

  const uint32_t lookup = b.memory("embedding.lookup", {}, lookup_bytes);
  const uint32_t a2a = b.coll("embedding.all_to_all.fwd", {lookup}, Stream::ep, CollectiveKind::all_to_all, world, a2a_bytes);
  // Bottom MLP runs while the embeddings are in flight.
  uint32_t x = static_cast<uint32_t>(-1);
  int64_t in = spec.dense_features;
  double dense_params = 0;
  for (int width : spec.bottom_mlp) {
    x = x == static_cast<uint32_t>(-1) ? b.gemm("bottom_mlp.fwd", {lookup}, batch, width, in) : b.gemm("bottom_mlp.fwd", {x}, batch, width, in);
    dense_params += static_cast<double>(in * width);
    in = width;
  }
  const int64_t features = spec.tables + 1;
  // Pairwise dot products of the feature vectors: a batched GEMM per sample.
  Op inter;
  inter.compute = ComputeKind::gemm;
  inter.dtype = spec.precision;
  inter.m = features;
  inter.n = features;
  inter.k = dim;
  inter.batch = batch;
  inter.flops = 2.0 * static_cast<double>(features * features * dim * batch);
  inter.bytes = Bytes((2 * features * dim + features * features) * batch * B);
  inter.label = r.label("interaction.fwd");
  x = r.add(inter, {x, a2a});
  in = features * (features - 1) / 2 + spec.bottom_mlp.back();
  std::vector<int64_t> top_in;
  for (int width : spec.top_mlp) {
    top_in.push_back(in);
    x = b.gemm("top_mlp.fwd", {x}, batch, width, in);
    dense_params += static_cast<double>(in * width);
    in = width;
  }
  // Backward: top MLP, then the interaction; the dense gradients are all-reduced in one bucket
  // per MLP as soon as that MLP's backward is done.
  for (size_t i = spec.top_mlp.size(); i-- > 0;) x = b.gemm("top_mlp.bwd", {x}, batch, spec.top_mlp[i], top_in[i], 2);
  double top_params = 0;
  for (size_t i = 0; i < spec.top_mlp.size(); ++i) top_params += static_cast<double>(top_in[i] * spec.top_mlp[i]);
  const uint32_t top_ar = b.coll("top_mlp.grad.all_reduce", {x}, Stream::dp, CollectiveKind::all_reduce, world,
                                 static_cast<int64_t>(top_params) * B);
  Op inter_bwd = inter;
  inter_bwd.flops *= 2;
  inter_bwd.label = r.label("interaction.bwd");
  x = r.add(inter_bwd, {x});
  const uint32_t a2a_bwd = b.coll("embedding.all_to_all.bwd", {x}, Stream::ep, CollectiveKind::all_to_all, world, a2a_bytes);
  in = spec.dense_features;
  std::vector<int64_t> bottom_in;
  for (int width : spec.bottom_mlp) {
    bottom_in.push_back(in);
    in = width;
  }
  for (size_t i = spec.bottom_mlp.size(); i-- > 0;) x = b.gemm("bottom_mlp.bwd", {x}, batch, spec.bottom_mlp[i], bottom_in[i], 2);
  const uint32_t bottom_ar = b.coll("bottom_mlp.grad.all_reduce", {x}, Stream::dp, CollectiveKind::all_reduce, world,
                                    static_cast<int64_t>(dense_params - top_params) * B);
  // Sparse update: the looked-up rows are read and written again (fused backward + SGD/Adagrad).
  const uint32_t update = b.memory("embedding.update", {a2a_bwd}, 2 * lookup_bytes);
  Op step;
  step.compute = ComputeKind::optimizer;
  step.dtype = topology::Dtype::fp32;
  step.bytes = Bytes(static_cast<int64_t>(dense_params * 30));
  step.label = r.label("optimizer.step");
  r.add(step, {top_ar, bottom_ar, update});

  double per_sample = 0;
  for (size_t i = 0; i < spec.top_mlp.size(); ++i) per_sample += 2.0 * static_cast<double>(top_in[i] * spec.top_mlp[i]);
  for (size_t i = 0; i < spec.bottom_mlp.size(); ++i) per_sample += 2.0 * static_cast<double>(bottom_in[i] * spec.bottom_mlp[i]);
  per_sample += 2.0 * static_cast<double>(features * features * dim);
  w.model_flops = 3 * per_sample * static_cast<double>(global);
  w.tokens = static_cast<double>(global);  // samples
  if (all_ranks) {
    const RankGraph program = std::move(w.ranks[0]);
    w.ranks.assign(static_cast<size_t>(gpus), program);
    for (int g = 0; g < gpus; ++g) {
      w.ranks[static_cast<size_t>(g)].gpu = g;
      w.ranks[static_cast<size_t>(g)].represents = 1;
    }
  }
  return w;
}

}  // namespace dtsim::workloads
