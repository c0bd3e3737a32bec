#include "topology/graph_cluster.h"

namespace dtsim::topology {

GraphCluster::GraphCluster(ClusterSpec spec, std::vector<Device> devices, std::vector<Link> links,
                           std::vector<DeviceId> gpus)
    : spec_(std::move(spec)),
      devices_(std::move(devices)),
      links_(std::move(links)),
      gpus_(std::move(gpus)),
      graph_(make_cluster_graph(devices_.size(), links_)),
      router_(std::make_unique<EcmpRouter>(devices_, links_, graph_, gpus_)) {}

std::vector<LinkId> GraphCluster::route(int src_gpu, int dst_gpu, uint64_t flow_hash) const {
  return router_->route(src_gpu, dst_gpu, flow_hash, false);
}

std::vector<LinkId> GraphCluster::route_nic(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic) const {
  return router_->route(src_gpu, dst_gpu, flow_hash, false, nic);
}

void GraphCluster::append_route(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic,
                                std::vector<LinkId>& out) const {
  router_->route(src_gpu, dst_gpu, flow_hash, false, nic, out);
}

std::vector<LinkId> GraphCluster::route_pxn(int src_gpu, int dst_gpu, uint64_t flow_hash) const {
  return router_->route(src_gpu, dst_gpu, flow_hash, true);
}

std::vector<std::vector<LinkId>> GraphCluster::sprayed_routes(int src_gpu, int dst_gpu, uint64_t flow_hash,
                                                              int nic, size_t k) const {
  return router_->spray(src_gpu, dst_gpu, flow_hash, nic, k);
}

void GraphCluster::append_sprayed_routes(int src_gpu, int dst_gpu, uint64_t flow_hash, int nic, size_t k,
                                         RouteSet& out) const {
  router_->spray(src_gpu, dst_gpu, flow_hash, nic, k, out);
}

uint64_t GraphCluster::path_count(int src_gpu, int dst_gpu, bool pxn) const {
  return router_->path_count(src_gpu, dst_gpu, pxn);
}

std::vector<std::vector<LinkId>> GraphCluster::equal_cost_paths(int src_gpu, int dst_gpu,
                                                                size_t limit, bool pxn) const {
  return router_->paths(src_gpu, dst_gpu, limit, pxn);
}

}  // namespace dtsim::topology
