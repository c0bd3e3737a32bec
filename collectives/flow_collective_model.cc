#include "collectives/flow_collective_model.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "collectives/algorithm_cost.h"
#include "collectives/schedule.h"
#include "collectives/schedule_executor.h"
#include "network/network_model.h"
#include "sim/engine.h"
#include "sim/error.h"
#include "sim/parallel_rows.h"

namespace dtsim::collectives {
double flow_channel_cap(const ModelParameters& p, Algorithm algo, Protocol protocol,
                        bool spans_nodes, int compute_capability, double cap_scale) {
  if (algo == Algorithm::nvls_tree) return std::numeric_limits<double>::infinity();
  const double payload = channel_rate(p, protocol, spans_nodes, compute_capability);
  return payload * 1e9 * cap_scale / p.bandwidth_fraction(protocol);
}

bool copies_pairwise(Algorithm algo, CollectiveKind kind) {
  return algo == Algorithm::p2p &&
         (kind == CollectiveKind::send_recv || kind == CollectiveKind::hypercube);
}

double flow_p2p_cap(const HardwareView& hw, const CommShape& shape, int lowered_channels) {
  const double pair = shape.ranks_per_node == 2 ? hw.intra_pair_bw : hw.intra_bw;
  return pair * hw.params.p2p_efficiency * 1e9 / std::max(1, lowered_channels);
}

bool has_flow_lowering(Algorithm algo, CollectiveKind kind) {
  switch (algo) {
    case Algorithm::ring:
      return !point_to_point(kind);
    case Algorithm::tree:
    case Algorithm::halving_doubling:
    case Algorithm::nvls_tree:  // its network part (nvls_tree_network_schedule)
      return kind == CollectiveKind::all_reduce;
    case Algorithm::pairwise:
      return kind == CollectiveKind::all_to_all;
    case Algorithm::p2p:
      return point_to_point(kind) && kind != CollectiveKind::all_to_all;
    default:
      return false;
  }
}

FlowChoice flow_choice(const AnalyticalCollectiveModel& model, CollectiveKind kind, Bytes bytes,
                       const Communicator& comm, const CollectiveEstimate& tuned) {
  if (has_flow_lowering(tuned.algorithm, kind)) return {tuned.algorithm, tuned.protocol};
  FlowChoice best;
  double best_us = std::numeric_limits<double>::infinity();
  // Within what the scenario lets the tuner choose (collectives.algorithm / protocol lists).
  const CollectiveOptions& o = model.options();
  auto allowed = [](const auto& list, auto x) {
    return list.empty() || std::find(list.begin(), list.end(), x) != list.end();
  };
  for (Algorithm candidate : {Algorithm::ring, Algorithm::tree}) {
    if (!has_flow_lowering(candidate, kind) || !allowed(o.algorithms, candidate)) continue;
    for (Protocol p : {Protocol::ll, Protocol::ll128, Protocol::simple}) {
      if ((o.protocol && p != *o.protocol) || !allowed(o.protocols, p)) continue;
      try {
        const double us = model.price(kind, bytes, comm, candidate, p).time_us(bytes.as_double());
        if (us < best_us) best_us = us, best = {candidate, p};
      } catch (const InputError&) {
        // This pair cannot run the collective here; another may.
      }
    }
  }
  return best;
}

std::vector<Communicator> sibling_groups(const Communicator& comm, int gpus_per_node, int gpu_count) {
  std::vector<Communicator> groups{comm};
  const int g = gpus_per_node;
  if (g <= 1 || comm.ranks.empty()) return groups;
  std::vector<char> used(static_cast<size_t>(gpu_count), 0);
  std::map<int, int> per_node;  // ranks of comm in each node it spans
  for (int r : comm.ranks) {
    used[static_cast<size_t>(r)] = 1;
    ++per_node[r / g];
  }
  int most = 0;
  for (const auto& [node, count] : per_node) most = std::max(most, count);
  for (int shift = 1; shift < g && static_cast<int>(groups.size()) * most < g; ++shift) {
    Communicator s;
    bool free = true;
    for (int r : comm.ranks) {
      const int moved = r / g * g + (r % g + shift) % g;
      if (moved >= gpu_count || used[static_cast<size_t>(moved)]) {
        free = false;
        break;
      }
      s.ranks.push_back(moved);
    }
    if (!free) continue;
    for (int r : s.ranks) used[static_cast<size_t>(r)] = 1;
    groups.push_back(std::move(s));
  }
  return groups;
}

FlowCollectiveModel::FlowCollectiveModel(const topology::ClusterSpec& spec,
                                         const CollectiveOptions& options,
                                         const ModelParameters& params,
                                         std::shared_ptr<network::flow::FlowSolver> accelerator,
                                         int threads, int job_gpus, Time completion_window,
                                         double completion_precision)
    : analytical_(spec, options, params),
      cluster_(topology::build_cluster(spec)),
      accelerator_(std::move(accelerator)),
      threads_(threads),
      replica_shifts_(replica_shifts(job_gpus, spec.gpus_per_node, cluster_->gpu_count())),
      flow_options_(flow_model_options(analytical_, spec.nic.kind)) {
  flow_options_.completion_window = completion_window;
  flow_options_.completion_precision = completion_precision;
}

network::LinkEfficiency link_efficiency(const ModelParameters& params, topology::NicKind nic) {
  return {.nvlink = params.nvlink_efficiency, .pcie = 1.0, .network = params.net_efficiency(nic)};
}

network::FlowModelOptions flow_model_options(const AnalyticalCollectiveModel& model, topology::NicKind nic) {
  network::FlowModelOptions options;
  options.link_efficiency = link_efficiency(model.parameters(), nic);
  if (model.hardware().host_staged_intra) options.host_staged_rate = model.hardware().intra_bw * 1e9;
  options.pcie_peer_efficiency = model.parameters().pcie_efficiency;
  return options;
}

NetworkPlan FlowCollectiveModel::plan(CollectiveKind kind, Bytes bytes, const Communicator& comm,
                                      const CollectiveEstimate& tuned) const {
  return plan_on_network(analytical_, *cluster_, kind, bytes, comm, tuned, /*coalesce=*/true);
}

std::vector<Communicator> FlowCollectiveModel::groups_of(const Communicator& comm) const {
  // Siblings fill the NVLink domain (an NVL72 rack of trays is one node of the graph and of the
  // closed form's network figures).
  std::vector<Communicator> groups =
      sibling_groups(comm, analytical_.hardware().domain_gpus, cluster_->gpu_count());
  // The job's copies run theirs at the same moment; inside one node they share no link with it.
  if (!replica_shifts_.empty() && analytical_.hardware().shape_of(comm).nodes > 1) {
    const size_t siblings = groups.size();
    for (const int shift : replica_shifts_) {
      for (size_t i = 0; i < siblings; ++i) {
        Communicator copy = groups[i];
        bool fits = true;
        for (int& r : copy.ranks) fits = fits && (r += shift) < cluster_->gpu_count();
        if (fits) groups.push_back(std::move(copy));
      }
    }
  }
  return groups;
}

Schedule FlowCollectiveModel::with_groups(const Schedule& own, const Communicator& comm) const {
  return with_groups(own, comm, groups_of(comm));
}

Schedule FlowCollectiveModel::with_groups(const Schedule& own, const Communicator& comm,
                                          const std::vector<Communicator>& groups) const {
  if (groups.size() == 1) return own;
  std::unordered_map<int, size_t> position;
  for (size_t i = 0; i < comm.ranks.size(); ++i) position.emplace(comm.ranks[i], i);
  Schedule all;
  std::vector<uint32_t> deps;
  for (const Communicator& group : groups) {
    const auto offset = static_cast<uint32_t>(all.transfers().size());
    for (const ScheduledTransfer& t : own.transfers()) {
      deps.clear();
      for (uint32_t d : own.deps_of(t)) deps.push_back(d + offset);
      all.add(group.ranks[position.at(t.src_gpu)], group.ranks[position.at(t.dst_gpu)], t.bytes, deps,
              t.reduce_bytes, t.step, t.channel, t.nic);
    }
  }
  return all;
}

Schedule FlowCollectiveModel::priced_schedule(CollectiveKind kind, Bytes bytes, const Communicator& comm) const {
  if (comm.size() <= 1 || bytes.count() <= 0) return {};
  CollectiveEstimate tuned = analytical_.estimate(kind, bytes, comm);
  if (tuned.algorithm == Algorithm::nvls) {
    const FlowChoice run = flow_choice(analytical_, kind, bytes, comm, tuned);
    tuned.algorithm = run.algorithm;
    tuned.protocol = run.protocol;
  }
  return with_groups(plan(kind, bytes, comm, tuned).schedule, comm);
}

std::vector<std::pair<topology::LinkId, double>> FlowCollectiveModel::link_bytes(CollectiveKind kind, Bytes bytes,
                                                                                 const Communicator& comm) const {
  const Schedule schedule = priced_schedule(kind, bytes, comm);
  // Summed by link in transfer order, then listed in link order.
  std::vector<double> on(cluster_->links().size(), 0.0);
  std::vector<char> seen(on.size(), 0);
  std::vector<topology::LinkId> touched;
  const std::vector<ScheduledTransfer>& ts = schedule.transfers();
  for (uint32_t i = 0; i < ts.size(); ++i) {
    const ScheduledTransfer& t = ts[i];
    const std::vector<std::vector<topology::LinkId>> paths = network::transfer_routes(
        *cluster_, {.src_gpu = t.src_gpu, .dst_gpu = t.dst_gpu, .bytes = t.bytes, .flow_hash = transfer_hash(i),
                    .nic = t.nic});
    for (const std::vector<topology::LinkId>& path : paths) {
      for (topology::LinkId l : path) {
        if (!seen[l]) {
          seen[l] = 1;
          touched.push_back(l);
        }
        on[l] += t.bytes.as_double() / static_cast<double>(paths.size());
      }
    }
  }
  std::sort(touched.begin(), touched.end());
  std::vector<std::pair<topology::LinkId, double>> out;
  out.reserve(touched.size());
  for (topology::LinkId l : touched) out.emplace_back(l, on[l]);
  return out;
}

FlowCollectiveModel::CacheKey FlowCollectiveModel::cache_key(CollectiveKind kind, Bytes bytes,
                                                             const Communicator& comm) {
  return {static_cast<int>(kind), bytes.count(), comm.ranks};
}

CollectiveEstimate FlowCollectiveModel::estimate(CollectiveKind kind, Bytes bytes, const Communicator& comm) const {
  CacheKey key = cache_key(kind, bytes, comm);
  {
    const std::lock_guard lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  const CollectiveEstimate e = price(kind, bytes, comm);
  const std::lock_guard lock(mutex_);
  return cache_.try_emplace(std::move(key), e).first->second;
}

void FlowCollectiveModel::prepare(std::span<const CollectiveQuery> collectives) const {
  // Those not priced yet, each once, in the order given (the first failing one is the one whose
  // error a serial run would have met first).
  std::vector<std::pair<CacheKey, const CollectiveQuery*>> todo;
  {
    const std::lock_guard lock(mutex_);
    std::set<CacheKey> seen;
    for (const CollectiveQuery& q : collectives) {
      CacheKey key = cache_key(q.kind, q.bytes, *q.comm);
      if (!cache_.contains(key) && seen.insert(key).second) todo.emplace_back(std::move(key), &q);
    }
  }
  // Each is priced on its own flow set and solver; they share only the router's caches.
  std::vector<std::optional<CollectiveEstimate>> priced(todo.size());
  std::atomic<size_t> done{0};
  std::atomic<bool> stopped{on_priced_ && !on_priced_(0, todo.size())};
  sim::for_each_row(todo.size(), threads_, [&](size_t i) {
    if (stopped.load()) return;
    const CollectiveQuery& q = *todo[i].second;
    priced[i] = price(q.kind, q.bytes, *q.comm);
    if (on_priced_ && !on_priced_(done.fetch_add(1) + 1, todo.size())) stopped.store(true);
  });
  const std::lock_guard lock(mutex_);
  for (size_t i = 0; i < todo.size(); ++i) {
    if (priced[i]) cache_.try_emplace(std::move(todo[i].first), *priced[i]);
  }
  if (stopped.load()) throw PricingStopped(done.load(), todo.size());
}

CollectiveEstimate FlowCollectiveModel::price(CollectiveKind kind, Bytes bytes,
                                              const Communicator& comm) const {
  const ScheduleBudget budget(max_transfers_);
  CollectiveEstimate e = analytical_.estimate(kind, bytes, comm);
  if (comm.size() <= 1 || bytes.count() <= 0) return e;
  const NetworkPlan p = plan(kind, bytes, comm, e);
  e.algorithm = p.algorithm;
  e.protocol = p.protocol;
  if (p.closed_form) {
    e.time = time_alone_by_rank(p, kind, {&comm, 1}, p.schedule, *cluster_, nullptr);
    return e;
  }
  const std::vector<Communicator> groups = groups_of(comm);
  const Schedule schedule = with_groups(p.schedule, comm, groups);
  network::FlowModelOptions options = flow_options_;
  std::unique_lock<std::mutex> accelerated;
  if (accelerator_) {
    options.accelerator = accelerator_;
    accelerated = std::unique_lock(accelerator_mutex_);
  }
  network::FlowNetworkModel network(*cluster_, std::move(options));
  // Rank by rank, every member arriving at once: what online execution gives it alone.
  const Time alone = time_alone_by_rank(p, kind, groups, schedule, *cluster_, &network);
  const network::NetworkCounters counted = network.counters();
  solves_ += counted.solves;
  flows_ += counted.flows;
  if (network.bytes_delivered() != schedule.total_bytes()) {
    throw InputError({}, "network.model", "a collective's flow crosses a link with no capacity");
  }
  e.time = alone;
  return e;
}

}  // namespace dtsim::collectives
