// Torus (2D or 3D): every node is a point of the torus with its own router, wired to its two
// neighbours in each dimension (wrapping around); the node's NICs all plug into that router.
// Extents are the most even factorization of the node count, so the torus is exact.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "sim/error.h"
#include "topology/fabric.h"

namespace dtsim::topology {
namespace {

// The largest divisor of n not above n^(1/k).
int64_t even_factor(int64_t n, int k) {
  auto limit = static_cast<int64_t>(std::floor(std::pow(static_cast<double>(n), 1.0 / k) + 1e-9));
  for (int64_t d = std::max<int64_t>(limit, 1); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

}  // namespace

void check_torus(const ClusterSpec& spec) {
  const FabricSpec& f = spec.fabric;
  if (f.torus_dims != 2 && f.torus_dims != 3) {
    throw InputError(SourceLocation{}, "cluster.fabric.torus_dims",
                     "expected 2 or 3, got " + std::to_string(f.torus_dims));
  }
  const int dims = f.torus_dims;
  const int64_t router_ports = int64_t{spec.nic.count} + 2 * dims;
  if (router_ports > f.radix) {
    throw InputError(SourceLocation{}, "cluster.fabric.radix",
                     "a " + std::to_string(dims) + "D torus router needs " +
                         std::to_string(spec.nic.count) + " NIC ports + " +
                         std::to_string(2 * dims) +
                         " neighbour ports: use radix >= " + std::to_string(router_ports));
  }
}

void build_torus(ClusterBuilder& b, const ClusterSpec& spec, std::span<const DeviceId> nic_ports) {
  const FabricSpec& f = spec.fabric;
  check_torus(spec);
  const int dims = f.torus_dims;
  const int64_t nodes = spec.nodes;
  std::array<int64_t, 3> ext{1, 1, 1};
  if (dims == 3) {
    ext[2] = even_factor(nodes, 3);
    ext[1] = even_factor(nodes / ext[2], 2);
    ext[0] = nodes / ext[2] / ext[1];
  } else {
    ext[1] = even_factor(nodes, 2);
    ext[0] = nodes / ext[1];
  }
  std::vector<DeviceId> router(static_cast<size_t>(nodes));
  for (int64_t n = 0; n < nodes; ++n) {
    int64_t x = n % ext[0];
    int64_t y = (n / ext[0]) % ext[1];
    int64_t z = n / (ext[0] * ext[1]);
    std::string name = "torus/";
    name += std::to_string(x);
    name += '.';
    name += std::to_string(y);
    if (dims == 3) {
      name += '.';
      name += std::to_string(z);
    }
    router[static_cast<size_t>(n)] =
        b.add_device(DeviceKind::network_switch, name, -1, 0, static_cast<int>(n));
  }
  const std::array<int64_t, 3> stride{1, ext[0], ext[0] * ext[1]};
  for (int64_t n = 0; n < nodes; ++n) {
    for (int d = 0; d < dims; ++d) {
      if (ext[static_cast<size_t>(d)] < 2) continue;
      int64_t coord = (n / stride[static_cast<size_t>(d)]) % ext[static_cast<size_t>(d)];
      int64_t next = (coord + 1) % ext[static_cast<size_t>(d)];
      int64_t m = n + (next - coord) * stride[static_cast<size_t>(d)];
      b.connect(router[static_cast<size_t>(n)], router[static_cast<size_t>(m)], LinkKind::network,
                f.link.bandwidth, f.link.latency);
    }
  }
  const auto per_node = static_cast<int64_t>(nic_ports.size()) / nodes;
  for (size_t i = 0; i < nic_ports.size(); ++i) {
    b.connect(nic_ports[i], router[i / static_cast<size_t>(per_node)], LinkKind::network,
              nic_cable_bandwidth(spec), f.link.latency);
  }
}

}  // namespace dtsim::topology
