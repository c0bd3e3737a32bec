// ClusterBuilder: the devices and link pairs of a cluster while it is being assembled by the node
// and fabric builders or a topology-file reader; finish() freezes them into the graph every
// network model reads. Internal to topology/.
//   ClusterBuilder b;
//   DeviceId g = b.add_device(DeviceKind::gpu, "node0/gpu0", 0, 0, 0);
//   b.connect(g, nvswitch, LinkKind::nvlink, bw, lat);   // adds both directions
//   std::unique_ptr<Cluster> c = std::move(b).finish(spec);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "topology/cluster.h"

namespace dtsim::topology {

class ClusterBuilder {
 public:
  DeviceId add_device(DeviceKind kind, std::string name, int node, int tier, int local);
  // Adds a -> b as an even link id and b -> a as the odd one after it; returns the a -> b id.
  LinkId connect(DeviceId a, DeviceId b, LinkKind kind, Bandwidth bandwidth, Time latency);

  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<Link>& links() const { return links_; }
  void reserve(size_t devices, size_t link_pairs);

  // GPUs take their rank from (node, local index); spec.nodes and spec.gpus_per_node must
  // already agree with the devices. Throws InputError when a GPU cannot reach the others.
  std::unique_ptr<Cluster> finish(ClusterSpec spec) &&;

 private:
  std::vector<Device> devices_;
  std::vector<Link> links_;
};

}  // namespace dtsim::topology
