// Single switch: every NIC of every node on one switch of `radix` ports.
#include <string>

#include "sim/error.h"
#include "topology/fabric.h"

namespace dtsim::topology {

void check_single_switch(const ClusterSpec& spec) {
  const FabricSpec& f = spec.fabric;
  const int64_t ports = fabric_ports(spec);
  if (ports > f.radix) {
    throw InputError(SourceLocation{}, "cluster.fabric.radix",
                     "a single switch of radix " + std::to_string(f.radix) + " holds at most " +
                         std::to_string(f.radix) + " NIC ports; " + std::to_string(ports) +
                         " needed (" + std::to_string(spec.nodes) + " nodes x " +
                         std::to_string(spec.nic.count) +
                         " NICs): use kind: fat-tree or radix >= " + std::to_string(ports));
  }
}

void build_single_switch(ClusterBuilder& b, const ClusterSpec& spec,
                         std::span<const DeviceId> nic_ports) {
  const FabricSpec& f = spec.fabric;
  check_single_switch(spec);
  DeviceId sw = b.add_device(DeviceKind::network_switch, "switch0", -1, 0, 0);
  for (DeviceId nic : nic_ports)
    b.connect(nic, sw, LinkKind::network, nic_cable_bandwidth(spec), f.link.latency);
}

}  // namespace dtsim::topology
