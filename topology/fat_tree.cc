// Folded-Clos fat-trees (two and three tiers) and the Clos core that rail-optimized fabrics
// share with them.
#include <cmath>
#include <string>

#include "sim/error.h"
#include "topology/catalog.h"
#include "topology/fabric.h"

namespace dtsim::topology {
namespace {

InputError fabric_error(const std::string& key, const std::string& message) {
  return InputError(SourceLocation{}, "cluster.fabric." + key, message);
}

ClosShape shape_of(int radix, int tiers, double oversubscription) {
  ClosShape s{radix, tiers, radix, 0};
  if (tiers > 1) {
    s.up = static_cast<int>(std::floor(radix / (1 + oversubscription)));
    s.down = std::min(radix - s.up, static_cast<int>(std::floor(s.up * oversubscription + 1e-9)));
  }
  return s;
}

}  // namespace

int64_t ClosShape::max_leaves() const {
  if (tiers <= 1) return 1;
  if (tiers == 2) return radix;
  return int64_t{radix} * (radix / 2);
}

ClosShape clos_shape(const FabricSpec& f) {
  if (f.tiers < 1 || f.tiers > 3) {
    throw fabric_error("tiers", "expected 1, 2 or 3, got " + std::to_string(f.tiers));
  }
  if (f.radix < 2)
    throw fabric_error("radix", "expected at least 2 ports, got " + std::to_string(f.radix));
  if (!(f.oversubscription > 0)) {
    throw fabric_error("oversubscription",
                       "expected a positive ratio, got " + std::to_string(f.oversubscription));
  }
  ClosShape s = shape_of(f.radix, f.tiers, f.oversubscription);
  if (s.tiers > 1 && (s.up < 1 || s.down < 1)) {
    throw fabric_error("radix", "radix " + std::to_string(f.radix) + " is too small to split " +
                                    std::to_string(f.oversubscription) +
                                    ":1 between down and up ports");
  }
  return s;
}

int clos_radix_for(const FabricSpec& f, int64_t ports, int64_t group) {
  for (int r = std::max(f.radix, 2); r <= (1 << 20); ++r) {
    ClosShape s = shape_of(r, f.tiers, f.oversubscription);
    if (s.tiers > 1 && (s.up < 1 || s.down < 1)) continue;
    if (s.max_leaves() / group * s.down * group >= ports) return r;
  }
  return 0;
}

std::vector<DeviceId> build_clos(ClusterBuilder& b, const ClusterSpec& spec, const ClosShape& shape,
                                 int64_t leaves,
                                 const std::function<std::string(int64_t)>& leaf_name) {
  const Bandwidth bw = spec.fabric.link.bandwidth;
  const Time lat = spec.fabric.link.latency;
  std::vector<DeviceId> leaf(static_cast<size_t>(leaves));
  if (shape.tiers <= 1) {
    for (int64_t i = 0; i < leaves; ++i) {
      leaf[static_cast<size_t>(i)] =
          b.add_device(DeviceKind::network_switch, leaf_name(i), -1, 0, static_cast<int>(i));
    }
    return leaf;
  }
  if (shape.tiers == 2) {
    for (int64_t i = 0; i < leaves; ++i) {
      leaf[static_cast<size_t>(i)] =
          b.add_device(DeviceKind::network_switch, leaf_name(i), -1, 0, static_cast<int>(i));
    }
    for (int j = 0; j < shape.up; ++j) {
      DeviceId spine =
          b.add_device(DeviceKind::network_switch, "spine" + std::to_string(j), -1, 1, j);
      for (DeviceId l : leaf) b.connect(l, spine, LinkKind::network, bw, lat);
    }
    return leaf;
  }
  const int half = shape.radix / 2;
  const int64_t pods = (leaves + half - 1) / half;
  std::vector<DeviceId> core(static_cast<size_t>(shape.up) * static_cast<size_t>(half));
  for (size_t c = 0; c < core.size(); ++c) {
    core[c] = b.add_device(DeviceKind::network_switch, "core" + std::to_string(c), -1, 2,
                           static_cast<int>(c));
  }
  for (int64_t p = 0; p < pods; ++p) {
    const std::string pod = "pod" + std::to_string(p) + "/";
    std::vector<DeviceId> agg(static_cast<size_t>(shape.up));
    for (int j = 0; j < shape.up; ++j) {
      agg[static_cast<size_t>(j)] =
          b.add_device(DeviceKind::network_switch, pod + "agg" + std::to_string(j), -1, 1,
                       static_cast<int>(p * shape.up + j));
      for (int c = 0; c < half; ++c) {
        b.connect(agg[static_cast<size_t>(j)],
                  core[static_cast<size_t>(j) * static_cast<size_t>(half) + static_cast<size_t>(c)],
                  LinkKind::network, bw, lat);
      }
    }
    for (int64_t i = p * half; i < std::min(leaves, (p + 1) * half); ++i) {
      DeviceId l =
          b.add_device(DeviceKind::network_switch, pod + leaf_name(i), -1, 0, static_cast<int>(i));
      leaf[static_cast<size_t>(i)] = l;
      for (DeviceId a : agg) b.connect(l, a, LinkKind::network, bw, lat);
    }
  }
  return leaf;
}

ClosShape check_fat_tree(const ClusterSpec& spec) {
  const FabricSpec& f = spec.fabric;
  ClosShape shape = clos_shape(f);
  const int64_t ports = fabric_ports(spec);
  if (ports > shape.max_ports()) {
    std::string fix;
    if (f.tiers < 3) {
      FabricSpec more = f;
      more.tiers = f.tiers + 1;
      if (clos_shape(more).max_ports() >= ports)
        fix = "tiers: " + std::to_string(more.tiers) + " or ";
    }
    int r = clos_radix_for(f, ports);
    fix += r > 0 ? "radix >= " + std::to_string(r) : "more tiers";
    throw fabric_error("radix", "a " + std::to_string(f.tiers) + "-tier fat-tree of radix " +
                                    std::to_string(f.radix) + " holds at most " +
                                    std::to_string(shape.max_ports()) + " NIC ports; " +
                                    std::to_string(ports) + " needed (" +
                                    std::to_string(spec.nodes) + " nodes x " +
                                    std::to_string(spec.nic.count) + " NICs): use " + fix);
  }
  return shape;
}

void build_fat_tree(ClusterBuilder& b, const ClusterSpec& spec,
                    std::span<const DeviceId> nic_ports) {
  const FabricSpec& f = spec.fabric;
  const ClosShape shape = check_fat_tree(spec);
  const auto ports = static_cast<int64_t>(nic_ports.size());
  // Ports fill leaves in order, so a node's NICs share a leaf (or neighbouring leaves).
  const int64_t leaves = (ports + shape.down - 1) / shape.down;
  auto leaf =
      build_clos(b, spec, shape, leaves, [](int64_t i) { return "leaf" + std::to_string(i); });
  for (int64_t i = 0; i < ports; ++i) {
    b.connect(nic_ports[static_cast<size_t>(i)], leaf[static_cast<size_t>(i / shape.down)],
              LinkKind::network, nic_cable_bandwidth(spec), f.link.latency);
  }
}

}  // namespace dtsim::topology
