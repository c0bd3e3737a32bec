// Single switch: every NIC of every node on one switch of `radix` ports.
#include <string>

#include "sim/error.h"
#include "topology/fabric.h"

namespace dtsim::topology {

void build_single_switch(ClusterBuilder& b, const ClusterSpec& spec,
                         std::span<const DeviceId> nic_ports) {
  const FabricSpec& f = spec.fabric;
  const auto ports = static_cast<int64_t>(nic_ports.size());
  if (ports > f.radix) {
    throw InputError(SourceLocation{}, "cluster.fabric.radix",
                     "a single switch of radix " + std::to_string(f.radix) + " holds at most " +
                         std::to_string(f.radix) + " NIC ports; " + std::to_string(ports) +
                         " needed (" + std::to_string(spec.nodes) + " nodes x " +
                         std::to_string(spec.nic.count) +
                         " NICs): use kind: fat-tree or radix >= " + std::to_string(ports));
  }
  DeviceId sw = b.add_device(DeviceKind::network_switch, "switch0", -1, 0, 0);
  for (DeviceId nic : nic_ports)
    b.connect(nic, sw, LinkKind::network, nic_cable_bandwidth(spec), f.link.latency);
}

}  // namespace dtsim::topology
