#include "collectives/flow_collective_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "collectives/algorithm_cost.h"
#include "collectives/schedule.h"
#include "network/network_model.h"
#include "sim/error.h"
#include "sim/parallel_rows.h"

namespace dtsim::collectives {
namespace {
constexpr uint32_t kNoLink = UINT32_MAX;
}  // namespace

double flow_channel_cap(const ModelParameters& p, Algorithm algo, Protocol protocol,
                        bool spans_nodes, double cap_scale) {
  if (algo == Algorithm::nvls_tree) return std::numeric_limits<double>::infinity();
  const double payload = channel_rate(p, protocol, spans_nodes);
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
                                         int threads, int job_gpus)
    : spec_(spec),
      analytical_(spec, options, params),
      cluster_(topology::build_cluster(spec)),
      accelerator_(std::move(accelerator)),
      threads_(threads),
      replica_shifts_(replica_shifts(job_gpus, spec.gpus_per_node, cluster_->gpu_count())) {
  // Links at the efficiency NCCL's kernels and NICs reach on them; a GPU-GPU peer copy's own limit
  // over PCIe (pcie_efficiency) is a cap on that flow (bandwidth_seconds).
  const network::LinkEfficiency efficiency = link_efficiency(params, spec.nic.kind);
  for (const topology::Link& l : cluster_->links())
    link_capacity_.push_back(l.bandwidth.bytes_per_s() * efficiency.of(l.kind));
}

network::LinkEfficiency link_efficiency(const ModelParameters& params, topology::NicKind nic) {
  return {.nvlink = params.nvlink_efficiency, .pcie = 1.0, .network = params.net_efficiency(nic)};
}

FlowCollectiveModel::FlowSet FlowCollectiveModel::flow_set(Algorithm algo, CollectiveKind kind, Bytes bytes,
                                                          const Communicator& comm, int channels) const {
  const int per_node = analytical_.hardware().shape_of(comm).ranks_per_node;
  // Rings and trees pin channel c to NIC slot (c / per_node) mod the NICs each GPU has
  // (schedule.h); NVLS-tree's rail trees, one rank a node, pin channel c to slot c mod the NICs.
  const int nics_per_gpu = spec_.nics_per_gpu();
  const bool pinned =
      algo == Algorithm::ring || algo == Algorithm::tree || algo == Algorithm::nvls_tree;
  // Bytes each (sender, receiver, channel) moves over the whole collective, every group at once.
  struct Key {
    int src, dst, channel;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return (static_cast<size_t>(k.src) * 1'000'003u + static_cast<size_t>(k.dst)) * 131u +
             static_cast<size_t>(k.channel);
    }
  };
  std::unordered_map<Key, double, KeyHash> pair_bytes;
  std::vector<Key> order;  // first-seen order keeps the flow set (and the solve) deterministic
  auto add = [&](int src, int dst, int channel, double b) {
    if (src == dst || b <= 0) return;
    auto [it, fresh] = pair_bytes.try_emplace(Key{src, dst, channel}, 0.0);
    if (fresh) order.push_back(it->first);
    it->second += b;
  };
  // Siblings fill the NVLink domain (an NVL72 rack of trays is one node of the graph and of the
  // closed form's network figures).
  std::vector<Communicator> groups = sibling_groups(comm, analytical_.hardware().domain_gpus, cluster_->gpu_count());
  // The job's copies run theirs at the same moment; inside one node they share no link with it.
  if (!replica_shifts_.empty() && analytical_.hardware().shape_of(comm).nodes > 1) {
    const size_t own = groups.size();
    for (const int shift : replica_shifts_) {
      for (size_t i = 0; i < own; ++i) {
        Communicator copy = groups[i];
        bool fits = true;
        for (int& r : copy.ranks) fits = fits && (r += shift) < cluster_->gpu_count();
        if (fits) groups.push_back(std::move(copy));
      }
    }
  }
  FlowSet set;
  if (algo == Algorithm::ring) {
    // Every edge of every channel's ring carries the same bytes; no need to lower each step.
    const int n = comm.size();
    const bool chain = kind == CollectiveKind::broadcast || kind == CollectiveKind::reduce;
    const double factor = kind == CollectiveKind::all_reduce ? 2.0 * (n - 1) / n : chain ? 1.0 : (n - 1.0) / n;
    const int rings = spread_channels(channels, n, per_node, nics_per_gpu);
    set.lowered_channels = rings;
    const double per_edge = bytes.as_double() * factor / rings;
    for (const Communicator& group : groups) {
      for (int c = 0; c < rings; ++c) {
        const std::vector<int> ring = ring_order(group, c, per_node);
        for (int i = 0; i + (chain ? 1 : 0) < n; ++i) {
          add(ring[static_cast<size_t>(i)], ring[static_cast<size_t>((i + 1) % n)], c, per_edge);
        }
      }
    }
  } else {
    // Lower once; each sibling runs the same transfers on its own GPUs (position i of the
    // communicator maps to position i of the sibling).
    const Schedule s = build_schedule(algo, kind, bytes, comm, channels, per_node, nics_per_gpu);
    // A tree spread over the NICs runs more channels than tuned.
    set.lowered_channels = std::max(channels, s.channels());
    std::unordered_map<int, size_t> position;
    for (size_t i = 0; i < comm.ranks.size(); ++i) position.emplace(comm.ranks[i], i);
    for (const Communicator& group : groups) {
      for (const ScheduledTransfer& t : s.transfers()) {
        add(group.ranks[position.at(t.src_gpu)], group.ranks[position.at(t.dst_gpu)], t.channel,
            t.bytes.as_double());
      }
    }
  }
  for (size_t i = 0; i < order.size(); ++i) {
    const Key& k = order[i];
    const uint64_t hash = (static_cast<uint64_t>(k.channel) * 0x9e3779b97f4a7c15ull) & 0xffff;
    const int nic = !pinned                        ? -1
                    : algo == Algorithm::nvls_tree ? nic_slot(k.channel, 1, nics_per_gpu)
                                                   : nic_slot(k.channel, per_node, nics_per_gpu);
    // One route, or with adaptive routing a sub-flow of an equal share on each sprayed route.
    std::vector<std::vector<topology::LinkId>> paths =
        network::transfer_routes(*cluster_, {.src_gpu = k.src, .dst_gpu = k.dst, .bytes = Bytes(0), .flow_hash = hash, .nic = nic});
    const bool staged = analytical_.hardware().host_staged_intra && cluster_->node_of(k.src) == cluster_->node_of(k.dst);
    for (std::vector<topology::LinkId>& path : paths) {
      set.bytes.push_back(pair_bytes[k] / static_cast<double>(paths.size()));
      set.links.insert(set.links.end(), path.begin(), path.end());
      set.first.push_back(set.links.size());
      set.staged_pair.push_back(staged ? int64_t{k.src} * cluster_->gpu_count() + k.dst : -1);
      set.origin.push_back(static_cast<uint32_t>(i));
      set.weight.push_back(1.0 / static_cast<double>(paths.size()));
    }
  }
  return set;
}

std::vector<std::pair<topology::LinkId, double>> FlowCollectiveModel::link_bytes(CollectiveKind kind, Bytes bytes,
                                                                                 const Communicator& comm) const {
  if (comm.size() <= 1 || bytes.count() <= 0) return {};
  const CollectiveEstimate e = analytical_.estimate(kind, bytes, comm);
  // An NVLS collective, priced in closed form (price), is counted here as the ring or tree
  // flow_choice gives: its NVLink bytes as those move them (a ring 2(n-1)/n of the buffer, where
  // NVLS moves (n+1)/n), so the table shows which links it used, not NVLS's exact volume.
  // NVLS-tree is counted by its network part alone (its NICs and PCIe, no NVLink bytes).
  const FlowSet set = flow_set(flow_choice(analytical_, kind, bytes, comm, e).algorithm, kind,
                               bytes, comm, e.channels);
  // Summed by link in flow order, then listed in link order.
  std::vector<double> on(cluster_->links().size(), 0.0);
  std::vector<char> seen(on.size(), 0);
  std::vector<topology::LinkId> touched;
  for (size_t f = 0; f < set.size(); ++f) {
    for (topology::LinkId l : set.path(f)) {
      if (!seen[l]) {
        seen[l] = 1;
        touched.push_back(l);
      }
      on[l] += set.bytes[f];
    }
  }
  std::sort(touched.begin(), touched.end());
  std::vector<std::pair<topology::LinkId, double>> out;
  out.reserve(touched.size());
  for (topology::LinkId l : touched) out.emplace_back(l, on[l]);
  return out;
}

double FlowCollectiveModel::bandwidth_seconds(Algorithm algo, CollectiveKind kind, Bytes bytes,
                                              const Communicator& comm, Protocol protocol, int channels) const {
  const FlowSet set = flow_set(algo, kind, bytes, comm, channels);
  if (set.size() == 0) return 0;

  const ModelParameters& p = analytical_.parameters();
  // A channel moves at most its bandwidth of payload, as in the closed form (flow_channel_cap).
  // An LL channel of a communicator that spans nodes moves at LL's network rate on every hop.
  const bool spans_nodes = analytical_.hardware().shape_of(comm).nodes > 1;
  // The tuned channels' bandwidth, spread over the channels the lowering runs.
  const double cap_scale = static_cast<double>(channels) / set.lowered_channels;
  double channel_cap = flow_channel_cap(p, algo, protocol, spans_nodes, cap_scale);
  if (copies_pairwise(algo, kind)) {
    channel_cap = std::min(
        channel_cap, flow_p2p_cap(analytical_.hardware(), analytical_.hardware().shape_of(comm),
                                  set.lowered_channels));
  }
  network::flow::FlowProblem problem;
  std::vector<uint32_t> dense(cluster_->links().size(), kNoLink);  // graph link -> problem link
  std::unordered_map<int64_t, uint32_t> staged;          // host-staged GPU pair -> problem link
  std::vector<uint32_t> links;
  constexpr uint32_t kUncapped = UINT32_MAX;
  // The channel cap of the current original flow, shared by its sub-flows.
  uint32_t cap_link = kUncapped;
  for (size_t f = 0; f < set.size(); ++f) {
    const std::span<const topology::LinkId> path = set.path(f);
    links.clear();
    double pcie_peer = std::numeric_limits<double>::infinity();
    bool network = false;
    for (topology::LinkId l : path) {
      if (dense[l] == kNoLink) {
        dense[l] = static_cast<uint32_t>(problem.capacity.size());
        problem.capacity.push_back(link_capacity_[l]);
      }
      links.push_back(dense[l]);
      const topology::Link& link = cluster_->link(l);
      network = network || link.kind == topology::LinkKind::network;
      if (link.kind == topology::LinkKind::pcie) pcie_peer = std::min(pcie_peer, link.bandwidth.bytes_per_s());
    }
    // Without peer access a GPU pair's copies, every channel's, share the closed form's
    // host-staged rate (latency bound: bytes in flight over the host round trip).
    if (set.staged_pair[f] >= 0) {
      auto [it, fresh] = staged.try_emplace(set.staged_pair[f], static_cast<uint32_t>(problem.capacity.size()));
      if (fresh) problem.capacity.push_back(analytical_.hardware().intra_bw * 1e9);
      links.push_back(it->second);
    }
    // The flow's own limit: one channel (thread block) moves at most channel_bandwidth, and a
    // GPU-GPU copy over PCIe reaches pcie_efficiency of the slowest PCIe link it crosses. It
    // limits the channel, so the sub-flows of one sprayed flow share it.
    // No cap at all (NVLS-tree's network part, no PCIe peer copy): no link for it; the solver
    // takes only finite capacities.
    if (f == 0 || set.origin[f] != set.origin[f - 1]) {
      const double cap = network ? channel_cap : std::min(channel_cap, pcie_peer * p.pcie_efficiency);
      cap_link = std::isinf(cap) ? kUncapped : static_cast<uint32_t>(problem.capacity.size());
      if (cap_link != kUncapped) problem.capacity.push_back(cap);
    }
    if (cap_link != kUncapped) links.push_back(cap_link);
    problem.add_flow(links, set.weight[f]);
  }
  problem.build_link_index();
  std::vector<double> rates(problem.flow_count());
  ++solves_;
  flows_ += problem.flow_count();
  if (accelerator_ && problem.flow_count() >= network::flow::kAcceleratorMinFlows) {
    const std::lock_guard lock(accelerator_mutex_);
    accelerator_->solve(problem, rates);
  } else {
    network::flow::CpuMaxMinSolver().solve(problem, rates);
  }
  double seconds = 0;
  for (size_t f = 0; f < set.bytes.size(); ++f) {
    const double rate = rates[f] * p.bandwidth_fraction(protocol);
    if (rate <= 0) throw InputError({}, "network.model", "a collective's flow crosses a link with no capacity");
    seconds = std::max(seconds, set.bytes[f] / rate);
  }
  return seconds;
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
  // NVLS reduces in the NVSwitch, which flows between GPUs cannot express; inside one NVLink
  // domain its traffic meets no other communicator's, so it keeps the closed form's price.
  if (e.algorithm == Algorithm::nvls) return e;
  if (comm.size() > 1 && bytes.count() > 0) {
    const FlowChoice run = flow_choice(analytical_, kind, bytes, comm, e);
    const AlgoCost closed = analytical_.price(kind, bytes, comm, run.algorithm, run.protocol);
    const double bw = bandwidth_seconds(run.algorithm, kind, bytes, comm, run.protocol, e.channels);
    const Time flows = Time::us(closed.latency_us + closed.fill_us + std::max(bw * 1e6, closed.window_us));
    // NVLS-tree's flows are its network part; the in-switch part inside each node keeps the
    // closed form's price, and the slower of the two sets the time.
    e.time = run.algorithm == Algorithm::nvls_tree ? std::max(e.time, flows) : flows;
    e.algorithm = run.algorithm;
    e.protocol = run.protocol;
  }
  return e;
}

}  // namespace dtsim::collectives
