// Dragonfly (Kim et al. 2008, balanced): routers of radix k carry p = k/4 NIC ports, a = 2p
// routers form a group wired all-to-all, and each router has h = p global links to other
// groups, spread evenly over every pair of groups. Minimal routes are local, global, local.
#include <string>
#include <vector>

#include "sim/error.h"
#include "topology/fabric.h"

namespace dtsim::topology {

DragonflyShape check_dragonfly(const ClusterSpec& spec) {
  const FabricSpec& f = spec.fabric;
  if (f.radix < 4) {
    throw InputError(SourceLocation{}, "cluster.fabric.radix",
                     "a dragonfly router needs radix >= 4, got " + std::to_string(f.radix));
  }
  const int64_t p = f.radix / 4;  // NIC ports and global links per router
  const int64_t h = p;
  const int64_t a = 2 * p;  // routers per full group
  const int64_t ports = fabric_ports(spec);
  const int64_t routers = (ports + p - 1) / p;
  const int64_t max_groups = a * h + 1;
  int64_t groups = f.dragonfly_groups > 0 ? f.dragonfly_groups : (routers + a - 1) / a;
  const int64_t per_group = (routers + groups - 1) / groups;
  auto capacity_error = [&](const std::string& why) {
    int64_t r = f.radix;
    while (true) {
      int64_t q = r / 4;
      if ((2 * q * q + 1) * 2 * q * q >= ports) break;
      ++r;
    }
    return InputError(SourceLocation{}, "cluster.fabric.radix",
                      "a dragonfly of radix " + std::to_string(f.radix) + " holds at most " +
                          std::to_string(max_groups) + " groups of " + std::to_string(a * p) +
                          " NIC ports (" + std::to_string(max_groups * a * p) + "); " +
                          std::to_string(ports) + " needed" + why +
                          ": use radix >= " + std::to_string(r) + " or kind: fat-tree");
  };
  if (per_group > a) {
    if (f.dragonfly_groups > 0 && routers <= max_groups * a) {
      throw InputError(
          SourceLocation{}, "cluster.fabric.dragonfly_groups",
          std::to_string(groups) + " groups of at most " + std::to_string(a) + " routers hold " +
              std::to_string(groups * a * p) + " NIC ports; " + std::to_string(ports) +
              " needed: use dragonfly_groups >= " + std::to_string((routers + a - 1) / a));
    }
    throw capacity_error("");
  }
  const int64_t links_per_pair = groups > 1 ? per_group * h / (groups - 1) : 0;
  if (groups > 1 && links_per_pair < 1) {
    throw capacity_error(" (" + std::to_string(groups) + " groups of " + std::to_string(per_group) +
                         " routers cannot all be wired to each other)");
  }
  return {p, h, groups, per_group, links_per_pair};
}

void build_dragonfly(ClusterBuilder& b, const ClusterSpec& spec,
                     std::span<const DeviceId> nic_ports) {
  const FabricSpec& f = spec.fabric;
  // Plain locals, not a structured binding: clang 14 does not let a lambda capture a binding.
  const DragonflyShape shape = check_dragonfly(spec);
  const int64_t p = shape.p, h = shape.h, groups = shape.groups, per_group = shape.per_group;
  const int64_t links_per_pair = shape.links_per_pair;
  const auto ports = static_cast<int64_t>(nic_ports.size());
  const Bandwidth bw = f.link.bandwidth;
  const Time lat = f.link.latency;
  std::vector<DeviceId> router(static_cast<size_t>(groups * per_group));
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t r = 0; r < per_group; ++r) {
      router[static_cast<size_t>(g * per_group + r)] = b.add_device(
          DeviceKind::network_switch, "group" + std::to_string(g) + "/router" + std::to_string(r),
          -1, 0, static_cast<int>(g * per_group + r));
    }
    for (int64_t r = 0; r < per_group; ++r) {
      for (int64_t s = r + 1; s < per_group; ++s) {
        b.connect(router[static_cast<size_t>(g * per_group + r)],
                  router[static_cast<size_t>(g * per_group + s)], LinkKind::network, bw, lat);
      }
    }
  }
  // Group i's global ports are numbered router-major; the block for group j starts at j's rank
  // among i's peers, so both ends of every pair of groups pick their ports the same way.
  auto global_router = [&](int64_t g, int64_t peer, int64_t c) {
    int64_t rank = peer < g ? peer : peer - 1;
    int64_t slot = rank * links_per_pair + c;
    return router[static_cast<size_t>(g * per_group + slot / h)];
  };
  for (int64_t i = 0; i < groups; ++i) {
    for (int64_t j = i + 1; j < groups; ++j) {
      for (int64_t c = 0; c < links_per_pair; ++c) {
        b.connect(global_router(i, j, c), global_router(j, i, c), LinkKind::network, bw, lat);
      }
    }
  }
  for (int64_t i = 0; i < ports; ++i) {
    b.connect(nic_ports[static_cast<size_t>(i)], router[static_cast<size_t>(i / p)],
              LinkKind::network, nic_cable_bandwidth(spec), lat);
  }
}

}  // namespace dtsim::topology
