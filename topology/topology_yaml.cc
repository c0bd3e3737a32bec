// The whole-graph YAML topology file (see topology_file.h).
#include <yaml-cpp/yaml.h>

#include <boost/pending/disjoint_sets.hpp>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/error.h"
#include "topology/cluster_builder.h"
#include "topology/topology_file.h"
#include "sim/yaml_text.h"

namespace dtsim::topology {
namespace {

struct Reader {
  std::string file;

  SourceLocation at(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    return SourceLocation{file, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& key,
                         const std::string& message) const {
    throw InputError(at(n), key, message);
  }
  std::string scalar(const YAML::Node& entry, const char* field, const std::string& key) const {
    const YAML::Node v = entry[field];
    if (!v) fail(entry, key + "." + field, "missing");
    if (!v.IsScalar()) fail(v, key + "." + field, "expected a scalar");
    return v.Scalar();
  }
  int integer(const YAML::Node& v, const std::string& key) const {
    try {
      return v.as<int>();
    } catch (const YAML::Exception&) {
      fail(v, key,
           "expected an integer, got \"" + (v.IsScalar() ? v.Scalar() : std::string("?")) + "\"");
    }
  }
  void only_keys(const YAML::Node& entry, const std::set<std::string>& allowed,
                 const std::string& key) const {
    for (const auto& kv : entry) {
      if (!kv.first.IsScalar()) fail(kv.first, key, "expected a key name, got a list or a map");
      const std::string k = kv.first.as<std::string>();
      if (!allowed.count(k)) {
        std::string list;
        for (const auto& a : allowed) {
          if (!list.empty()) list += ", ";
          list += a;
        }
        fail(kv.first, key + "." + k, "unknown key; expected one of " + list);
      }
    }
  }
};

bool parse_kind(const std::string& s, DeviceKind& k) {
  static const std::map<std::string, DeviceKind> kinds = {{"gpu", DeviceKind::gpu},
                                                          {"nvswitch", DeviceKind::nvswitch},
                                                          {"pcie-switch", DeviceKind::pcie_switch},
                                                          {"host", DeviceKind::host},
                                                          {"nic", DeviceKind::nic},
                                                          {"switch", DeviceKind::network_switch}};
  auto it = kinds.find(s);
  if (it == kinds.end()) return false;
  k = it->second;
  return true;
}

LinkKind infer_link_kind(DeviceKind a, DeviceKind b) {
  auto is = [&](DeviceKind k) { return a == k || b == k; };
  if (is(DeviceKind::nvswitch) || (a == DeviceKind::gpu && b == DeviceKind::gpu))
    return LinkKind::nvlink;
  if (is(DeviceKind::network_switch) || (a == DeviceKind::nic && b == DeviceKind::nic))
    return LinkKind::network;
  return LinkKind::pcie;
}

}  // namespace

namespace {

// The graph a loaded YAML document describes; parse_topology_yaml turns what yaml-cpp throws on
// a node of an unexpected shape into an InputError at that node.
std::unique_ptr<Cluster> graph_from_yaml(const Reader& r, const YAML::Node& root, const ClusterSpec& base,
                                         const std::string& file_name) {
  if (!root.IsMap())
    throw InputError(SourceLocation{file_name, 1, 1}, "", "expected a map with devices and links");
  r.only_keys(root, {"devices", "links"}, "topology");
  const YAML::Node devs = root["devices"];
  const YAML::Node links = root["links"];
  if (!devs || !devs.IsSequence() || devs.size() == 0)
    r.fail(devs ? devs : root, "devices", "expected a list of devices");
  if (!links || !links.IsSequence())
    r.fail(links ? links : root, "links", "expected a list of links");

  ClusterBuilder b;
  std::map<std::string, DeviceId> by_name;
  std::vector<YAML::Node> where;
  std::map<int, int> gpus_per_node;
  std::map<int, int> nics_per_node;
  for (size_t i = 0; i < devs.size(); ++i) {
    const YAML::Node d = devs[i];
    const std::string key = "devices[" + std::to_string(i) + "]";
    if (!d.IsMap()) r.fail(d, key, "expected a map with name and kind");
    r.only_keys(d, {"name", "kind", "node", "tier"}, key);
    const std::string name = r.scalar(d, "name", key);
    const std::string kind_text = r.scalar(d, "kind", key);
    DeviceKind kind;
    if (!parse_kind(kind_text, kind)) {
      std::string message = "unknown device kind \"" + kind_text;
      message += "\" for \"" + name;
      message += "\"; expected one of gpu, nvswitch, pcie-switch, host, nic, switch";
      r.fail(d["kind"], key + ".kind", message);
    }
    if (auto it = by_name.find(name); it != by_name.end()) {
      r.fail(d["name"], key + ".name",
             "duplicate device name \"" + name + "\" (first at line " +
                 std::to_string(r.at(where[it->second]).line) + ")");
    }
    int node = d["node"] ? r.integer(d["node"], key + ".node") : -1;
    if (d["node"] && node < 0)
      r.fail(d["node"], key + ".node", "expected 0 or more, got " + std::to_string(node));
    if (kind == DeviceKind::gpu && node < 0)
      r.fail(d, key + ".node", "GPU \"" + name + "\" needs the node it sits in");
    int tier = d["tier"] ? r.integer(d["tier"], key + ".tier") : 0;
    int local = 0;
    if (kind == DeviceKind::gpu) local = gpus_per_node[node]++;
    if (kind == DeviceKind::nic) local = nics_per_node[node]++;
    by_name.emplace(name, b.add_device(kind, name, node, tier, local));
    where.push_back(d);
  }
  if (gpus_per_node.empty()) r.fail(devs, "devices", "no device of kind gpu");
  int expect = 0;
  for (const auto& [node, count] : gpus_per_node) {
    if (node != expect)
      r.fail(devs, "devices",
             "nodes must be numbered 0, 1, ... without gaps; node " + std::to_string(expect) +
                 " has no GPU");
    if (count != gpus_per_node.begin()->second) {
      r.fail(devs, "devices",
             "every node needs the same number of GPUs: node 0 has " +
                 std::to_string(gpus_per_node.begin()->second) + ", node " + std::to_string(node) +
                 " has " + std::to_string(count));
    }
    ++expect;
  }
  for (const Device& d : b.devices()) {
    if (d.node >= expect) {
      r.fail(
          where[by_name[d.name]], "devices",
          "device \"" + d.name + "\" is in node " + std::to_string(d.node) + ", which has no GPU");
    }
  }

  for (size_t i = 0; i < links.size(); ++i) {
    const YAML::Node l = links[i];
    const std::string key = "links[" + std::to_string(i) + "]";
    if (!l.IsMap()) r.fail(l, key, "expected a map with from, to, bandwidth and latency");
    r.only_keys(l, {"from", "to", "bandwidth", "latency", "kind"}, key);
    DeviceId end[2];
    const char* fields[2] = {"from", "to"};
    for (int e = 0; e < 2; ++e) {
      const std::string name = r.scalar(l, fields[e], key);
      auto it = by_name.find(name);
      if (it == by_name.end())
        r.fail(l[fields[e]], key + "." + fields[e],
               "dangling link: no device named \"" + name + "\"");
      end[e] = it->second;
    }
    if (end[0] == end[1]) r.fail(l, key, "a link needs two different devices");
    Bandwidth bw;
    Time lat;
    try {
      bw = parse_bandwidth(r.scalar(l, "bandwidth", key));
    } catch (const std::overflow_error&) {
      r.fail(l["bandwidth"], key + ".bandwidth", "expected a bandwidth below 1EB/s, got \"" + l["bandwidth"].Scalar() + "\"");
    } catch (const std::invalid_argument& e) {
      r.fail(l["bandwidth"], key + ".bandwidth", e.what());
    }
    if (bw.is_zero())
      r.fail(l["bandwidth"], key + ".bandwidth",
             "expected a positive bandwidth, got \"" + l["bandwidth"].Scalar() + "\"");
    try {
      lat = parse_time(r.scalar(l, "latency", key));
    } catch (const std::overflow_error&) {
      r.fail(l["latency"], key + ".latency", "expected a latency below 106 days, got \"" + l["latency"].Scalar() + "\"");
    } catch (const std::invalid_argument& e) {
      r.fail(l["latency"], key + ".latency", e.what());
    }
    if (lat < Time::zero())
      r.fail(l["latency"], key + ".latency", "expected a latency of 0 or more");
    // Devices inside different nodes meet only through NICs (a back-to-back cable); anything
    // else would join two nodes' insides, which no route between nodes may cross.
    const Device& da = b.devices()[end[0]];
    const Device& db = b.devices()[end[1]];
    if (da.node >= 0 && db.node >= 0 && da.node != db.node &&
        !(da.kind == DeviceKind::nic && db.kind == DeviceKind::nic)) {
      r.fail(l, key,
             "links \"" + da.name + "\" (node " + std::to_string(da.node) + ") to \"" + db.name + "\" (node " +
                 std::to_string(db.node) + "): devices of two nodes meet only NIC to NIC (or through switches)");
    }
    LinkKind kind = infer_link_kind(da.kind, db.kind);
    if (l["kind"]) {
      const std::string k = r.scalar(l, "kind", key);
      if (k == "nvlink")
        kind = LinkKind::nvlink;
      else if (k == "pcie")
        kind = LinkKind::pcie;
      else if (k == "network")
        kind = LinkKind::network;
      else
        r.fail(l["kind"], key + ".kind",
               "unknown link kind \"" + k + "\"; expected nvlink, pcie or network");
    }
    b.connect(end[0], end[1], kind, bw, lat);
  }

  // Name the first GPU that cannot reach GPU 0, with its line, before the generic check does.
  const auto& dv = b.devices();
  std::vector<size_t> rank(dv.size()), parent(dv.size());
  boost::disjoint_sets<size_t*, size_t*> sets(rank.data(), parent.data());
  for (size_t d = 0; d < dv.size(); ++d) sets.make_set(d);
  for (size_t l = 0; l < b.links().size(); l += 2)
    sets.union_set(b.links()[l].from, b.links()[l].to);
  DeviceId first_gpu = 0;
  bool seen = false;
  for (DeviceId d = 0; d < dv.size(); ++d) {
    if (dv[d].kind != DeviceKind::gpu) continue;
    if (!seen) {
      first_gpu = d;
      seen = true;
    } else if (sets.find_set(d) != sets.find_set(first_gpu)) {
      r.fail(
          where[d], "devices[" + std::to_string(d) + "]",
          "disconnected GPU: \"" + dv[d].name + "\" has no path to \"" + dv[first_gpu].name + "\"");
    }
  }

  ClusterSpec spec = base;
  spec.topology_file = file_name;
  spec.nodes = expect;
  spec.gpus_per_node = gpus_per_node.begin()->second;
  spec.nic.count = nics_per_node.empty() ? 0 : nics_per_node.begin()->second;
  auto cluster = std::move(b).finish(std::move(spec));
  // Every GPU must reach a GPU of the next node the way transfers go (out through a NIC of its
  // node, across the fabric, in through a NIC), and be reached from it: a graph connected only
  // through other paths (a GPU with no path to a NIC) is named here, not when a model first
  // routes over it.
  const int per_node = cluster->spec().gpus_per_node;
  const int gpus = cluster->gpu_count();
  if (cluster->spec().nodes > 1) {
    for (int g = 0; g < gpus; ++g) {
      const int peer = (g + per_node) % gpus;
      try {
        (void)cluster->route(g, peer);
        (void)cluster->route(peer, g);
      } catch (const std::runtime_error& e) {
        r.fail(links, "links", std::string("a GPU cannot reach another node through NICs and switches: ") + e.what());
      }
    }
  }
  return cluster;
}

}  // namespace

std::unique_ptr<Cluster> parse_topology_yaml(const ClusterSpec& base, std::string_view text,
                                             const std::string& file_name) {
  Reader r{file_name};
  check_yaml_text(text, file_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    throw InputError(SourceLocation{file_name, e.mark.line + 1, e.mark.column + 1}, "", e.msg);
  }
  try {
    return graph_from_yaml(r, root, base, file_name);
  } catch (const YAML::Exception& e) {
    throw InputError(SourceLocation{file_name, e.mark.line + 1, e.mark.column + 1}, "", e.msg);
  }
}

std::unique_ptr<Cluster> read_topology_yaml(const ClusterSpec& spec, const std::string& path) {
  // A node's XML or a cluster's graph: megabytes at most; 256 MiB is a wrong file.
  return parse_topology_yaml(spec, read_input_file(path, "cluster.topology_file", std::uintmax_t{256} << 20), path);
}

TopologyFileFacts topology_file_facts(const ClusterSpec& spec) {
  const std::string& path = spec.topology_file.value_or("");
  if (path.ends_with(".xml")) return nccl_topology_facts(read_nccl_topology_xml(spec, path));
  const auto cluster = read_topology_yaml(spec, path);
  TopologyFileFacts f;
  f.whole_graph = true;
  f.nodes = cluster->spec().nodes;
  f.gpus_per_node = cluster->spec().gpus_per_node;
  f.nic_count = cluster->spec().nic.count;
  // A NIC's speed: its slowest link out of the node (to a switch or another node's NIC).
  for (const Link& l : cluster->links()) {
    const Device& from = cluster->device(l.from);
    const Device& to = cluster->device(l.to);
    if (from.kind != DeviceKind::nic || to.node == from.node) continue;
    if (f.nic_bandwidth.is_zero() || l.bandwidth < f.nic_bandwidth) f.nic_bandwidth = l.bandwidth;
  }
  return f;
}

}  // namespace dtsim::topology
