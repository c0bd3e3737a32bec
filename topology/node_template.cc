#include "topology/node_template.h"

#include <algorithm>

namespace dtsim::topology {
namespace {

// Per-hop PCIe latency where the spec gives none (NVSwitch and bridge nodes): a switch
// traversal plus the link, as measured on Gen4/Gen5 switches (order of 100-300 ns).
constexpr double kPcieHopNs = 250;
// Inter-socket links (UPI, xGMI, Grace C2C) run at about twice a x16 PCIe link.
constexpr double kSocketLinkFactor = 2;
constexpr double kSocketHopNs = 150;

int add(NodeTemplate& t, DeviceKind kind, std::string name, int local) {
  t.parts.push_back({kind, std::move(name), local});
  return static_cast<int>(t.parts.size() - 1);
}

}  // namespace

Bandwidth pcie_x16_bandwidth(int generation) {
  if (generation <= 3) return Bandwidth::gbytes_per_s(12);
  if (generation == 4) return Bandwidth::gbytes_per_s(25);
  if (generation == 5) return Bandwidth::gbytes_per_s(50);
  return Bandwidth::gbytes_per_s(100);
}

Bandwidth host_link_bandwidth(const GpuSpec& gpu) {
  if (gpu.name == "gb200" || gpu.name == "gb300") return Bandwidth::gbytes_per_s(225);
  return pcie_x16_bandwidth(gpu.pcie_generation);
}

NodeTemplate node_template(const ClusterSpec& spec) {
  NodeTemplate t;
  const int g = spec.gpus_per_node;
  const int n = spec.nic.count;
  const ScaleUpKind kind = spec.scale_up.kind;
  t.gpus = g;

  const bool pcie_up = kind == ScaleUpKind::pcie;
  const Bandwidth pcie_bw =
      pcie_up ? spec.scale_up.bandwidth : pcie_x16_bandwidth(spec.gpu.pcie_generation);
  const Time pcie_hop = pcie_up ? spec.scale_up.latency.scaled(0.5) : Time::ns(kPcieHopNs);

  std::vector<int> gpu(static_cast<size_t>(g));
  for (int i = 0; i < g; ++i)
    gpu[static_cast<size_t>(i)] = add(t, DeviceKind::gpu, "gpu" + std::to_string(i), i);

  // PCIe: switches under sockets; with scale_up none, GPUs and NICs sit on the sockets directly.
  const bool no_switches = kind == ScaleUpKind::none;
  const int per_switch = kind == ScaleUpKind::nvswitch ? 2 : 4;
  const int switches = no_switches ? 0 : (g + per_switch - 1) / per_switch;
  const int attach_points = no_switches ? g : switches;
  const int sockets = attach_points <= 1 ? 1 : std::max(2, switches / 2);
  std::vector<int> cpu(static_cast<size_t>(sockets));
  for (int s = 0; s < sockets; ++s)
    cpu[static_cast<size_t>(s)] = add(t, DeviceKind::host, "cpu" + std::to_string(s), s);
  for (int s = 1; s < sockets; ++s) {
    t.wires.push_back({cpu[static_cast<size_t>(s - 1)], cpu[static_cast<size_t>(s)], LinkKind::pcie,
                       pcie_bw * kSocketLinkFactor, Time::ns(kSocketHopNs)});
  }
  std::vector<int> sw(static_cast<size_t>(switches));
  for (int s = 0; s < switches; ++s) {
    sw[static_cast<size_t>(s)] = add(t, DeviceKind::pcie_switch, "pcie" + std::to_string(s), s);
    t.wires.push_back({sw[static_cast<size_t>(s)], cpu[static_cast<size_t>(s * sockets / switches)],
                       LinkKind::pcie, pcie_bw, pcie_hop});
  }
  // The PCIe device a GPU (and the NICs near it) plugs into.
  auto attach_of = [&](int i) {
    return no_switches ? cpu[static_cast<size_t>(i * sockets / g)]
                       : sw[static_cast<size_t>(i / per_switch)];
  };
  for (int i = 0; i < g; ++i) {
    t.wires.push_back(
        {gpu[static_cast<size_t>(i)], attach_of(i), LinkKind::pcie, pcie_bw, pcie_hop});
  }

  if (kind == ScaleUpKind::nvswitch) {
    const int domain = std::clamp(spec.scale_up.domain_gpus, 1, g);
    const int domains = (g + domain - 1) / domain;
    for (int d = 0; d < domains; ++d) {
      int nvs = add(t, DeviceKind::nvswitch, "nvswitch" + std::to_string(d), d);
      for (int i = d * domain; i < std::min(g, (d + 1) * domain); ++i) {
        t.wires.push_back({gpu[static_cast<size_t>(i)], nvs, LinkKind::nvlink,
                           spec.scale_up.bandwidth, spec.scale_up.latency.scaled(0.5)});
      }
    }
  } else if (kind == ScaleUpKind::nvlink_bridge) {
    for (int i = 0; i + 1 < g; i += 2) {
      t.wires.push_back({gpu[static_cast<size_t>(i)], gpu[static_cast<size_t>(i + 1)],
                         LinkKind::nvlink, spec.scale_up.bandwidth, spec.scale_up.latency});
    }
  }

  // The NIC's base latency is split over its two PCIe hops (one at each end of a transfer), so
  // a route's summed latency includes it once.
  for (int i = 0; i < n; ++i) {
    int nic = add(t, DeviceKind::nic, "nic" + std::to_string(i), i);
    t.nics.push_back(nic);
    int near_gpu = static_cast<int>(static_cast<int64_t>(i) * g / n);
    t.wires.push_back(
        {nic, attach_of(near_gpu), LinkKind::pcie, pcie_bw, spec.nic.latency.scaled(0.5)});
  }
  return t;
}

void instantiate_node(ClusterBuilder& b, const NodeTemplate& t, int node,
                      std::vector<DeviceId>& nic_ports) {
  const std::string prefix = "node" + std::to_string(node) + "/";
  const auto first = static_cast<DeviceId>(b.devices().size());
  for (const auto& p : t.parts) b.add_device(p.kind, prefix + p.name, node, 0, p.local);
  for (const auto& w : t.wires) {
    b.connect(first + static_cast<DeviceId>(w.a), first + static_cast<DeviceId>(w.b), w.kind,
              w.bandwidth, w.latency);
  }
  for (int nic : t.nics) nic_ports.push_back(first + static_cast<DeviceId>(nic));
}

}  // namespace dtsim::topology
