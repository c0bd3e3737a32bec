#include "report/cluster_bill.h"

#include <algorithm>

namespace dtsim::report {
namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return b <= 0 ? 0 : (a + b - 1) / b;
}

}  // namespace

ClusterBill count_cluster(const topology::ClusterSpec& spec) {
  ClusterBill b;
  const int64_t nodes = std::max(spec.nodes, 0);
  b.gpus = nodes * std::max(spec.gpus_per_node, 0);
  b.nics = nodes * std::max(spec.nic.count, 0);
  const int64_t ports = b.nics;  // hosts seen by the fabric: one port per NIC
  const int64_t radix = std::max(spec.fabric.radix, 2);
  if (nodes <= 1 || ports == 0) return b;  // nothing to connect between nodes

  using topology::FabricKind;
  switch (spec.fabric.kind) {
    case FabricKind::single_switch:
      b.switches = ceil_div(ports, radix);
      b.links = ports;
      break;
    case FabricKind::torus:
      b.links = nodes * std::max(spec.fabric.torus_dims, 1);
      break;
    case FabricKind::dragonfly: {
      const int64_t hosts_per_router = std::max<int64_t>(radix / 4, 1);
      const int64_t local_ports = std::max<int64_t>(radix / 2, 1);
      const int64_t global_ports = std::max<int64_t>(radix / 4, 1);
      const int64_t routers = ceil_div(ports, hosts_per_router);
      const int64_t per_group = std::min(routers, local_ports);
      const int64_t groups = ceil_div(routers, per_group);
      b.switches = routers;
      b.links = ports + groups * per_group * (per_group - 1) / 2 +
                (groups > 1 ? routers * global_ports / 2 : 0);
      break;
    }
    case FabricKind::fat_tree:
    case FabricKind::rail_optimized: {
      const double o = std::max(spec.fabric.oversubscription, 1.0);
      const int64_t down = std::clamp<int64_t>(
          static_cast<int64_t>(static_cast<double>(radix) * o / (1 + o)), 1, radix - 1);
      const int64_t up = radix - down;
      if (spec.fabric.tiers <= 1 || ports <= radix) {
        b.switches = ceil_div(ports, radix);
        b.links = ports;
        break;
      }
      const int64_t leaves = spec.fabric.kind == FabricKind::rail_optimized
                                 ? std::max(spec.nic.count, 1) * ceil_div(nodes, down)
                                 : ceil_div(ports, down);
      const int64_t leaf_up = leaves * up;
      if (spec.fabric.tiers == 2) {
        b.switches = leaves + ceil_div(leaf_up, radix);
        b.links = ports + leaf_up;
      } else {
        const int64_t half = radix / 2;
        const int64_t mid = ceil_div(leaf_up, half);
        const int64_t mid_up = mid * half;
        b.switches = leaves + mid + ceil_div(mid_up, radix);
        b.links = ports + leaf_up + mid_up;
      }
      break;
    }
  }
  return b;
}

PointCost price(const ClusterBill& bill, const config::CostModel& cost) {
  auto n = [](int64_t v) { return static_cast<double>(v); };
  PointCost p;
  p.capex_usd = n(bill.gpus) * cost.gpu_usd + n(bill.switches) * cost.switch_usd +
                n(bill.nics) * cost.nic_usd + n(bill.links) * (cost.link_usd + 2 * cost.optics_usd);
  p.power_w = n(bill.gpus) * cost.gpu_w + n(bill.switches) * cost.switch_w +
              n(bill.nics) * cost.nic_w + n(bill.links) * 2 * cost.optics_w;
  return p;
}

}  // namespace dtsim::report
