#include "workloads/training.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "sim/parallel_rows.h"

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
  std::unordered_map<std::string_view, size_t> at;  // label -> index in critical_ops
  for (const CriticalStep& s : run.critical_path) {
    const RankGraph& g = w.ranks[s.rank];
    const Op& op = g.ops[s.op];
    if (op.kind == OpKind::recv) continue;
    const std::string& label = g.labels[op.label];
    auto [it, added] = at.try_emplace(label, r.critical_ops.size());
    if (added) r.critical_ops.push_back({label, std::string(activity(op)), 0, 0});
    r.critical_ops[it->second].time_s += (s.end - s.start).seconds();
    r.critical_ops[it->second].count += 1;
  }
  std::stable_sort(r.critical_ops.begin(), r.critical_ops.end(),
                   [](const CriticalOp& a, const CriticalOp& b) { return a.time_s > b.time_s; });
  if (r.critical_ops.size() > 12) r.critical_ops.resize(12);
  return r;
}

}  // namespace

namespace {

// Runs `w` (refused when it names GPUs the cluster lacks) and returns what the executor saw.
ExecutionResult execute(const Workload& w, const topology::ClusterSpec& cluster,
                        const collectives::CollectiveCostModel& comm, const ComputeModel& compute, bool record_ops,
                        const OnlineExecution& online) {
  if (const std::string why = w.misfit(cluster.total_gpus()); !why.empty()) throw std::invalid_argument(why);
  ExecutorOptions eo;
  eo.record_ops = record_ops;
  eo.network = online.network;
  eo.watch = online.watch;
  eo.progress = online.progress;
  eo.partitions = online.partitions;
  return Executor(compute, comm, eo).run(w);
}

}  // namespace

TrainingResult evaluate_workload(const Workload& w, const topology::ClusterSpec& cluster,
                                 const collectives::CollectiveCostModel& comm,
                                 topology::Dtype precision, const ComputeModel& compute, const OnlineExecution& online) {
  if (!online.copies.empty()) {
    Workload beside = w;
    add_copies(beside, online.copies);
    return summarise(beside, cluster, execute(beside, cluster, comm, compute, false, online), precision, compute);
  }
  return summarise(w, cluster, execute(w, cluster, comm, compute, false, online), precision, compute);
}

TrainingResult evaluate_workload_traced(Workload w, const topology::ClusterSpec& cluster,
                                        const collectives::CollectiveCostModel& comm, topology::Dtype precision,
                                        const ComputeModel& compute, TrainingTrace& trace,
                                        const OnlineExecution& online) {
  trace.workload = std::move(w);
  add_copies(trace.workload, online.copies);
  trace.execution = execute(trace.workload, cluster, comm, compute, true, online);
  return summarise(trace.workload, cluster, trace.execution, precision, compute);
}

std::vector<OpTotal> op_totals(const TrainingTrace& trace) {
  const Workload& w = trace.workload;
  const auto& times = trace.execution.op_times;
  std::map<std::tuple<int, int, std::string_view>, OpTotal> rows;  // (stage, stream, label)
  std::map<int, double> stage_weight;                              // GPUs the stage's ranks stand for
  auto row = [&](const RankGraph& g, const Op& op) -> OpTotal& {
    const std::string& label = g.labels[op.label];
    auto [it, added] = rows.try_emplace({g.stage, static_cast<int>(op.stream), label});
    if (added) it->second = {g.stage, std::string(name(op.stream)), std::string(activity(op)), label, 0, 0, 0};
    return it->second;
  };
  for (size_t r = 0; r < w.ranks.size() && r < times.size(); ++r) {
    const RankGraph& g = w.ranks[r];
    const double weight = g.represents;
    stage_weight[g.stage] += weight;
    for (size_t i = 0; i < g.ops.size() && i < times[r].size(); ++i) {
      if (g.ops[i].kind == OpKind::recv) continue;
      OpTotal& t = row(g, g.ops[i]);
      t.count += weight;
      t.busy_s += weight * (times[r][i].second - times[r][i].first).seconds();
    }
  }
  for (const CriticalStep& s : trace.execution.critical_path) {
    const RankGraph& g = w.ranks[s.rank];
    if (g.ops[s.op].kind == OpKind::recv) continue;
    row(g, g.ops[s.op]).critical_s += (s.end - s.start).seconds();
  }
  std::vector<OpTotal> out;
  out.reserve(rows.size());
  for (auto& [key, t] : rows) {
    const double weight = stage_weight[t.stage];
    if (weight > 0) {
      t.count /= weight;
      t.busy_s /= weight;
    }
    out.push_back(std::move(t));
  }
  std::stable_sort(out.begin(), out.end(), [](const OpTotal& a, const OpTotal& b) {
    if (a.stage != b.stage) return a.stage < b.stage;
    return a.busy_s > b.busy_s;
  });
  return out;
}

namespace {
// Per communicator, the simulated ranks (indices into w.ranks) that are its members, in order:
// each issues the same collectives.
std::vector<std::vector<uint32_t>> simulated_members(const Workload& w) {
  std::vector<std::vector<uint32_t>> members(w.comms.size());
  for (size_t r = 0; r < w.ranks.size(); ++r) {
    for (size_t c = 0; c < w.comms.size(); ++c) {
      const auto& ranks = w.comms[c].ranks;
      if (std::find(ranks.begin(), ranks.end(), w.ranks[r].gpu) != ranks.end()) {
        members[c].push_back(static_cast<uint32_t>(r));
      }
    }
  }
  return members;
}

// A distinct collective: (kind, bytes, communicator), a send counted as a send_recv.
using CollectiveKey = std::tuple<int, int64_t, int>;
CollectiveKey key_of(const Op& op) {
  const auto kind = op.kind == OpKind::send ? collectives::CollectiveKind::send_recv : op.collective;
  return {static_cast<int>(kind), op.bytes.count(), op.comm};
}

// Each collective's bytes per link as the flow model prices it, routed on the model's threads.
std::vector<std::vector<std::pair<topology::LinkId, double>>> routed_links(
    const std::vector<CollectiveKey>& keys, const Workload& w, const collectives::FlowCollectiveModel& flows) {
  std::vector<std::vector<std::pair<topology::LinkId, double>>> routed(keys.size());
  sim::for_each_row(keys.size(), flows.threads(), [&](size_t i) {
    const auto& [kind, bytes, comm] = keys[i];
    routed[i] = flows.link_bytes(static_cast<collectives::CollectiveKind>(kind), Bytes(bytes),
                                 w.comms[static_cast<size_t>(comm)]);
  });
  return routed;
}
}  // namespace

std::vector<LinkTraffic> link_traffic(const Workload& w, const collectives::FlowCollectiveModel& flows) {
  // How many simulated ranks issue each communicator's collectives: each issues the same one.
  const std::vector<std::vector<uint32_t>> simulated = simulated_members(w);
  // Instances per distinct collective.
  std::map<CollectiveKey, double> count;
  for (const RankGraph& g : w.ranks) {
    for (const Op& op : g.ops) {
      if (op.comm < 0 || op.bytes.count() <= 0) continue;
      if (op.kind != OpKind::collective && op.kind != OpKind::send) continue;
      const double issuers =
          op.kind == OpKind::send ? 1.0 : std::max<double>(1, simulated[static_cast<size_t>(op.comm)].size());
      count[key_of(op)] += op.repeat / issuers;
    }
  }
  // Routed side by side, summed in key order.
  std::vector<CollectiveKey> keys;
  for (const auto& [key, n] : count) keys.push_back(key);
  const auto routed = routed_links(keys, w, flows);
  std::map<topology::LinkId, LinkTraffic> on;
  size_t i = 0;
  for (const auto& [key, n] : count) {
    const auto& [kind, bytes, comm] = key;
    const double seconds = flows.estimate(static_cast<collectives::CollectiveKind>(kind), Bytes(bytes),
                                          w.comms[static_cast<size_t>(comm)]).time.seconds();
    for (const auto& [link, b] : routed[i++]) {
      LinkTraffic& t = on[link];
      t.link = link;
      t.bytes += n * b;
      t.busy_s += n * seconds;
    }
  }
  std::vector<LinkTraffic> out;
  out.reserve(on.size());
  for (const auto& [link, t] : on) out.push_back(t);
  return out;
}

std::vector<LinkUse> link_uses(const TrainingTrace& trace, const collectives::FlowCollectiveModel& flows,
                               const std::vector<topology::LinkId>& wanted) {
  const Workload& w = trace.workload;
  const auto& times = trace.execution.op_times;
  // A communicator's collectives count once: from the first simulated rank among its members.
  const std::vector<std::vector<uint32_t>> simulated = simulated_members(w);
  auto speaks = [&](const Op& op, size_t r) {
    const auto& members = simulated[static_cast<size_t>(op.comm)];
    return op.kind == OpKind::send || (op.kind == OpKind::collective && !members.empty() && members.front() == r);
  };
  const std::set<topology::LinkId> want(wanted.begin(), wanted.end());
  auto issued = [&](const Op& op, size_t r) { return op.comm >= 0 && op.bytes.count() > 0 && speaks(op, r); };
  // The wanted links' bytes per distinct collective, each routed once.
  std::map<CollectiveKey, size_t> index;
  for (size_t r = 0; r < w.ranks.size() && r < times.size(); ++r) {
    const RankGraph& g = w.ranks[r];
    for (size_t i = 0; i < g.ops.size() && i < times[r].size(); ++i) {
      if (issued(g.ops[i], r)) index.try_emplace(key_of(g.ops[i]), index.size());
    }
  }
  std::vector<CollectiveKey> keys(index.size());
  for (const auto& [key, i] : index) keys[i] = key;
  auto routed = routed_links(keys, w, flows);
  for (auto& on : routed) std::erase_if(on, [&](const auto& lb) { return !want.contains(lb.first); });
  std::vector<LinkUse> uses;
  for (size_t r = 0; r < w.ranks.size() && r < times.size(); ++r) {
    const RankGraph& g = w.ranks[r];
    for (size_t i = 0; i < g.ops.size() && i < times[r].size(); ++i) {
      const Op& op = g.ops[i];
      if (!issued(op, r)) continue;
      const auto [start, end] = times[r][i];
      for (const auto& [link, b] : routed[index.at(key_of(op))]) {
        uses.push_back({link, start, end, b * op.repeat, static_cast<uint32_t>(r), static_cast<uint32_t>(i)});
      }
    }
  }
  std::stable_sort(uses.begin(), uses.end(), [](const LinkUse& a, const LinkUse& b) {
    return a.link != b.link ? a.link < b.link : a.start < b.start;
  });
  return uses;
}

TrainingResult run_training_traced(const TrainingSpec& spec, const topology::ClusterSpec& cluster,
                                   const collectives::CollectiveCostModel& comm, TrainingTrace& trace,
                                   const GeneratorOptions& options, const OnlineExecution& online) {
  // Resolved once: `activation_recompute: auto` prices the memory estimate up to three times.
  const TrainingSpec t = resolve_training(spec, cluster);
  trace.workload = generate_megatron(t, cluster, options);
  add_copies(trace.workload, online.copies);
  const ComputeModel compute(cluster.gpu, t.attention);
  trace.execution = execute(trace.workload, cluster, comm, compute, true, online);
  TrainingResult r = summarise(trace.workload, cluster, trace.execution, t.precision, compute);
  r.memory = estimate_memory(t, cluster);
  return r;
}

TrainingResult run_training(const TrainingSpec& spec, const topology::ClusterSpec& cluster,
                            const collectives::CollectiveCostModel& comm, const GeneratorOptions& options,
                            const OnlineExecution& online) {
  const TrainingSpec t = resolve_training(spec, cluster);  // once, as above
  const Workload w = generate_megatron(t, cluster, options);
  const ComputeModel compute(cluster.gpu, t.attention);
  TrainingResult r = evaluate_workload(w, cluster, comm, t.precision, compute, online);
  r.memory = estimate_memory(t, cluster);
  return r;
}

}  // namespace dtsim::workloads
