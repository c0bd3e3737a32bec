// Cluster: the built cluster graph: every GPU, switch, NIC and host bridge as a device, every
// cable or on-board link as a pair of directed links, and routes between GPUs over them. Built
// once from a ClusterSpec (or a topology file) by build_cluster(); read by every network model.
//   topology::Cluster c = topology::build_cluster(spec);
//   for (LinkId l : c.route(0, 9, flow_hash)) total += c.link(l).latency;
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/units.h"
#include "topology/cluster_spec.h"

namespace dtsim::topology {

using DeviceId = uint32_t;
using LinkId = uint32_t;

// Routes a sprayed transfer uses at most (Cluster::sprayed_routes): every leaf uplink of a
// radix-64 switch (32), the common 400G leaf, so on a 2-tier fat-tree of such switches a sprayed
// flow loads every uplink equally, as per-packet adaptive routing does. With 16, flows sprayed
// over half the spines each (the half their hash picks) loaded the two halves unevenly: the
// 2 x P5 all_reduce priced on flows stayed 12% behind the closed form. Each route is a sub-flow
// in the flow models, so K bounds their solver's growth.
inline constexpr size_t kSprayRoutes = 32;

enum class DeviceKind { gpu, nvswitch, pcie_switch, host, nic, network_switch };
enum class LinkKind { nvlink, pcie, network };

inline std::string_view name(LinkKind k) {
  switch (k) {
    case LinkKind::nvlink: return "nvlink";
    case LinkKind::pcie: return "pcie";
    case LinkKind::network: return "network";
  }
  return "network";
}

struct Device {
  DeviceKind kind = DeviceKind::gpu;
  std::string name;   // unique, e.g. "node3/gpu5", "leaf12", "spine0"
  int node = -1;      // node index for devices inside a node; -1 for fabric switches
  int tier = 0;       // switch tier in the scale-out fabric (0 = leaf); 0 elsewhere
  int local = 0;      // index within its node (GPU i, NIC i) or tier
};

// One direction of a link; links come in pairs (l, l ^ 1) for the two directions.
struct Link {
  DeviceId from = 0;
  DeviceId to = 0;
  LinkKind kind = LinkKind::network;
  Bandwidth bandwidth;
  Time latency;
};

// Routes back to back in one buffer (a sprayed transfer's, Cluster::append_sprayed_routes): route
// i is links[ends[i - 1], ends[i]), the first from 0. Cleared and filled again it keeps its
// capacity, so a caller that routes transfer after transfer into one set stops allocating.
struct RouteSet {
  std::vector<LinkId> links;
  std::vector<uint32_t> ends;

  size_t size() const { return ends.size(); }
  bool empty() const { return ends.empty(); }
  std::span<const LinkId> operator[](size_t i) const {
    const uint32_t from = i == 0 ? 0 : ends[i - 1];
    return std::span<const LinkId>(links).subspan(from, ends[i] - from);
  }
  std::span<const LinkId> front() const { return (*this)[0]; }
  void clear() {
    links.clear();
    ends.clear();
  }
  // The links appended since the last route's end make the next route.
  void end_route() { ends.push_back(static_cast<uint32_t>(links.size())); }
  void add(std::span<const LinkId> route) {
    links.insert(links.end(), route.begin(), route.end());
    end_route();
  }
  // The routes as a list of lists, for a caller that keeps them.
  std::vector<std::vector<LinkId>> lists() const {
    std::vector<std::vector<LinkId>> out;
    out.reserve(size());
    for (size_t i = 0; i < size(); ++i) out.emplace_back((*this)[i].begin(), (*this)[i].end());
    return out;
  }
};

class Cluster {
 public:
  virtual ~Cluster() = default;

  virtual const ClusterSpec& spec() const = 0;
  virtual std::span<const Device> devices() const = 0;
  virtual std::span<const Link> links() const = 0;
  const Device& device(DeviceId d) const { return devices()[d]; }
  const Link& link(LinkId l) const { return links()[l]; }
  // "node0/nic3->leaf1": the names of the devices a link joins, in its direction.
  std::string link_name(LinkId l) const { return device(link(l).from).name + "->" + device(link(l).to).name; }

  // GPUs are numbered by global rank: node-major, GPU index within the node inner.
  virtual int gpu_count() const = 0;
  virtual DeviceId gpu_device(int gpu) const = 0;
  int node_of(int gpu) const { return gpu / spec().gpus_per_node; }

  // The directed links a transfer from `src_gpu` to `dst_gpu` crosses, in order. Among equal-cost
  // paths the choice is a deterministic function of `flow_hash` (ECMP). Cached per (src, dst,
  // path index), or between GPUs with one nearest NIC each walked anew at about a lookup's cost,
  // so repeated queries are cheap.
  virtual std::vector<LinkId> route(int src_gpu, int dst_gpu, uint64_t flow_hash = 0) const = 0;

  // The route of a transfer pinned to NIC slot `nic`: where a GPU has several equally near NICs
  // of its own (AWS P5: four per GPU), it leaves through the nic-th of the source GPU's and
  // enters through the nic-th of the destination GPU's (each mod their number), as NCCL pins
  // each channel to a NIC; the rest of the path is chosen by `flow_hash` as in route(). The same
  // as route() for clusters without such a choice.
  virtual std::vector<LinkId> route_nic(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic) const {
    (void)nic;
    return route(src_gpu, dst_gpu, flow_hash);
  }
  // route_nic()'s route where `nic` >= 0, else route()'s, appended to `out`: a caller routing
  // many transfers in a row keeps one vector instead of taking a new one a route.
  virtual void append_route(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic, std::vector<LinkId>& out) const {
    const std::vector<LinkId> r = nic >= 0 ? route_nic(src_gpu, dst_gpu, flow_hash, nic) : route(src_gpu, dst_gpu, flow_hash);
    out.insert(out.end(), r.begin(), r.end());
  }

  // NCCL's PXN: when the destination sits on another rail, the source first hands the data over
  // NVLink to its peer on the destination's rail (the GPU with the destination's local index),
  // which sends through its own NIC, so the transfer never crosses rails in the fabric. Falls
  // back to route() when the two GPUs share a node or the peer is not reachable over NVLink.
  virtual std::vector<LinkId> route_pxn(int src_gpu, int dst_gpu, uint64_t flow_hash = 0) const {
    return route(src_gpu, dst_gpu, flow_hash);
  }
  // Adaptive routing (packet spraying): up to `k` equal-cost routes for one transfer, all leaving
  // and entering through the NICs of the route route_nic() (route() when `nic` < 0) picks and
  // crossing the same links inside the nodes, so they share their first link; only the fabric
  // part differs. The picked route comes first; the others are spread evenly over the routes
  // between those NICs from there (distinct leaf uplinks where the fabric has at least `k`), so
  // flows with different hashes use different subsets. All of them when there are at most `k`.
  // One route for a transfer inside a node. The default: the picked route alone.
  virtual std::vector<std::vector<LinkId>> sprayed_routes(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic,
                                                          size_t k) const {
    (void)k;
    return {nic >= 0 ? route_nic(src_gpu, dst_gpu, flow_hash, nic) : route(src_gpu, dst_gpu, flow_hash)};
  }
  // sprayed_routes()'s routes added to `out`, each as one route: a caller spraying many transfers
  // in a row keeps one set, which stops allocating once it has grown.
  virtual void append_sprayed_routes(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic, size_t k,
                                     RouteSet& out) const {
    for (const std::vector<LinkId>& r : sprayed_routes(src_gpu, dst_gpu, flow_hash, nic, k)) out.add(r);
  }
  // How many distinct equal-cost routes route() (or route_pxn()) chooses among for this pair:
  // the path diversity ECMP can spread flows over.
  virtual uint64_t path_count(int /*src_gpu*/, int /*dst_gpu*/, bool /*pxn*/ = false) const {
    return 1;
  }
  // The first `limit` of those routes, in a fixed order (flow hashes map onto these).
  virtual std::vector<std::vector<LinkId>> equal_cost_paths(int src_gpu, int dst_gpu, size_t limit,
                                                            bool pxn = false) const {
    (void)limit;
    return {pxn ? route_pxn(src_gpu, dst_gpu) : route(src_gpu, dst_gpu)};
  }
};

// Builds the graph a ClusterSpec describes, or reads spec.topology_file when it is set. Throws
// InputError when the fabric cannot hold the nodes (naming the radix or tiers that would).
std::unique_ptr<Cluster> build_cluster(const ClusterSpec& spec);
// Why the spec's NVLink domain cannot be built (one NVSwitch domain that is neither the node nor
// a multiple of whole nodes, or domains of several nodes that the node count does not fill);
// empty when it can. The loader and build_cluster() both refuse such a spec with it.
std::string domain_misfit(const ClusterSpec& spec);
// The spec the cluster graph is built from: each NVLink domain that joins several nodes
// (ClusterSpec::nodes_per_domain) becomes one node of the domain's GPUs and all their NICs, as
// the gb200-nvl72 preset describes a rack, so that the flow and packet models route between its
// trays over NVLink as the analytical model prices them. Otherwise the spec itself.
ClusterSpec graph_spec(const ClusterSpec& spec);
// Throws the InputError build_cluster() would for a fabric that cannot hold the cluster's NIC
// ports (radix, tiers, dragonfly groups, torus ports), without building anything: the loader
// runs it for every scenario, since the analytical model never builds the graph. A topology file
// is checked when it is read.
void check_fabric(const ClusterSpec& spec);

}  // namespace dtsim::topology
