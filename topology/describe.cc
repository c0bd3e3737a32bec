#include "topology/describe.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/error.h"
#include "topology/bisection.h"
#include "topology/catalog.h"

namespace dtsim::topology {
namespace {

std::string_view kind_name(DeviceKind k) {
  switch (k) {
    case DeviceKind::gpu:
      return "gpu";
    case DeviceKind::nvswitch:
      return "nvswitch";
    case DeviceKind::pcie_switch:
      return "pcie-switch";
    case DeviceKind::host:
      return "host";
    case DeviceKind::nic:
      return "nic";
    case DeviceKind::network_switch:
      return "switch";
  }
  return "?";
}

std::string_view link_kind_name(LinkKind k) {
  switch (k) {
    case LinkKind::nvlink:
      return "nvlink";
    case LinkKind::pcie:
      return "pcie";
    case LinkKind::network:
      return "network";
  }
  return "?";
}

std::string ratio(double r) {
  std::ostringstream s;
  s << std::setprecision(3) << r;
  return s.str();
}

// How transfers between nodes use their equal-cost routes, with `auto` resolved.
std::string routing(const ClusterSpec& spec) {
  const bool adaptive = spec.adaptive_routing();
  std::string r = adaptive ? "adaptive (sprayed over equal-cost routes)" : "ecmp (one route by hash)";
  if (spec.fabric.routing == Routing::automatic) r += adaptive ? ", auto on efa" : ", auto";
  return r;
}

void write_text(const Cluster& c, const ClusterSummary& s, std::ostream& out) {
  const ClusterSpec& spec = c.spec();
  auto row = [&](const char* key) -> std::ostream& {
    return out << std::left << std::setw(18) << key;
  };
  row("cluster") << (s.node_preset.empty() ? "custom" : s.node_preset) << ", " << s.nodes
                 << " nodes x " << s.gpus_per_node << " GPUs = " << s.gpus << " GPUs (" << s.gpu
                 << ")\n";
  if (spec.topology_file) row("topology file") << *spec.topology_file << "\n";
  // A whole-graph file says nothing of the spec's scale-up or NIC figures: show only counts.
  const bool from_spec = s.fabric != "file";
  row("scale-up");
  if (from_spec)
    out << name(spec.scale_up.kind) << ", " << to_string(spec.scale_up.bandwidth) << " per GPU, ";
  out << s.nvswitches << " NVSwitch, " << s.pcie_switches << " PCIe switches, " << s.hosts
      << " CPU sockets\n";
  if (s.domain_nodes > 1) {
    row("nvlink domain") << spec.scale_up.domain_gpus << " GPUs: " << s.domain_nodes
                         << " nodes on one NVSwitch domain, built as one node\n";
  }
  row("nics") << s.nics;
  if (from_spec) {
    out << " (" << spec.nic.count / s.domain_nodes << " per node, " << name(spec.nic.kind) << ", "
        << to_string_bits(spec.nic.bandwidth) << ")";
  }
  out << "\n";
  row("fabric") << s.fabric;
  if (s.fabric == "fat-tree" || s.fabric == "rail-optimized")
    out << ", " << spec.fabric.tiers << " tiers";
  if (s.fabric != "file")
    out << ", radix " << spec.fabric.radix << ", links "
        << to_string_bits(spec.fabric.link.bandwidth);
  out << "\n";
  row("switches") << s.switches;
  if (!s.switches_per_tier.empty()) {
    out << " (";
    for (size_t t = 0; t < s.switches_per_tier.size(); ++t) {
      out << (t ? ", " : "") << "tier " << t << ": " << s.switches_per_tier[t];
    }
    out << ")";
  }
  out << "\n";
  row("devices") << s.devices << "\n";
  row("links") << s.links << " cables (" << s.network_links << " network, " << s.nvlink_links
               << " nvlink, " << s.pcie_links << " pcie)\n";
  row("bisection") << to_string(s.bisection_bandwidth) << " ("
                   << to_string_bits(s.bisection_bandwidth) << ")\n";
  row("oversubscription") << ratio(s.oversubscription) << ":1 at the edge switches\n";
  row("path diversity") << s.path_diversity << " equal-cost routes, GPU 0 -> node " << (s.nodes - s.domain_nodes)
                        << "\n";
  row("routing") << routing(c.spec()) << "\n";
  const PatternRates& r = s.router_rates;
  if (std::isfinite(r.ring) || std::isfinite(r.uniform)) {
    auto rate = [](double gbytes) {
      if (!std::isfinite(gbytes)) return std::string("unbounded");
      std::ostringstream o;
      o << std::setprecision(4) << gbytes << "GB/s";
      return o.str();
    };
    row("router links") << "a node sends " << rate(r.ring) << " on a ring, " << rate(r.tree) << " on a tree, "
                        << rate(r.uniform) << " to all others (its NICs: "
                        << rate(spec.nic.count * std::min(spec.nic.bandwidth, spec.fabric.link.bandwidth).gbytes_per_s())
                        << ")\n";
  }
}

void write_json(const Cluster& c, const ClusterSummary& s, std::ostream& out) {
  nlohmann::ordered_json j;
  j["node_preset"] = s.node_preset;
  j["gpu"] = s.gpu;
  j["gpus"] = s.gpus;
  j["nodes"] = s.nodes;
  j["gpus_per_node"] = s.gpus_per_node;
  j["nvlink_domain_nodes"] = s.domain_nodes;
  j["nics"] = s.nics;
  j["nic_Gbps"] = c.spec().nic.bandwidth.gbps();
  j["scale_up"] = std::string(name(c.spec().scale_up.kind));
  j["scale_up_GBps"] = c.spec().scale_up.bandwidth.gbytes_per_s();
  j["fabric"] = s.fabric;
  j["switches"] = s.switches;
  j["switches_per_tier"] = s.switches_per_tier;
  j["nvswitches"] = s.nvswitches;
  j["pcie_switches"] = s.pcie_switches;
  j["hosts"] = s.hosts;
  j["devices"] = s.devices;
  j["links"] = s.links;
  j["network_links"] = s.network_links;
  j["nvlink_links"] = s.nvlink_links;
  j["pcie_links"] = s.pcie_links;
  j["bisection_bandwidth_GBps"] = s.bisection_bandwidth.gbytes_per_s();
  j["oversubscription"] = s.oversubscription;
  j["path_diversity"] = s.path_diversity;
  j["routing"] = c.spec().adaptive_routing() ? "adaptive" : "ecmp";  // auto resolved
  const PatternRates& r = s.router_rates;
  if (std::isfinite(r.ring) || std::isfinite(r.uniform)) {
    auto rate = [](double gbytes) { return std::isfinite(gbytes) ? nlohmann::ordered_json(gbytes) : nullptr; };
    j["router_link_rates_GBps"] = {{"ring", rate(r.ring)}, {"tree", rate(r.tree)}, {"all_to_all", rate(r.uniform)}};
  } else {
    j["router_link_rates_GBps"] = nullptr;
  }
  out << j.dump(2) << "\n";
}

void write_dot(const Cluster& c, std::ostream& out) {
  const auto devices = c.devices();
  if (devices.size() > static_cast<size_t>(kMaxDotDevices)) {
    throw InputError(SourceLocation{}, "describe",
                     "DOT output is limited to clusters of at most " +
                         std::to_string(kMaxDotDevices) + " devices; this one has " +
                         std::to_string(devices.size()) + ": use the text or json format");
  }
  static const std::map<DeviceKind, const char*> shape = {{DeviceKind::gpu, "box"},
                                                          {DeviceKind::nvswitch, "hexagon"},
                                                          {DeviceKind::pcie_switch, "diamond"},
                                                          {DeviceKind::host, "ellipse"},
                                                          {DeviceKind::nic, "cds"},
                                                          {DeviceKind::network_switch, "octagon"}};
  out << "graph cluster {\n  graph [rankdir=BT];\n";
  std::map<int, std::vector<DeviceId>> by_node;
  for (DeviceId d = 0; d < devices.size(); ++d) by_node[devices[d].node].push_back(d);
  for (const auto& [node, ids] : by_node) {
    if (node >= 0)
      out << "  subgraph cluster_node" << node << " {\n    label=\"node " << node << "\";\n";
    for (DeviceId d : ids) {
      out << (node >= 0 ? "    " : "  ") << "d" << d << " [label=\"" << devices[d].name
          << "\", shape=" << shape.at(devices[d].kind) << ", class=\"" << kind_name(devices[d].kind)
          << "\"];\n";
    }
    if (node >= 0) out << "  }\n";
  }
  const auto links = c.links();
  for (size_t l = 0; l + 1 < links.size(); l += 2) {
    out << "  d" << links[l].from << " -- d" << links[l].to << " [label=\""
        << to_string(links[l].bandwidth) << "\", class=\"" << link_kind_name(links[l].kind)
        << "\"];\n";
  }
  out << "}\n";
}

}  // namespace

ClusterSummary summarize(const Cluster& c) {
  const ClusterSpec& spec = c.spec();
  ClusterSummary s;
  s.node_preset = spec.node_preset;
  s.gpu = spec.gpu.name;
  const bool whole_file = spec.topology_file && !spec.topology_file->ends_with(".xml");
  s.fabric = whole_file ? "file" : (spec.nodes > 1 ? std::string(name(spec.fabric.kind)) : "none");
  s.gpus = c.gpu_count();
  // In the scenario's nodes: the graph builds a domain of several nodes as one (graph_spec).
  s.domain_nodes = spec.nodes_per_graph_node;
  s.nodes = spec.nodes * s.domain_nodes;
  s.gpus_per_node = spec.gpus_per_node / s.domain_nodes;
  const auto devices = c.devices();
  s.devices = static_cast<int>(devices.size());
  for (const Device& d : devices) {
    switch (d.kind) {
      case DeviceKind::nic:
        ++s.nics;
        break;
      case DeviceKind::nvswitch:
        ++s.nvswitches;
        break;
      case DeviceKind::pcie_switch:
        ++s.pcie_switches;
        break;
      case DeviceKind::host:
        ++s.hosts;
        break;
      case DeviceKind::network_switch:
        ++s.switches;
        if (s.switches_per_tier.size() <= static_cast<size_t>(d.tier))
          s.switches_per_tier.resize(static_cast<size_t>(d.tier) + 1);
        ++s.switches_per_tier[static_cast<size_t>(d.tier)];
        break;
      case DeviceKind::gpu:
        break;
    }
  }
  const auto links = c.links();
  s.links = static_cast<int64_t>(links.size() / 2);
  // Edge switches: NIC-facing bandwidth over bandwidth towards other switches.
  std::vector<double> down(devices.size(), 0), up(devices.size(), 0);
  for (size_t l = 0; l < links.size(); l += 2) {
    switch (links[l].kind) {
      case LinkKind::network:
        ++s.network_links;
        break;
      case LinkKind::nvlink:
        ++s.nvlink_links;
        break;
      case LinkKind::pcie:
        ++s.pcie_links;
        break;
    }
    for (const Link& k : {links[l], links[l + 1]}) {
      const Device& from = devices[k.from];
      const Device& to = devices[k.to];
      if (from.kind != DeviceKind::network_switch) continue;
      if (to.node >= 0)
        down[k.from] += k.bandwidth.bytes_per_s();
      else if (to.kind == DeviceKind::network_switch && to.tier >= from.tier)
        up[k.from] += k.bandwidth.bytes_per_s();
    }
  }
  s.oversubscription = 0;
  for (size_t d = 0; d < devices.size(); ++d) {
    if (down[d] > 0 && up[d] > 0)
      s.oversubscription = std::max(s.oversubscription, down[d] / up[d]);
  }
  if (s.oversubscription == 0) s.oversubscription = 1;
  s.bisection_bandwidth = bisection_bandwidth(c);
  constexpr double inf = std::numeric_limits<double>::infinity();
  const bool routers = !spec.uses_topology_file() &&
                       (spec.fabric.kind == FabricKind::torus || spec.fabric.kind == FabricKind::dragonfly);
  s.router_rates = routers ? pattern_rates(c, spec.nodes) : PatternRates{inf, inf, inf};
  s.path_diversity = spec.nodes > 1 ? node_path_diversity(c, 0, spec.nodes - 1)
                                    : c.path_count(0, c.gpu_count() - 1);
  return s;
}

uint64_t node_path_diversity(const Cluster& c, int node_a, int node_b) {
  const int per_node = c.spec().gpus_per_node;
  return c.path_count(node_a * per_node, node_b * per_node);
}

void describe(const Cluster& c, DescribeFormat format, std::ostream& out) {
  if (format == DescribeFormat::dot) return write_dot(c, out);
  ClusterSummary s = summarize(c);
  if (format == DescribeFormat::json) return write_json(c, s, out);
  write_text(c, s, out);
}

}  // namespace dtsim::topology
