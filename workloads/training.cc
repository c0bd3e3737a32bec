#include "workloads/training.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace dtsim::workloads {

namespace {

TrainingResult summarise(const Workload& w, const topology::ClusterSpec& cluster, const ExecutionResult& run,
                         topology::Dtype precision, const ComputeModel& compute) {
  TrainingResult r;
  r.workload = w.name;
  r.gpus = w.total_gpus > 0 ? w.total_gpus : cluster.total_gpus();
  r.simulated_ranks = static_cast<int>(w.ranks.size());
  r.ops = w.op_count();
  r.events = run.events;
  r.fingerprint = run.fingerprint;
  r.iteration_time_s = run.iteration.seconds();
  if (r.iteration_time_s > 0 && r.gpus > 0) {
    r.tflops_per_gpu = w.model_flops / r.iteration_time_s / r.gpus * 1e-12;
    r.mfu = r.tflops_per_gpu * 1e12 / compute.peak_flops(precision);
    r.tokens_per_s_per_gpu = w.tokens / r.iteration_time_s / r.gpus;
  }
  r.breakdown = run.breakdown;
  r.critical_split = run.critical_split;
  std::map<std::pair<int, uint32_t>, size_t> at;  // (rank, label) -> index
  for (const CriticalStep& s : run.critical_path) {
    const RankGraph& g = w.ranks[s.rank];
    const Op& op = g.ops[s.op];
    const std::string& label = g.labels[op.label];
    auto key = std::make_pair(-1, op.label);
    std::string what(activity(op));
    if (op.kind == OpKind::recv) continue;
    size_t idx = r.critical_ops.size();
    for (size_t i = 0; i < r.critical_ops.size(); ++i) {
      if (r.critical_ops[i].label == label) { idx = i; break; }
    }
    if (idx == r.critical_ops.size()) r.critical_ops.push_back({label, what, 0, 0});
    r.critical_ops[idx].time_s += (s.end - s.start).seconds();
    r.critical_ops[idx].count += 1;
    (void)key;
  }
  std::stable_sort(r.critical_ops.begin(), r.critical_ops.end(),
                   [](const CriticalOp& a, const CriticalOp& b) { return a.time_s > b.time_s; });
  if (r.critical_ops.size() > 12) r.critical_ops.resize(12);
  return r;
}

}  // namespace

TrainingResult evaluate_workload(const Workload& w, const topology::ClusterSpec& cluster,
                                 const collectives::CollectiveCostModel& comm,
                                 topology::Dtype precision, const ComputeModel& compute) {
  if (const std::string why = w.misfit(cluster.total_gpus()); !why.empty()) throw std::invalid_argument(why);
  Executor ex(compute, comm);
  return summarise(w, cluster, ex.run(w), precision, compute);
}

TrainingResult run_training_traced(const TrainingSpec& spec, const topology::ClusterSpec& cluster,
                                   const collectives::CollectiveCostModel& comm, TrainingTrace& trace,
                                   const GeneratorOptions& options) {
  // Resolved once: `activation_recompute: auto` prices the memory estimate up to three times.
  const TrainingSpec t = resolve_training(spec, cluster);
  trace.workload = generate_megatron(t, cluster, options);
  const ComputeModel compute(cluster.gpu, t.attention);
  ExecutorOptions eo;
  eo.record_ops = true;
  trace.execution = Executor(compute, comm, eo).run(trace.workload);
  TrainingResult r = summarise(trace.workload, cluster, trace.execution, t.precision, compute);
  r.memory = estimate_memory(t, cluster);
  return r;
}

TrainingResult run_training(const TrainingSpec& spec, const topology::ClusterSpec& cluster,
                            const collectives::CollectiveCostModel& comm, const GeneratorOptions& options) {
  const TrainingSpec t = resolve_training(spec, cluster);  // once, as above
  const Workload w = generate_megatron(t, cluster, options);
  const ComputeModel compute(cluster.gpu, t.attention);
  TrainingResult r = evaluate_workload(w, cluster, comm, t.precision, compute);
  r.memory = estimate_memory(t, cluster);
  return r;
}

}  // namespace dtsim::workloads
