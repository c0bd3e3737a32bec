// EcmpRouter: least-cost routes between GPUs over the cluster graph, with ECMP among the
// equal-cost ones. A link's cost is inverse to its bandwidth (as OSPF does), so NVLink is
// preferred to PCIe and, in a fabric of equal links, least cost is fewest hops. A route is
// three parts: the source GPU to its nearest NIC inside its node, NIC to NIC over the fabric
// switches, and the destination's nearest NIC to the destination GPU. GPUs are never transit
// (except the relay GPU of a PXN route), nor are the devices of a third node. GPU i therefore
// leaves through NIC i where NIC i is closest to it: on a rail-optimized fabric it stays on its
// rail. Equal-cost routes of a pair are numbered; a flow takes the one its hash picks. Safe to
// query from several threads at once: the caches are split by pair into shards with a lock each,
// taken only to look up and to store; every table and route is built with no lock held.
//   EcmpRouter r(devices, links, graph, gpus);
//   std::vector<LinkId> path = r.route(0, 9, flow_hash, /*pxn=*/false);
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "topology/cluster.h"
#include "topology/cluster_graph.h"

namespace dtsim::topology {

class EcmpRouter {
 public:
  EcmpRouter(std::span<const Device> devices, std::span<const Link> links,
             const ClusterGraph& graph, std::span<const DeviceId> gpus);
  ~EcmpRouter();
  EcmpRouter(const EcmpRouter&) = delete;
  EcmpRouter& operator=(const EcmpRouter&) = delete;

  // With `nic` >= 0, the route leaves through the nic-th of the source's nearest exits and
  // enters through the nic-th of the destination's (each mod their number), as NCCL pins a
  // channel to a NIC; `flow_hash` picks among what remains (Cluster::route_nic).
  std::vector<LinkId> route(int src_gpu, int dst_gpu, uint64_t flow_hash, bool pxn, int nic = -1) const;
  // The same route, appended to `out`.
  void route(int src_gpu, int dst_gpu, uint64_t flow_hash, bool pxn, int nic, std::vector<LinkId>& out) const;
  // Up to `k` routes for one transfer (Cluster::sprayed_routes): route()'s pick first, then others
  // of its alternative that differ only in the fabric segment, evenly spaced from the pick's.
  std::vector<std::vector<LinkId>> spray(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic, size_t k) const;
  // The same routes, added to `out`.
  void spray(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic, size_t k, RouteSet& out) const;
  uint64_t path_count(int src_gpu, int dst_gpu, bool pxn) const;
  std::vector<std::vector<LinkId>> paths(int src_gpu, int dst_gpu, size_t limit, bool pxn) const;

  // The NICs (or other node exits) a GPU sends through: those nearest to it inside its node.
  std::span<const DeviceId> nearest_exits(int gpu) const;
  uint32_t cost(LinkId l) const { return cost_[l]; }

 private:
  struct DagTables;
  struct IntraDag;
  struct FabricTarget;
  struct TargetRef;
  struct ExitTarget;
  struct Segment;
  struct Alternative;
  struct Plan;
  struct Shard;
  // A route's fabric segment: its exit, its table, the route's sub-index among its routes, their
  // least cost, and where the route's links of it lie in the output.
  struct FabricPart;
  struct RouteKey {
    uint64_t pair;
    uint64_t index;
    bool operator==(const RouteKey&) const = default;
  };

  // The least-cost DAG from `from` to `to` inside `node`: its tables are cached by the node's
  // class and the ends' local indices, made with no lock held on a miss.
  IntraDag intra_dag(int node, DeviceId from, DeviceId to) const;
  std::shared_ptr<const DagTables> make_dag(int node, DeviceId from, DeviceId to) const;
  void intra_walk(const IntraDag& dag, uint64_t index, std::vector<LinkId>& out) const;
  TargetRef fabric_target(DeviceId exit) const;
  // Cost and number of equal-cost routes to `t` through out-link `a`; nullopt when `a` leads away.
  struct OutArc;
  std::optional<std::pair<uint64_t, uint64_t>> via(const OutArc& a, const TargetRef& t) const;
  // Least cost and number of least-cost paths from exit `e` to exit `t.exit` over the fabric.
  std::pair<uint64_t, uint64_t> fabric_best(DeviceId e, const TargetRef& t) const;
  void fabric_walk(DeviceId e, const TargetRef& t, uint64_t index, std::vector<LinkId>& out) const;
  // The same, where the least cost from `e` (fabric_best's) is known: `want`.
  void fabric_walk(DeviceId e, const TargetRef& t, uint64_t index, uint64_t want, std::vector<LinkId>& out) const;
  // The plan of a pair: cached, or made with no lock held and then cached.
  std::shared_ptr<const Plan> plan(int src_gpu, int dst_gpu, bool pxn) const;
  // A pair's plan as the cache keeps it (with pick()'s exits), made with no lock held; throws
  // where the GPUs are out of range or have no route.
  std::shared_ptr<const Plan> new_plan(int src_gpu, int dst_gpu, bool pxn) const;
  std::shared_ptr<Plan> make_plan(int src_gpu, int dst_gpu, bool pxn) const;
  // The alternatives from GPU `src_gpu` (after `lead`, of cost `lead_cost`) out through its
  // nearest exits, across the fabric and in through `dst_gpu`'s.
  void add_cross_node(Plan& p, int src_gpu, uint64_t lead_cost, std::span<const Segment> lead,
                      int dst_gpu) const;
  std::vector<LinkId> unrank(const Plan& p, uint64_t index) const;
  // Appended to `out`, with its fabric segment in `part` where given (untouched where the route
  // has none).
  void unrank(const Plan& p, uint64_t index, std::vector<LinkId>& out, FabricPart* part = nullptr) const;
  struct ExitLeg;
  // Appends the sub-th route of a GPU's leg `leg` from `from` to `to` (one end its exit).
  void walk_leg(const ExitLeg& leg, DeviceId from, DeviceId to, uint64_t sub, std::vector<LinkId>& out) const;
  // Between GPUs of two nodes that have one nearest exit each, the plan has one alternative:
  // its route count (`total`) and the route route() takes for hash `h`, made without a plan, with
  // its fabric segment in `part` where given. False (and nothing made) elsewhere, or where there
  // is no route.
  bool single_exit_route(int src_gpu, int dst_gpu, uint64_t h, uint64_t& total, std::vector<LinkId>& out,
                         FabricPart* part = nullptr) const;
  // The index of the route `route()` takes: the hash's among all, or with a NIC slot, the
  // hash's among those through the slot's exits.
  uint64_t pick(const Plan& p, uint64_t hash, int nic) const;
  // After the route that ends `out` (from `start`), up to k - 1 more that differ from it only in
  // the fabric segment's sub-index, floor(j * count / n) past its own for j = 1 .. n - 1, n =
  // min(k, count): the route's other links copied around a fabric walk each.
  void add_variants(RouteSet& out, size_t start, const FabricPart& fabric, size_t k) const;
  bool is_fabric(DeviceId d) const { return devices_[d].node < 0; }

  std::span<const Device> devices_;
  std::span<const Link> links_;
  const ClusterGraph& graph_;
  std::span<const DeviceId> gpus_;
  std::vector<uint32_t> cost_;         // per link
  std::vector<uint32_t> node_offset_;  // node n's devices are node_devices_[offset[n], offset[n+1])
  std::vector<DeviceId> node_devices_;
  std::vector<uint32_t> local_;  // a device's index within its node, or within the fabric
  // Per node, its class: nodes with the same device kinds and the same links between them, in
  // local indices and costs, share one. Their intra-node tables are the same.
  std::vector<uint32_t> node_class_;
  std::vector<DeviceId> fabric_devices_;
  // Fabric-to-fabric links by fabric-local index (CSR), with both directions' costs inline:
  // the Dijkstra per destination switch touches only these.
  struct FabricArc {
    uint32_t to;        // fabric-local index
    uint32_t cost_out;  // this direction
    uint32_t cost_in;   // the reverse direction
  };
  std::vector<uint32_t> arc_offset_;
  std::vector<FabricArc> arcs_;
  // Every device's out-links in the graph's order (CSR), with what via() reads of each inline:
  // the fabric walks scan a switch's links once per hop.
  struct OutArc {
    LinkId link;
    DeviceId to;
    uint32_t cost;
    uint32_t fabric;  // `to`'s fabric-local index; none when `to` is in a node
  };
  std::vector<uint32_t> out_offset_;
  std::vector<OutArc> out_arcs_;
  std::span<const OutArc> out_arcs(DeviceId v) const {
    return std::span<const OutArc>(out_arcs_).subspan(out_offset_[v], out_offset_[v + 1] - out_offset_[v]);
  }
  std::vector<uint32_t> exit_offset_;  // per GPU, into exits_
  std::vector<DeviceId> exits_;
  std::vector<uint32_t> exit_cost_;  // per GPU: intra-node cost to its nearest exits
  // Per GPU and nearest exit (indexed as exits_): the node's part of every route between them,
  // up from the GPU to the exit and down from the exit to the GPU, made once here so that a
  // plan between nodes looks up no DAG and a single-route leg is copied, not walked.
  struct ExitLeg {
    std::shared_ptr<const DagTables> tables;
    uint64_t count = 0;           // its routes
    uint32_t links_at = 0;        // its one route in leg_links_, where count is 1
    uint32_t links = UINT32_MAX;  // that route's length; UINT32_MAX where count is not 1
  };
  std::vector<ExitLeg> up_legs_, down_legs_;
  std::vector<LinkId> leg_links_;
  // By device, for those that are some GPU's nearest exit: what its fabric table is keyed by,
  // and the table once pinned (fabric_target).
  std::unique_ptr<ExitTarget[]> exit_targets_;

  // The fabric tables and the intra-node ones, each behind its lock (ecmp_router.cc).
  struct TableCache;
  std::unique_ptr<TableCache> tables_;
  // Plans and routes, read on every query, in the shard of their pair.
  struct RouteKeyHash {
    size_t operator()(const RouteKey& k) const;
    static RouteKey empty();  // no pair's key: the route index's free slots
  };
  Shard& shard(uint64_t pair) const;
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace dtsim::topology
