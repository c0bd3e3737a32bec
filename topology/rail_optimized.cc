// Rail-optimized fabric: NIC i of every node plugs into rail switch i of its scalable unit, so
// same-index GPUs of different nodes are one switch apart; the rail switches are the leaves of
// a Clos (spines, and cores at three tiers) that joins the rails and the units.
#include <string>

#include "sim/error.h"
#include "topology/fabric.h"

namespace dtsim::topology {

ClosShape check_rail_optimized(const ClusterSpec& spec) {
  const FabricSpec& f = spec.fabric;
  if (f.tiers < 2) {
    throw InputError(SourceLocation{}, "cluster.fabric.tiers",
                     "a rail-optimized fabric needs tiers >= 2 (spines join the rails), got " +
                         std::to_string(f.tiers));
  }
  ClosShape shape = clos_shape(f);
  const int64_t rails = spec.nic.count;
  const int64_t nodes = spec.nodes;
  // A scalable unit is as many nodes as a rail switch has down ports; each unit has one switch
  // per rail.
  const int64_t units = (nodes + shape.down - 1) / shape.down;
  const int64_t leaves = units * rails;
  if (leaves > shape.max_leaves()) {
    int64_t max_nodes = shape.max_leaves() / rails * shape.down;
    std::string fix;
    if (f.tiers < 3) {
      FabricSpec more = f;
      more.tiers = f.tiers + 1;
      ClosShape m = clos_shape(more);
      if (m.max_leaves() / rails * m.down >= nodes)
        fix = "tiers: " + std::to_string(more.tiers) + " or ";
    }
    int r = clos_radix_for(f, nodes * rails, rails);
    fix += r > 0 ? "radix >= " + std::to_string(r) : "more tiers";
    const std::string fabric = "a " + std::to_string(f.tiers) + "-tier rail-optimized fabric of radix " +
                               std::to_string(f.radix);
    // Too many rails for even one scalable unit: say so, not "holds at most 0 nodes".
    const std::string holds =
        max_nodes == 0 ? " has room for " + std::to_string(shape.max_leaves()) + " rail switches, fewer than the " +
                             std::to_string(rails) + " rails (NICs a node) one scalable unit needs"
                       : " with " + std::to_string(rails) + " rails holds at most " + std::to_string(max_nodes) +
                             " nodes (" + std::to_string(max_nodes * rails) + " NIC ports); " +
                             std::to_string(nodes) + " needed";
    throw InputError(SourceLocation{}, "cluster.fabric.radix", fabric + holds + ": use " + fix);
  }
  return shape;
}

void build_rail_optimized(ClusterBuilder& b, const ClusterSpec& spec,
                          std::span<const DeviceId> nic_ports) {
  const FabricSpec& f = spec.fabric;
  const ClosShape shape = check_rail_optimized(spec);
  const int64_t rails = spec.nic.count;
  const int64_t nodes = spec.nodes;
  const int64_t leaves = (nodes + shape.down - 1) / shape.down * rails;
  auto leaf = build_clos(b, spec, shape, leaves, [rails](int64_t i) {
    return "su" + std::to_string(i / rails) + "/rail" + std::to_string(i % rails);
  });
  for (int64_t n = 0; n < nodes; ++n) {
    for (int64_t r = 0; r < rails; ++r) {
      int64_t l = (n / shape.down) * rails + r;
      b.connect(nic_ports[static_cast<size_t>(n * rails + r)], leaf[static_cast<size_t>(l)],
                LinkKind::network, nic_cable_bandwidth(spec), f.link.latency);
    }
  }
}

}  // namespace dtsim::topology
