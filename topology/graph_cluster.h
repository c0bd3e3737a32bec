// GraphCluster: the Cluster every builder and reader produces: devices, link pairs, the
// Boost.Graph over them and the ECMP router with its caches. Other layers see it as a Cluster;
// topology/ code that needs the graph itself (bisection, describe) can reach it here.
//   auto c = build_cluster(spec);
//   const auto& g = static_cast<const GraphCluster&>(*c).graph();
#pragma once

#include <memory>
#include <vector>

#include "topology/cluster.h"
#include "topology/cluster_graph.h"
#include "topology/ecmp_router.h"

namespace dtsim::topology {

class GraphCluster final : public Cluster {
 public:
  GraphCluster(ClusterSpec spec, std::vector<Device> devices, std::vector<Link> links,
               std::vector<DeviceId> gpus);

  const ClusterSpec& spec() const override { return spec_; }
  std::span<const Device> devices() const override { return devices_; }
  std::span<const Link> links() const override { return links_; }
  int gpu_count() const override { return static_cast<int>(gpus_.size()); }
  DeviceId gpu_device(int gpu) const override { return gpus_[static_cast<size_t>(gpu)]; }

  std::vector<LinkId> route(int src_gpu, int dst_gpu, uint64_t flow_hash = 0) const override;
  std::vector<LinkId> route_pxn(int src_gpu, int dst_gpu, uint64_t flow_hash = 0) const override;
  std::vector<LinkId> route_nic(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic) const override;
  void append_route(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic, std::vector<LinkId>& out) const override;
  std::vector<std::vector<LinkId>> sprayed_routes(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic,
                                                  size_t k) const override;
  void append_sprayed_routes(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic, size_t k,
                             RouteSet& out) const override;
  uint64_t path_count(int src_gpu, int dst_gpu, bool pxn = false) const override;
  std::vector<std::vector<LinkId>> equal_cost_paths(int src_gpu, int dst_gpu, size_t limit,
                                                    bool pxn = false) const override;

  const ClusterGraph& graph() const { return graph_; }
  const EcmpRouter& router() const { return *router_; }

 private:
  ClusterSpec spec_;
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::vector<DeviceId> gpus_;
  ClusterGraph graph_;
  std::unique_ptr<EcmpRouter> router_;
};

}  // namespace dtsim::topology
