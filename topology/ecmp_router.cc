#include "topology/ecmp_router.h"

#include <algorithm>
#include <atomic>
#include <boost/container/small_vector.hpp>
#include <boost/range/iterator_range.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <span>
#include <shared_mutex>
#include <stdexcept>
#include <string>

namespace dtsim::topology {
namespace {

constexpr uint32_t kInf = std::numeric_limits<uint32_t>::max();
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// Appends a stored walk's links to a route: a leg is a few links, which a loop of pushes copies
// for less than vector::insert's general path (an insert anywhere, from any iterator).
void append_links(std::vector<LinkId>& out, const LinkId* first, const LinkId* last) {
  for (; first != last; ++first) out.push_back(*first);
}
// Caches are dropped wholesale past these sizes (plans and routes shard by shard); routes are
// recomputed identically on demand.
constexpr size_t kMaxTargetBytes = size_t{1} << 30;
// Fabric tables an exit reads without a lock (pinned for the router's life, never dropped) take
// at most this much; past it, exits look their tables up in the cache under its lock.
constexpr size_t kMaxPinnedTargetBytes = size_t{1} << 28;
constexpr size_t kShards = 64;
constexpr size_t kMaxPlans = (size_t{1} << 21) / kShards;
constexpr size_t kMaxRouteLinks = (size_t{1} << 25) / kShards;
constexpr size_t kMaxDags = size_t{1} << 16;
// Room a route is made with: a route through a node, a 3-tier fabric and a node fits.
constexpr size_t kRouteLinksReserved = 16;

uint64_t sat_add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}
uint64_t sat_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}
uint64_t mix(uint64_t x) {  // splitmix64 finalizer: a flow hash's bits all reach the index
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
// Inverse bandwidth, in units where 1 PB/s costs 1: 400 Gb/s costs 20000, 450 GB/s 2222.
uint32_t link_cost(const Link& l) {
  double c = std::round(1e15 / std::max(l.bandwidth.bytes_per_s(), 1.0));
  return static_cast<uint32_t>(std::clamp(c, 1.0, 1e8));
}
// The hash a pair's route index is taken from: the flow's, mixed with the pair.
uint64_t route_hash(int src, int dst, uint64_t flow_hash) {
  return mix(flow_hash ^ mix((static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst)));
}
uint64_t pair_key(int src, int dst, bool pxn) {
  return (static_cast<uint64_t>(src) << 33) | (static_cast<uint64_t>(dst) << 1) | (pxn ? 1 : 0);
}

using Heap = std::priority_queue<std::pair<uint32_t, uint32_t>,
                                 std::vector<std::pair<uint32_t, uint32_t>>, std::greater<>>;

// An open-addressing table from a key to a small value: linear probing over a power-of-two
// array at most 5/8 full, so a lookup reads one or two cache lines and divides nothing (a miss
// probes about 4 slots at that load; at 1/2, an all-to-all's n^2 pairs over the 64 shards of
// power-of-two n left about half the shards' tables just past the doubling). Keys
// are only added, and dropped all at once (the caches' wholesale clear). A free slot holds
// Hash::empty(), a key no caller stores (a slot is its key and value, no flag beside them).
template <typename Key, typename Value, typename Hash>
class FlatIndex {
 public:
  Value* find(const Key& key) {
    return const_cast<Value*>(static_cast<const FlatIndex*>(this)->find(key));
  }
  const Value* find(const Key& key) const {
    if (slots_.empty() || key == Hash::empty()) return nullptr;
    const size_t mask = slots_.size() - 1;
    for (size_t i = Hash{}(key) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == Hash::empty()) return nullptr;
    }
  }
  // Maps `key` (not Hash::empty()) to `value` unless it is mapped already; returns what it maps to.
  Value& insert(const Key& key, const Value& value) {
    if (key == Hash::empty()) throw std::logic_error("EcmpRouter: a cache key collides with the free slots'");
    if (8 * (size_ + 1) > 5 * slots_.size()) grow();
    const size_t mask = slots_.size() - 1;
    for (size_t i = Hash{}(key) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.key == Hash::empty()) {
        s = {key, value};
        ++size_;
        return s.value;
      }
      if (s.key == key) return s.value;
    }
  }
  void clear() {
    slots_.clear();
    size_ = 0;
  }
  size_t size() const { return size_; }

 private:
  struct Slot {
    Key key = Hash::empty();
    Value value{};
  };
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(64, 2 * old.size()), Slot{});
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key != Hash::empty()) insert(s.key, s.value);
    }
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

// A pair's slot in its shard's plan index: the shard is picked by the top bits of mix(pair), the
// slot by the low ones.
struct PairHash {
  size_t operator()(uint64_t pair) const { return static_cast<size_t>(mix(pair)); }
  // No key is all ones: pair_key's source and destination are below 2^31, and the table keys
  // (fabric_target, intra_dag) use under 64 bits.
  static constexpr uint64_t empty() { return ~uint64_t{0}; }
};

}  // namespace

// Least-cost distances to `to` and path counts inside one node, by the node's local indices.
// Nodes of one class (same devices, same links) have the same tables for the same local ends.
struct EcmpRouter::DagTables {
  std::vector<uint32_t> dist;
  std::vector<uint64_t> count;
};

// Least-cost DAG towards `to` inside one node: the tables of its class, and the ends it joins.
struct EcmpRouter::IntraDag {
  int node = 0;
  DeviceId from = 0;
  DeviceId to = 0;
  std::shared_ptr<const DagTables> tables;
  const uint32_t* dist = nullptr;   // tables->dist, by local index
  const uint64_t* count = nullptr;  // tables->count
};

// Least-cost distances and path counts from every fabric device to one target, indexed by the
// fabric-local index. Shared by every exit hanging off the same single switch.
// With them, each fabric device's next hops on its least-cost routes there, so that a walk picks
// its hop from those instead of testing every out-link of a switch.
struct EcmpRouter::FabricTarget {
  std::vector<uint32_t> dist;
  std::vector<uint64_t> count;
  // A next hop: the link, where it leads and the least-cost routes on from there.
  struct Hop {
    LinkId link;
    DeviceId to;
    uint64_t count;
  };
  // Per fabric-local index, its next hops in the order of its out-links (CSR). A table shared by
  // the exits under one switch holds only hops between fabric devices: that switch's link down to
  // the exit is the walk's (TargetRef::root_link); an exit's own table also holds the links into
  // the exit.
  std::vector<uint32_t> hop_offset;
  std::vector<Hop> hops;
  // Per fabric-local index: whether all its next hops have one count, so that a walk takes the
  // index / count-th of them instead of scanning (a leaf's 32 uplinks to the spines).
  std::vector<uint8_t> uniform;
  size_t bytes = 0;  // what its vectors hold, for the caches' bounds
  // Whether a router holds it pinned (ExitTarget::pinned); read and set under the tables' lock.
  mutable bool pinned = false;
  std::span<const Hop> hops_of(uint32_t fabric) const {
    return std::span<const Hop>(hops).subspan(hop_offset[fabric], hop_offset[fabric + 1] - hop_offset[fabric]);
  }
};

struct EcmpRouter::TargetRef {
  const FabricTarget* target = nullptr;
  std::shared_ptr<const FabricTarget> hold;  // keeps `target` alive; null for a pinned table
  uint32_t offset = 0;  // cost from the keyed switch down to the exit
  DeviceId exit = 0;
  // For a table shared under one switch: that switch, and its link down to the exit.
  DeviceId root = kNone;
  LinkId root_link = 0;
};

// A segment inside a node (with its DAG's tables, held for every route of the plan) or across the
// fabric (without: its alternative's TargetRef is its table). A GPU's leg to or from an exit
// with one route has that route's links (in the router's leg_links_).
struct EcmpRouter::Segment {
  DeviceId from = 0;
  DeviceId to = 0;
  uint64_t count = 1;
  std::shared_ptr<const DagTables> tables;
  const LinkId* walk = nullptr;
  uint32_t walk_links = 0;
  bool fabric() const { return tables == nullptr; }
};

struct EcmpRouter::Alternative {
  boost::container::small_vector<Segment, 3> segments;  // up, fabric, down; a PXN lead first
  uint64_t count = 0;
  TargetRef target;  // its fabric segment's, fetched once for the plan and every route of it
};

struct EcmpRouter::Plan {
  boost::container::small_vector<Alternative, 1> alternatives;
  uint64_t total = 0;
  // The distinct exits the alternatives' fabric segments leave and enter by, in device order (a
  // node's NICs in their local order): pick()'s NIC slots. Null for a single alternative.
  struct NicSlots {
    std::vector<DeviceId> outs, ins;
  };
  std::unique_ptr<const NicSlots> slots;
  // pick() takes h % total whatever the NIC slot.
  bool by_hash() const { return alternatives.size() <= 1 || !slots; }
};

struct EcmpRouter::FabricPart {
  DeviceId exit = 0;
  TargetRef target;
  uint64_t count = 0;  // its routes (0: the route crosses no fabric, add_variants adds none)
  uint64_t sub = 0;    // the route's among them
  uint64_t want = 0;   // their least cost
  size_t from = 0;     // where the route's links of it lie in the output: [from, to)
  size_t to = 0;
};

size_t EcmpRouter::RouteKeyHash::operator()(const RouteKey& k) const {
  return static_cast<size_t>(mix(k.pair ^ mix(k.index)));
}
EcmpRouter::RouteKey EcmpRouter::RouteKeyHash::empty() { return {PairHash::empty(), 0}; }

// The plans and routes of the pairs that hash to one shard, behind their own lock: read under it
// shared, stored under it exclusive. Threads routing different pairs seldom wait for each other,
// nor share the lock's cache line. A pair's plan is indexed with what pick() needs of it when it
// takes the hash's route among all (its total); the routes lie in one array, back to back, each
// its number of links and then its links. A pair's plan itself is kept only once a second route
// of it is unranked, where pick() reads it (several alternatives with NIC slots), or once it is
// sprayed (its sprayed routes are unranked from the plan, never cached): a pair routed once by
// route() (an all-to-all's) keeps no plan, which takes more memory than the route it gives.
// Likewise a pair's first route is found from its plan entry; only later ones are in the route
// index. route() caches nothing of a pair of single-exit GPUs on two nodes: it walks each route.
struct alignas(64) EcmpRouter::Shard {
  static constexpr uint32_t kNoRoute = (uint32_t{1} << 31) - 1;
  struct PlanRef {
    uint64_t total = 0;
    uint64_t first = 0;                 // the index of its first cached route
    uint32_t plan = kNone;              // in `plans`; kNone: not kept, made again when needed
    uint32_t route : 31 = kNoRoute;     // its first cached route in route_links, or kNoRoute
    uint32_t by_hash : 1 = 1;           // pick() takes h % total whatever the NIC slot
  };
  std::shared_mutex mutex;
  FlatIndex<uint64_t, PlanRef, PairHash> plan_index;
  std::vector<std::shared_ptr<const Plan>> plans;
  FlatIndex<RouteKey, uint32_t, RouteKeyHash> route_index;
  std::vector<LinkId> route_links;

  // Indexes `pair` (its plan's total and whether pick() is by hash) unless another thread did
  // meanwhile, and keeps plan `keep` unless it is null or a plan is kept already (under the
  // exclusive lock; every cache of the shard is dropped wholesale when the plans' or the routes'
  // is full). Returns the pair's entry.
  PlanRef& store_plan(uint64_t pair, uint64_t total, bool by_hash, const std::shared_ptr<const Plan>& keep,
                      size_t route_size = 0);
  // Caches `route`, the index-th of `pair`, and indexes the pair as store_plan does (under the
  // exclusive lock).
  void store_route(uint64_t pair, uint64_t total, bool by_hash, const std::shared_ptr<const Plan>& keep,
                   uint64_t index, std::span<const LinkId> route);
  // The cached route of `pair` whose index is `index`, if any (under either lock).
  const LinkId* find_route(const PlanRef& ref, uint64_t pair, uint64_t index) const {
    if (ref.route != kNoRoute && ref.first == index) return route_links.data() + ref.route;
    const uint32_t* at = route_index.find(RouteKey{pair, index});
    return at ? route_links.data() + *at : nullptr;
  }
};

// Fabric tables, looked up once per plan (each alternative keeps its own): one plain mutex.
// Intra-node tables by (node class, local from, local to), read under a shared lock.
struct EcmpRouter::TableCache {
  std::mutex targets_mutex;
  FlatIndex<uint64_t, std::shared_ptr<const FabricTarget>, PairHash> targets;
  size_t target_bytes = 0;
  // The tables exits read without the lock (ExitTarget::pinned), held until the router goes.
  std::vector<std::shared_ptr<const FabricTarget>> pinned;
  size_t pinned_bytes = 0;
  std::shared_mutex dags_mutex;
  FlatIndex<uint64_t, std::shared_ptr<const DagTables>, PairHash> dags;
};

// What fabric_target keys an exit's table by, worked out when the router is built: an exit hung
// off exactly one fabric device by one link shares that device's table. With it, the table once
// pinned, read with no lock: a route between single-exit GPUs looks it up on every query.
struct EcmpRouter::ExitTarget {
  uint64_t key = 0;
  bool shared = false;
  DeviceId only = kNone;  // the one fabric device, where shared
  uint32_t offset = 0;    // cost from it down to the exit
  LinkId root_link = 0;   // its link down to the exit
  mutable std::atomic<const FabricTarget*> pinned{nullptr};
};

EcmpRouter::Shard& EcmpRouter::shard(uint64_t pair) const {
  static_assert(kShards == 64);
  return shards_[mix(pair) >> 58];
}

EcmpRouter::EcmpRouter(std::span<const Device> devices, std::span<const Link> links,
                       const ClusterGraph& graph, std::span<const DeviceId> gpus)
    : devices_(devices),
      links_(links),
      graph_(graph),
      gpus_(gpus),
      tables_(std::make_unique<TableCache>()),
      shards_(std::make_unique<Shard[]>(kShards)) {
  cost_.reserve(links.size());
  for (const Link& l : links) cost_.push_back(link_cost(l));

  int nodes = 0;
  for (const Device& d : devices) nodes = std::max(nodes, d.node + 1);
  node_offset_.assign(static_cast<size_t>(nodes) + 1, 0);
  local_.assign(devices.size(), kNone);
  for (const Device& d : devices) {
    if (d.node >= 0) ++node_offset_[static_cast<size_t>(d.node) + 1];
  }
  for (size_t n = 0; n < static_cast<size_t>(nodes); ++n) node_offset_[n + 1] += node_offset_[n];
  node_devices_.resize(node_offset_.back());
  std::vector<uint32_t> fill(node_offset_.begin(), node_offset_.end() - 1);
  for (DeviceId d = 0; d < devices.size(); ++d) {
    int n = devices[d].node;
    if (n >= 0) {
      uint32_t at = fill[static_cast<size_t>(n)]++;
      node_devices_[at] = d;
      local_[d] = at - node_offset_[static_cast<size_t>(n)];
    } else {
      local_[d] = static_cast<uint32_t>(fabric_devices_.size());
      fabric_devices_.push_back(d);
    }
  }

  // Node classes: a node's signature is its devices' kinds in local order, then its internal
  // links as (local from, local to, cost), sorted.
  node_class_.assign(static_cast<size_t>(nodes), 0);
  {
    std::vector<std::vector<uint64_t>> signatures(static_cast<size_t>(nodes));
    for (size_t n = 0; n < static_cast<size_t>(nodes); ++n) {
      for (uint32_t i = node_offset_[n]; i < node_offset_[n + 1]; ++i)
        signatures[n].push_back(static_cast<uint64_t>(devices[node_devices_[i]].kind));
    }
    std::vector<std::vector<std::pair<uint64_t, uint64_t>>> internal(static_cast<size_t>(nodes));
    for (LinkId l = 0; l < links.size(); ++l) {
      const int n = devices[links[l].from].node;
      if (n < 0 || devices[links[l].to].node != n) continue;
      internal[static_cast<size_t>(n)].emplace_back(
          (uint64_t{local_[links[l].from]} << 32) | local_[links[l].to], cost_[l]);
    }
    std::map<std::vector<uint64_t>, uint32_t> classes;
    for (size_t n = 0; n < static_cast<size_t>(nodes); ++n) {
      std::sort(internal[n].begin(), internal[n].end());
      signatures[n].push_back(kNone);
      for (const auto& [ends, cost] : internal[n]) {
        signatures[n].push_back(ends);
        signatures[n].push_back(cost);
      }
      node_class_[n] = classes.try_emplace(std::move(signatures[n]), static_cast<uint32_t>(classes.size())).first->second;
    }
  }

  out_offset_.reserve(devices.size() + 1);
  out_offset_.push_back(0);
  for (DeviceId d = 0; d < devices.size(); ++d) {
    for (auto e : boost::make_iterator_range(boost::out_edges(d, graph))) {
      const LinkId l = graph[e].link;
      const DeviceId to = links[l].to;
      out_arcs_.push_back({l, to, cost_[l], devices[to].node < 0 ? local_[to] : kNone});
    }
    out_offset_.push_back(static_cast<uint32_t>(out_arcs_.size()));
  }

  arc_offset_.assign(fabric_devices_.size() + 1, 0);
  for (size_t f = 0; f < fabric_devices_.size(); ++f) {
    for (auto e : boost::make_iterator_range(boost::out_edges(fabric_devices_[f], graph))) {
      LinkId l = graph[e].link;
      if (devices[links[l].to].node < 0)
        arcs_.push_back({local_[links[l].to], cost_[l], cost_[l ^ 1U]});
    }
    arc_offset_[f + 1] = static_cast<uint32_t>(arcs_.size());
  }

  // A node's exits are its devices with a link leaving the node; each GPU sends through the
  // exits nearest to it (ties kept: flows spread over them by hash).
  exit_offset_.reserve(gpus.size() + 1);
  exit_offset_.push_back(0);
  exit_cost_.reserve(gpus.size());
  std::vector<std::vector<DeviceId>> node_exits(static_cast<size_t>(nodes));
  for (const Link& l : links) {
    int a = devices[l.from].node;
    if (a >= 0 && devices[l.to].node != a) node_exits[static_cast<size_t>(a)].push_back(l.from);
  }
  for (auto& e : node_exits) {
    std::sort(e.begin(), e.end());
    e.erase(std::unique(e.begin(), e.end()), e.end());
  }
  std::vector<int> gpus_in(static_cast<size_t>(nodes), 0), nics_in(static_cast<size_t>(nodes), 0);
  for (const Device& d : devices) {
    if (d.node >= 0 && d.kind == DeviceKind::gpu) ++gpus_in[static_cast<size_t>(d.node)];
    if (d.node >= 0 && d.kind == DeviceKind::nic) ++nics_in[static_cast<size_t>(d.node)];
  }
  for (DeviceId g : gpus) {
    int n = devices[g].node;
    const auto& candidates = node_exits[static_cast<size_t>(n)];
    uint32_t best = kInf;
    if (!candidates.empty()) {
      IntraDag dag = intra_dag(n, g, g);
      for (DeviceId e : candidates) best = std::min(best, dag.dist[local_[e]]);
      // Among equally near NICs, GPU i takes its own share of the node's NICs, as NCCL pairs
      // them: NIC i * nics / gpus, and the next ones up to (i + 1) * nics / gpus where a node has
      // more NICs than GPUs (P5: four EFA NICs per GPU, flows spread over them by hash). On an
      // HGX board two GPUs and two NICs share a PCIe switch, and GPU i uses NIC i.
      const int64_t nics = nics_in[static_cast<size_t>(n)];
      const int64_t per_node = std::max(gpus_in[static_cast<size_t>(n)], 1);
      const int64_t own_lo = devices[g].local * nics / per_node;
      const int64_t own_hi = std::max(own_lo + 1, (devices[g].local + 1) * nics / per_node);
      size_t first = exits_.size();
      for (DeviceId e : candidates) {
        if (best != kInf && dag.dist[local_[e]] == best) exits_.push_back(e);
      }
      size_t kept = first;
      for (size_t i = first; i < exits_.size(); ++i) {
        const Device& e = devices[exits_[i]];
        if (e.kind == DeviceKind::nic && e.local >= own_lo && e.local < own_hi) exits_[kept++] = exits_[i];
      }
      if (kept > first) exits_.resize(kept);  // else no NIC of its own is nearest: keep them all
    }
    exit_cost_.push_back(best);
    exit_offset_.push_back(static_cast<uint32_t>(exits_.size()));
  }

  exit_targets_ = std::make_unique<ExitTarget[]>(devices.size());
  for (DeviceId exit : exits_) {
    ExitTarget& x = exit_targets_[exit];
    LinkId only_link = 0;
    int outside = 0;
    for (const OutArc& a : out_arcs(exit)) {
      if (devices_[a.to].node == devices_[exit].node) continue;
      ++outside;
      x.only = a.to;
      only_link = a.link;
    }
    x.shared = outside == 1 && is_fabric(x.only);
    x.key = x.shared ? x.only : (uint64_t{1} << 40) | exit;
    if (x.shared) {
      x.offset = cost_[only_link ^ 1U];
      x.root_link = only_link ^ 1U;
    }
  }

  std::vector<LinkId> walk;
  const auto leg = [&](int node, DeviceId from, DeviceId to) {
    IntraDag dag = intra_dag(node, from, to);
    ExitLeg out{.tables = dag.tables, .count = dag.count[local_[from]]};
    if (out.count == 1) {
      walk.clear();
      if (from != to) intra_walk(dag, 0, walk);
      out.links_at = static_cast<uint32_t>(leg_links_.size());
      out.links = static_cast<uint32_t>(walk.size());
      leg_links_.insert(leg_links_.end(), walk.begin(), walk.end());
    }
    return out;
  };
  up_legs_.reserve(exits_.size());
  down_legs_.reserve(exits_.size());
  for (size_t g = 0; g < gpus.size(); ++g) {
    const int node = devices[gpus[g]].node;
    for (uint32_t i = exit_offset_[g]; i < exit_offset_[g + 1]; ++i) {
      up_legs_.push_back(leg(node, gpus[g], exits_[i]));
      down_legs_.push_back(leg(node, exits_[i], gpus[g]));
    }
  }
}

EcmpRouter::~EcmpRouter() = default;

std::span<const DeviceId> EcmpRouter::nearest_exits(int gpu) const {
  auto i = static_cast<size_t>(gpu);
  return std::span<const DeviceId>(exits_).subspan(exit_offset_[i],
                                                   exit_offset_[i + 1] - exit_offset_[i]);
}

EcmpRouter::IntraDag EcmpRouter::intra_dag(int node, DeviceId from, DeviceId to) const {
  // Local indices fit in 20 bits: a node of a million devices is not a node.
  const uint64_t key = (uint64_t{node_class_[static_cast<size_t>(node)]} << 40) |
                       (uint64_t{local_[from]} << 20) | local_[to];
  std::shared_ptr<const DagTables> tables;
  {
    std::shared_lock read(tables_->dags_mutex);
    if (const auto* found = tables_->dags.find(key)) tables = *found;
  }
  if (!tables) {
    std::shared_ptr<const DagTables> made = make_dag(node, from, to);
    std::unique_lock write(tables_->dags_mutex);
    if (tables_->dags.size() >= kMaxDags) tables_->dags.clear();
    tables = tables_->dags.insert(key, made);
  }
  const uint32_t* dist = tables->dist.data();
  const uint64_t* count = tables->count.data();
  return {node, from, to, std::move(tables), dist, count};
}

std::shared_ptr<const EcmpRouter::DagTables> EcmpRouter::make_dag(int node, DeviceId from, DeviceId to) const {
  auto n = static_cast<size_t>(node);
  uint32_t base = node_offset_[n];
  size_t m = node_offset_[n + 1] - base;
  auto dag = std::make_shared<DagTables>(DagTables{std::vector<uint32_t>(m, kInf), std::vector<uint64_t>(m, 0)});
  auto in_node = [&](DeviceId d) { return devices_[d].node == node; };
  // Only the endpoints may be GPUs: a GPU does not forward others' traffic.
  auto transit = [&](DeviceId d) { return d == to || devices_[d].kind != DeviceKind::gpu; };
  std::vector<uint32_t> order;
  Heap heap;
  dag->dist[local_[to]] = 0;
  heap.emplace(0, to);
  while (!heap.empty()) {
    auto [d, v] = heap.top();
    heap.pop();
    if (d != dag->dist[local_[v]]) continue;
    order.push_back(v);
    if (!transit(v)) continue;
    for (auto e : boost::make_iterator_range(boost::out_edges(v, graph_))) {
      LinkId l = graph_[e].link;
      DeviceId u = links_[l].to;
      if (!in_node(u)) continue;
      uint32_t nd = d + cost_[l ^ 1U];
      if (nd < dag->dist[local_[u]]) {
        dag->dist[local_[u]] = nd;
        heap.emplace(nd, u);
      }
    }
  }
  for (DeviceId v : order) {
    uint32_t lv = local_[v];
    if (v == to) {
      dag->count[lv] = 1;
      continue;
    }
    if (!transit(v) && v != from) continue;
    uint64_t c = 0;
    for (auto e : boost::make_iterator_range(boost::out_edges(v, graph_))) {
      LinkId l = graph_[e].link;
      DeviceId u = links_[l].to;
      if (!in_node(u) || !transit(u) || dag->dist[local_[u]] == kInf) continue;
      if (dag->dist[local_[u]] + cost_[l] == dag->dist[lv]) c = sat_add(c, dag->count[local_[u]]);
    }
    dag->count[lv] = c;
  }
  return dag;
}

void EcmpRouter::intra_walk(const IntraDag& dag, uint64_t index, std::vector<LinkId>& out) const {
  auto transit = [&](DeviceId d) { return d == dag.to || devices_[d].kind != DeviceKind::gpu; };
  DeviceId v = dag.from;
  while (v != dag.to) {
    uint32_t dv = dag.dist[local_[v]];
    bool moved = false;
    for (const OutArc& a : out_arcs(v)) {
      const DeviceId u = a.to;
      if (devices_[u].node != dag.node || !transit(u) || dag.dist[local_[u]] == kInf) continue;
      if (dag.dist[local_[u]] + a.cost != dv) continue;
      uint64_t c = dag.count[local_[u]];
      if (index < c) {
        out.push_back(a.link);
        v = u;
        moved = true;
        break;
      }
      index -= c;
    }
    if (!moved) throw std::logic_error("EcmpRouter: intra-node walk lost its way");
  }
}

EcmpRouter::TargetRef EcmpRouter::fabric_target(DeviceId exit) const {
  const ExitTarget& x = exit_targets_[exit];
  const bool shared = x.shared;
  const DeviceId only = x.only;
  const uint64_t key = x.key;
  TargetRef ref;
  ref.exit = exit;
  ref.offset = x.offset;
  if (shared) {
    ref.root = only;
    ref.root_link = x.root_link;
  }
  ref.target = x.pinned.load(std::memory_order_acquire);
  if (ref.target) return ref;
  // Pins a table for this exit while the pinned ones stay under their bound; else the plans and
  // routes that read it hold it.
  const auto pin = [&](const std::shared_ptr<const FabricTarget>& t, size_t bytes) {
    if (tables_->pinned_bytes + bytes <= kMaxPinnedTargetBytes) {
      if (!t->pinned) {
        t->pinned = true;
        tables_->pinned.push_back(t);
        tables_->pinned_bytes += bytes;
      }
      x.pinned.store(t.get(), std::memory_order_release);
      ref.target = t.get();
    } else {
      ref.target = t.get();
      ref.hold = t;
    }
  };
  {
    const std::lock_guard lock(tables_->targets_mutex);
    if (const auto* found = tables_->targets.find(key)) {
      pin(*found, (*found)->bytes);
      return ref;
    }
  }
  size_t f = fabric_devices_.size();
  auto t = std::make_shared<FabricTarget>();
  t->dist.assign(f, kInf);
  t->count.assign(f, 0);
  std::vector<uint64_t> seed(f, 0);
  Heap heap;
  if (shared) {
    t->dist[local_[only]] = 0;
    seed[local_[only]] = 1;
    heap.emplace(0, local_[only]);
  } else {
    for (auto e : boost::make_iterator_range(boost::out_edges(exit, graph_))) {
      LinkId l = graph_[e].link;
      DeviceId u = links_[l].to;
      if (!is_fabric(u)) continue;
      uint32_t c = cost_[l ^ 1U];
      uint32_t lu = local_[u];
      if (c < t->dist[lu]) {
        t->dist[lu] = c;
        seed[lu] = 1;
        heap.emplace(c, lu);
      } else if (c == t->dist[lu]) {
        ++seed[lu];
      }
    }
  }
  std::vector<uint32_t> order;
  while (!heap.empty()) {
    auto [d, lv] = heap.top();
    heap.pop();
    if (d != t->dist[lv]) continue;
    order.push_back(lv);
    for (uint32_t a = arc_offset_[lv]; a < arc_offset_[lv + 1]; ++a) {
      const FabricArc& arc = arcs_[a];
      uint32_t nd = d + arc.cost_in;
      if (nd < t->dist[arc.to]) {
        t->dist[arc.to] = nd;
        heap.emplace(nd, arc.to);
      }
    }
  }
  for (uint32_t lv : order) {
    uint64_t c = seed[lv];
    for (uint32_t a = arc_offset_[lv]; a < arc_offset_[lv + 1]; ++a) {
      const FabricArc& arc = arcs_[a];
      if (t->dist[arc.to] != kInf && t->dist[arc.to] + arc.cost_out == t->dist[lv]) {
        c = sat_add(c, t->count[arc.to]);
      }
    }
    t->count[lv] = c;
  }
  // The hops a walk takes (fabric_walk): from v, the out-links where via() costs what the least
  // cost from v is, dist[v] (plus the offset on both sides, for a shared table).
  t->hop_offset.reserve(f + 1);
  t->hop_offset.push_back(0);
  for (uint32_t lv = 0; lv < f; ++lv) {
    const uint32_t dv = t->dist[lv];
    for (const OutArc& a : dv == kInf ? std::span<const OutArc>() : out_arcs(fabric_devices_[lv])) {
      if (!shared && a.to == exit) {
        if (a.cost == dv) t->hops.push_back({a.link, a.to, 1});
      } else if (a.fabric != kNone && t->dist[a.fabric] != kInf &&
                 uint64_t{a.cost} + t->dist[a.fabric] == dv) {
        t->hops.push_back({a.link, a.to, t->count[a.fabric]});
      }
    }
    t->hop_offset.push_back(static_cast<uint32_t>(t->hops.size()));
  }
  t->uniform.assign(f, 1);
  for (uint32_t lv = 0; lv < f; ++lv) {
    for (const FabricTarget::Hop& h : t->hops_of(lv)) {
      if (h.count != t->hops[t->hop_offset[lv]].count) t->uniform[lv] = 0;
    }
  }
  t->bytes = f * (sizeof(uint32_t) + sizeof(uint64_t) + sizeof(uint8_t)) + t->hop_offset.size() * sizeof(uint32_t) +
             t->hops.size() * sizeof(FabricTarget::Hop);
  const std::lock_guard lock(tables_->targets_mutex);
  if (tables_->target_bytes + t->bytes > kMaxTargetBytes) {
    tables_->targets.clear();
    tables_->target_bytes = 0;
  }
  // Another thread may have built the same table meanwhile; either copy will do.
  const std::shared_ptr<const FabricTarget>& kept = tables_->targets.insert(key, t);
  if (kept == t) tables_->target_bytes += t->bytes;
  pin(kept, kept->bytes);
  return ref;
}

std::optional<std::pair<uint64_t, uint64_t>> EcmpRouter::via(const OutArc& a, const TargetRef& t) const {
  if (a.to == t.exit) return std::pair<uint64_t, uint64_t>{a.cost, 1};
  if (a.fabric != kNone) {
    const uint32_t d = t.target->dist[a.fabric];
    if (d != kInf) return std::pair<uint64_t, uint64_t>{uint64_t{a.cost} + d + t.offset, t.target->count[a.fabric]};
  }
  return std::nullopt;
}

std::pair<uint64_t, uint64_t> EcmpRouter::fabric_best(DeviceId e, const TargetRef& t) const {
  uint64_t best = std::numeric_limits<uint64_t>::max();
  uint64_t count = 0;
  for (const OutArc& a : out_arcs(e)) {
    const auto hop = via(a, t);
    if (!hop) continue;
    const auto [c, n] = *hop;
    if (c < best) {
      best = c;
      count = n;
    } else if (c == best) {
      count = sat_add(count, n);
    }
  }
  return {best, count};
}

void EcmpRouter::fabric_walk(DeviceId e, const TargetRef& t, uint64_t index, std::vector<LinkId>& out) const {
  fabric_walk(e, t, index, fabric_best(e, t).first, out);
}

void EcmpRouter::fabric_walk(DeviceId e, const TargetRef& t, uint64_t index, uint64_t want,
                             std::vector<LinkId>& out) const {
  DeviceId v = e;
  while (v != t.exit) {
    bool moved = false;
    if (is_fabric(v)) {
      // On the fabric every step is to a least-cost hop: the table's, or the shared table's
      // switch down to the exit.
      if (v == t.root) {
        out.push_back(t.root_link);
        break;
      }
      const std::span<const FabricTarget::Hop> hops = t.target->hops_of(local_[v]);
      if (!hops.empty() && t.target->uniform[local_[v]]) {
        // The scan below would skip index / count hops of that count each.
        const uint64_t each = hops.front().count;
        const uint64_t skip = index / each;
        if (skip < hops.size()) {
          out.push_back(hops[skip].link);
          v = hops[skip].to;
          index -= skip * each;
          continue;
        }
      }
      for (const FabricTarget::Hop& h : hops) {
        if (index < h.count) {
          out.push_back(h.link);
          v = h.to;
          moved = true;
          break;
        }
        index -= h.count;
      }
      if (!moved) throw std::logic_error("EcmpRouter: fabric walk lost its way");
      continue;
    }
    for (const OutArc& a : out_arcs(v)) {
      const auto hop = via(a, t);
      if (!hop) continue;
      const auto [c, n] = *hop;
      if (c != want) continue;
      if (index < n) {
        out.push_back(a.link);
        v = a.to;
        want -= a.cost;
        moved = true;
        break;
      }
      index -= n;
    }
    if (!moved) throw std::logic_error("EcmpRouter: fabric walk lost its way");
  }
}

void EcmpRouter::add_cross_node(Plan& p, int src_gpu, uint64_t lead_cost, std::span<const Segment> lead,
                                int dst_gpu) const {
  const DeviceId src = gpus_[static_cast<size_t>(src_gpu)];
  const DeviceId dst = gpus_[static_cast<size_t>(dst_gpu)];
  const auto segment = [&](DeviceId from, DeviceId to, const ExitLeg& leg) {
    Segment s{from, to, leg.count, leg.tables};
    if (leg.links != UINT32_MAX) {
      s.walk = leg_links_.data() + leg.links_at;
      s.walk_links = leg.links;
    }
    return s;
  };
  uint64_t best = std::numeric_limits<uint64_t>::max();
  // The least-cost alternatives are built in place, after those the plan already has.
  const size_t first = p.alternatives.size();
  const uint32_t ups = exit_offset_[static_cast<size_t>(src_gpu)];
  const uint32_t downs = exit_offset_[static_cast<size_t>(dst_gpu)];
  for (uint32_t xi = downs; xi < exit_offset_[static_cast<size_t>(dst_gpu) + 1]; ++xi) {
    const DeviceId x = exits_[xi];
    TargetRef t = fabric_target(x);
    for (uint32_t ei = ups; ei < exit_offset_[static_cast<size_t>(src_gpu) + 1]; ++ei) {
      const DeviceId e = exits_[ei];
      auto [fc, fn] = fabric_best(e, t);
      if (fn == 0) continue;
      uint64_t total = lead_cost + fc + exit_cost_[static_cast<size_t>(dst_gpu)];
      if (total > best) continue;
      if (total < best) {
        best = total;
        p.alternatives.erase(p.alternatives.begin() + static_cast<std::ptrdiff_t>(first), p.alternatives.end());
      }
      Alternative& a = p.alternatives.emplace_back();
      a.segments.assign(lead.begin(), lead.end());
      a.segments.push_back(segment(src, e, up_legs_[ei]));
      a.segments.push_back({e, x, fn, nullptr});
      a.segments.push_back(segment(x, dst, down_legs_[xi]));
      a.target = t;
      a.count = 1;
      for (const Segment& s : a.segments) a.count = sat_mul(a.count, s.count);
    }
  }
  for (size_t i = first; i < p.alternatives.size(); ++i) p.total = sat_add(p.total, p.alternatives[i].count);
}

std::shared_ptr<EcmpRouter::Plan> EcmpRouter::make_plan(int src_gpu, int dst_gpu, bool pxn) const {
  auto plan = std::make_shared<Plan>();
  DeviceId src = gpus_[static_cast<size_t>(src_gpu)];
  DeviceId dst = gpus_[static_cast<size_t>(dst_gpu)];
  int src_node = devices_[src].node;
  int dst_node = devices_[dst].node;
  if (src_gpu == dst_gpu) {
    plan->alternatives.push_back({{}, 1, {}});
    plan->total = 1;
    return plan;
  }
  if (src_node == dst_node) {
    IntraDag dag = intra_dag(src_node, src, dst);
    uint64_t n = dag.count[local_[src]];
    if (n > 0) {
      plan->alternatives.push_back({{{src, dst, n, std::move(dag.tables)}}, n, {}});
      plan->total = n;
      return plan;
    }
    // No path inside the node (a topology file may hang each GPU straight off the fabric):
    // out through the fabric and back in.
  }
  if (pxn && src_node != dst_node) {
    // The relay is the source node's GPU with the destination's local index; PXN applies only
    // when the handover to it is all NVLink.
    int local_dst = devices_[dst].local;
    DeviceId relay = kNone;
    int relay_gpu = -1;
    size_t first = static_cast<size_t>(src_gpu - devices_[src].local);
    for (size_t g = first; g < gpus_.size() && devices_[gpus_[g]].node == src_node; ++g) {
      if (devices_[gpus_[g]].local == local_dst) {
        relay = gpus_[g];
        relay_gpu = static_cast<int>(g);
      }
    }
    if (relay != kNone && relay != src) {
      IntraDag hop = intra_dag(src_node, src, relay);
      uint64_t n = hop.count[local_[src]];
      bool nvlink = n > 0;
      if (nvlink) {
        std::vector<LinkId> probe;
        intra_walk(hop, 0, probe);
        for (LinkId l : probe) nvlink = nvlink && links_[l].kind == LinkKind::nvlink;
      }
      if (nvlink) {
        uint64_t lead_cost =
            hop.dist[local_[src]] + uint64_t{exit_cost_[static_cast<size_t>(relay_gpu)]};
        const Segment lead{src, relay, n, hop.tables};
        add_cross_node(*plan, relay_gpu, lead_cost, std::span(&lead, 1), dst_gpu);
        if (plan->total > 0) return plan;
      }
    }
  }
  add_cross_node(*plan, src_gpu, exit_cost_[static_cast<size_t>(src_gpu)], {}, dst_gpu);
  return plan;
}

std::shared_ptr<const EcmpRouter::Plan> EcmpRouter::plan(int src_gpu, int dst_gpu, bool pxn) const {
  const uint64_t key = pair_key(src_gpu, dst_gpu, pxn);
  Shard& cache = shard(key);
  {
    std::shared_lock read(cache.mutex);
    const Shard::PlanRef* ref = cache.plan_index.find(key);
    if (ref && ref->plan != kNone) return cache.plans[ref->plan];
  }
  const std::shared_ptr<const Plan> made = new_plan(src_gpu, dst_gpu, pxn);
  std::unique_lock write(cache.mutex);
  return cache.plans[cache.store_plan(key, made->total, made->by_hash(), made).plan];
}

EcmpRouter::Shard::PlanRef& EcmpRouter::Shard::store_plan(uint64_t pair, uint64_t total, bool by_hash,
                                                          const std::shared_ptr<const Plan>& keep,
                                                          size_t route_size) {
  if (plan_index.size() >= kMaxPlans || route_links.size() + 1 + route_size > kMaxRouteLinks) {
    plans.clear();
    plan_index.clear();
    route_index.clear();
    route_links.clear();
  }
  PlanRef fresh{.total = total};
  fresh.by_hash = by_hash ? 1 : 0;
  PlanRef& ref = plan_index.insert(pair, fresh);
  if (keep && ref.plan == kNone) {
    ref.plan = static_cast<uint32_t>(plans.size());
    plans.push_back(keep);
  }
  return ref;
}

std::shared_ptr<const EcmpRouter::Plan> EcmpRouter::new_plan(int src_gpu, int dst_gpu, bool pxn) const {
  if (src_gpu < 0 || dst_gpu < 0 || static_cast<size_t>(src_gpu) >= gpus_.size() ||
      static_cast<size_t>(dst_gpu) >= gpus_.size()) {
    throw std::out_of_range("route: GPU " + std::to_string(src_gpu) + " -> " +
                            std::to_string(dst_gpu) + " outside 0.." +
                            std::to_string(gpus_.size() - 1));
  }
  std::shared_ptr<Plan> p = make_plan(src_gpu, dst_gpu, pxn);
  if (p->alternatives.size() > 1) {  // pick() reads the exits only to choose among several
    auto slots = std::make_unique<Plan::NicSlots>();
    for (const Alternative& a : p->alternatives) {
      for (const Segment& seg : a.segments) {
        if (!seg.fabric()) continue;
        slots->outs.push_back(seg.from);
        slots->ins.push_back(seg.to);
        break;
      }
    }
    for (auto* v : {&slots->outs, &slots->ins}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    if (!slots->outs.empty()) p->slots = std::move(slots);
  }
  if (p->total == 0) {
    throw std::runtime_error("no route from GPU " + std::to_string(src_gpu) + " (" +
                             devices_[gpus_[static_cast<size_t>(src_gpu)]].name + ") to GPU " +
                             std::to_string(dst_gpu) + " (" +
                             devices_[gpus_[static_cast<size_t>(dst_gpu)]].name + ")");
  }
  return p;
}

std::vector<LinkId> EcmpRouter::unrank(const Plan& p, uint64_t index) const {
  std::vector<LinkId> out;
  out.reserve(kRouteLinksReserved);
  unrank(p, index, out);
  return out;
}

void EcmpRouter::unrank(const Plan& p, uint64_t index, std::vector<LinkId>& out, FabricPart* part) const {
  for (const Alternative& a : p.alternatives) {
    if (index >= a.count) {
      index -= a.count;
      continue;
    }
    for (const Segment& s : a.segments) {
      uint64_t sub = index % s.count;
      index /= s.count;
      if (s.fabric()) {
        const size_t from = out.size();
        const uint64_t want = fabric_best(s.from, a.target).first;
        fabric_walk(s.from, a.target, sub, want, out);
        if (part != nullptr) {
          *part = {.exit = s.from, .target = a.target, .count = s.count, .sub = sub, .want = want, .from = from,
                   .to = out.size()};
        }
      } else if (s.walk) {
        append_links(out, s.walk, s.walk + s.walk_links);
      } else if (s.from != s.to) {
        intra_walk({devices_[s.from].node, s.from, s.to, nullptr, s.tables->dist.data(), s.tables->count.data()},
                   sub, out);
      }
    }
    return;
  }
  throw std::logic_error("EcmpRouter: path index out of range");
}

void EcmpRouter::walk_leg(const ExitLeg& leg, DeviceId from, DeviceId to, uint64_t sub,
                          std::vector<LinkId>& out) const {
  if (leg.links != UINT32_MAX) {
    append_links(out, leg_links_.data() + leg.links_at, leg_links_.data() + leg.links_at + leg.links);
  } else if (from != to) {
    intra_walk({devices_[from].node, from, to, nullptr, leg.tables->dist.data(), leg.tables->count.data()}, sub, out);
  }
}

bool EcmpRouter::single_exit_route(int src_gpu, int dst_gpu, uint64_t h, uint64_t& total, std::vector<LinkId>& out,
                                   FabricPart* part) const {
  if (src_gpu < 0 || dst_gpu < 0 || static_cast<size_t>(src_gpu) >= gpus_.size() ||
      static_cast<size_t>(dst_gpu) >= gpus_.size()) {
    return false;
  }
  const auto s = static_cast<size_t>(src_gpu);
  const auto d = static_cast<size_t>(dst_gpu);
  if (devices_[gpus_[s]].node == devices_[gpus_[d]].node || exit_offset_[s + 1] - exit_offset_[s] != 1 ||
      exit_offset_[d + 1] - exit_offset_[d] != 1) {
    return false;
  }
  // make_plan's one alternative (add_cross_node) and unrank's walk of it: up, fabric, down, the
  // index read as mixed radix with the first segment's sub-index least significant.
  const uint32_t ei = exit_offset_[s];
  const uint32_t xi = exit_offset_[d];
  const TargetRef t = fabric_target(exits_[xi]);
  const auto [cost, fabric] = fabric_best(exits_[ei], t);
  if (fabric == 0) return false;
  const ExitLeg& up = up_legs_[ei];
  const ExitLeg& down = down_legs_[xi];
  total = sat_mul(sat_mul(up.count, fabric), down.count);
  uint64_t index = h % total;
  out.reserve(out.size() + kRouteLinksReserved);
  walk_leg(up, gpus_[s], exits_[ei], index % up.count, out);
  index /= up.count;
  const size_t fabric_from = out.size();
  fabric_walk(exits_[ei], t, index % fabric, cost, out);
  if (part != nullptr) {
    *part = {.exit = exits_[ei], .target = t, .count = fabric, .sub = index % fabric, .want = cost,
             .from = fabric_from, .to = out.size()};
  }
  index /= fabric;
  walk_leg(down, exits_[xi], gpus_[d], index % down.count, out);
  return true;
}

uint64_t EcmpRouter::pick(const Plan& p, uint64_t h, int nic) const {
  if (nic < 0 || p.alternatives.size() <= 1 || !p.slots) return h % p.total;
  // Slot i takes the i-th exit out and the i-th in, then the hash picks among their paths.
  const DeviceId out = p.slots->outs[static_cast<size_t>(nic) % p.slots->outs.size()];
  const DeviceId in = p.slots->ins[static_cast<size_t>(nic) % p.slots->ins.size()];
  uint64_t offset = 0;
  for (const Alternative& a : p.alternatives) {
    for (const Segment& s : a.segments) {
      if (!s.fabric()) continue;
      if (s.from == out && s.to == in) return offset + h % a.count;
      break;
    }
    offset += a.count;
  }
  return h % p.total;  // that pair of exits is not among the least-cost ones
}

void EcmpRouter::add_variants(RouteSet& out, size_t start, const FabricPart& fabric, size_t k) const {
  const uint64_t n = std::min<uint64_t>(k, fabric.count);
  if (n <= 1) return;
  const size_t end = out.links.size();
  out.links.reserve(end + (n - 1) * (end - start));
  const auto copy = [&](size_t from, size_t to) {
    const size_t at = out.links.size();
    out.links.resize(at + (to - from));
    std::copy_n(out.links.begin() + static_cast<std::ptrdiff_t>(from), to - from,
                out.links.begin() + static_cast<std::ptrdiff_t>(at));
  };
  for (uint64_t j = 1; j < n; ++j) {
    const uint64_t step = fabric.count / n * j + fabric.count % n * j / n;  // floor(j * count / n)
    copy(start, fabric.from);
    fabric_walk(fabric.exit, fabric.target, (fabric.sub + step) % fabric.count, fabric.want, out.links);
    copy(fabric.to, end);
    out.end_route();
  }
}

void EcmpRouter::Shard::store_route(uint64_t pair, uint64_t total, bool by_hash,
                                    const std::shared_ptr<const Plan>& keep, uint64_t index,
                                    std::span<const LinkId> route) {
  PlanRef& ref = store_plan(pair, total, by_hash, keep, route.size());
  const auto next = static_cast<uint32_t>(route_links.size());
  if (ref.route == kNoRoute) {
    ref.route = next;
    ref.first = index;
  } else if (find_route(ref, pair, index) || route_index.insert(RouteKey{pair, index}, next) != next) {
    return;  // another thread cached it meanwhile
  }
  route_links.push_back(static_cast<LinkId>(route.size()));
  route_links.insert(route_links.end(), route.begin(), route.end());
}

std::vector<LinkId> EcmpRouter::route(int src_gpu, int dst_gpu, uint64_t flow_hash, bool pxn, int nic) const {
  std::vector<LinkId> out;
  route(src_gpu, dst_gpu, flow_hash, pxn, nic, out);
  return out;
}

void EcmpRouter::route(int src_gpu, int dst_gpu, uint64_t flow_hash, bool pxn, int nic,
                       std::vector<LinkId>& out) const {
  // The commonest query: one route, added to the caller's vector.
  const uint64_t h = route_hash(src_gpu, dst_gpu, flow_hash);
  // Between GPUs of two nodes with one nearest exit each, the route is walked on every query,
  // with no lock taken and nothing cached: the walk costs about what finding and copying a
  // cached route does, and an all-to-all's pairs, each routed once, fill no cache.
  if (uint64_t total = 0; !pxn && single_exit_route(src_gpu, dst_gpu, h, total, out)) return;
  const uint64_t pair = pair_key(src_gpu, dst_gpu, pxn);
  Shard& cache = shard(pair);
  std::shared_ptr<const Plan> p;
  bool known = false;  // the pair is indexed: this is at least its second route
  {
    std::shared_lock read(cache.mutex);
    if (const Shard::PlanRef* ref = cache.plan_index.find(pair)) {
      // The hash's route among all, found without reading the plan; or the NIC slot's (whose
      // plan is kept).
      const uint64_t index = nic < 0 || ref->by_hash ? h % ref->total : pick(*cache.plans[ref->plan], h, nic);
      if (const LinkId* at = cache.find_route(*ref, pair, index)) {
        out.insert(out.end(), at + 1, at + 1 + *at);
        return;
      }
      if (ref->plan != kNone) p = cache.plans[ref->plan];
      known = true;
    }
  }
  // A plan not at hand and the route are made with no lock held, then cached under one
  // exclusive lock; the plan is kept from the pair's second route on, or where pick() reads it.
  if (!p) p = new_plan(src_gpu, dst_gpu, pxn);
  const uint64_t index = pick(*p, h, nic);
  const size_t first = out.size();
  out.reserve(first + kRouteLinksReserved);
  unrank(*p, index, out);
  const bool keep = known || !p->by_hash();
  std::unique_lock write(cache.mutex);
  cache.store_route(pair, p->total, p->by_hash(), keep ? p : nullptr, index, std::span<const LinkId>(out).subspan(first));
}

void EcmpRouter::spray(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic, size_t k, RouteSet& out) const {
  if (k <= 1) {
    route(src_gpu, dst_gpu, flow_hash, false, nic, out.links);
    out.end_route();
    return;
  }
  // The picked route first, with where its fabric segment lies, then the others around it. Between
  // GPUs of two nodes with one nearest exit each it is walked with no plan (as route() walks its
  // one route); elsewhere unranked from the pair's kept plan on every query, none cached: an
  // all-to-all reads each of its pairs' k routes once.
  const uint64_t h = route_hash(src_gpu, dst_gpu, flow_hash);
  const size_t start = out.links.size();
  FabricPart part;
  if (uint64_t total = 0; !single_exit_route(src_gpu, dst_gpu, h, total, out.links, &part)) {
    const std::shared_ptr<const Plan> p = plan(src_gpu, dst_gpu, false);
    unrank(*p, pick(*p, h, nic), out.links, &part);
  }
  out.end_route();
  add_variants(out, start, part, k);
}

std::vector<std::vector<LinkId>> EcmpRouter::spray(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic,
                                                   size_t k) const {
  RouteSet set;
  spray(src_gpu, dst_gpu, flow_hash, nic, k, set);
  return set.lists();
}

uint64_t EcmpRouter::path_count(int src_gpu, int dst_gpu, bool pxn) const {
  return plan(src_gpu, dst_gpu, pxn)->total;
}

std::vector<std::vector<LinkId>> EcmpRouter::paths(int src_gpu, int dst_gpu, size_t limit,
                                                   bool pxn) const {
  auto p = plan(src_gpu, dst_gpu, pxn);
  std::vector<std::vector<LinkId>> out;
  for (uint64_t i = 0; i < p->total && out.size() < limit; ++i) out.push_back(unrank(*p, i));
  return out;
}

}  // namespace dtsim::topology
