#include "config/loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "config/enum_names.h"
#include "config/map_reader.h"
#include "config/overrides.h"
#include "config/yaml_tree.h"
#include "topology/catalog.h"
#include "topology/cluster.h"
#include "topology/fabric.h"
#include "topology/topology_file.h"
#include "workloads/megatron_generator.h"
#include "workloads/model_catalog.h"
#include "workloads/placement.h"

namespace dtsim::config {
namespace {

using topology::ClusterSpec;
using topology::Dtype;
using topology::GpuSpec;

// Upper bounds that keep every product of counts far inside int range.
constexpr int64_t kMaxGpus = int64_t{1} << 22;
constexpr int64_t kMaxCount = int64_t{1} << 20;
constexpr int64_t kMaxModelDim = int64_t{1} << 24;

// Catalog look-ups for names already checked against the catalog's own list.
template <class T>
const T& checked(const T* found) {
  if (found == nullptr) throw std::logic_error("catalog name vanished between listing and lookup");
  return *found;
}

std::string file_stem(const std::string& source) {
  std::string stem = std::filesystem::path(source).stem().string();
  return stem.empty() ? "scenario" : stem;
}

// A preset name among `names`, with the same wording as any other closed set of choices.
std::string_view to_preset(const YamlNode& node, const std::string& key,
                           const std::vector<std::string_view>& names) {
  return names[to_enum_index(node, key, names)];
}

// "989.4TFLOPS", "2.5PFLOPS" or a plain number of FLOP/s.
double to_flops(const YamlNode& node, const std::string& key) {
  const std::string expected = "FLOP/s as a number or with a unit (GFLOPS, TFLOPS, PFLOPS)";
  if (!node.is_scalar()) fail(node, key, "expected " + expected + ", got " + describe(node));
  std::string text = node.scalar;
  double scale = 1;
  for (auto [suffix, s] : {std::pair{"PFLOPS", 1e15}, {"TFLOPS", 1e12}, {"GFLOPS", 1e9}, {"FLOPS", 1.0}}) {
    std::string_view sv = suffix;
    if (text.size() > sv.size() && text.compare(text.size() - sv.size(), sv.size(), sv) == 0) {
      text.resize(text.size() - sv.size());
      scale = s;
      break;
    }
  }
  YamlNode number = node;
  number.scalar = text;
  double v = 0;
  try {
    v = to_number(number, key, 0, 1e21 / scale);
  } catch (const InputError&) {
    fail(node, key, "expected " + expected + ", got " + describe(node));
  }
  return v * scale;
}

void read_gpu(const YamlNode& node, const std::string& key, GpuSpec& gpu) {
  if (node.is_scalar()) {
    gpu = checked(topology::find_gpu_preset(to_preset(node, key, topology::gpu_preset_names())));
    return;
  }
  MapReader r(node, key);
  if (const YamlNode* p = r.get("preset")) {
    gpu = checked(topology::find_gpu_preset(to_preset(*p, r.key("preset"), topology::gpu_preset_names())));
  }
  r.read("compute_capability", gpu.compute_capability, Range{10, 200});
  {
    MapReader flops = r.map("peak_flops");
    for (const auto& [name, dtype] : precision_names()) {
      if (name.starts_with("float") || name.starts_with("bfloat")) continue;
      if (const YamlNode* n = flops.get(name)) {
        double v = to_flops(*n, flops.key(name));
        if (v > 0) gpu.peak_flops[dtype] = v;
        else gpu.peak_flops.erase(dtype);  // 0: the GPU does not support this dtype
      }
    }
    flops.finish();
  }
  r.read("hbm_capacity", gpu.hbm_capacity, Bytes(1));
  r.read("hbm_bandwidth", gpu.hbm_bandwidth);
  r.read("nvlink_generation", gpu.nvlink_generation, Range{0, 10});
  r.read("nvlink_links", gpu.nvlink_links, Range{0, 64});
  r.read("nvlink_bandwidth", gpu.nvlink_bandwidth, /*allow_zero=*/true);
  r.read("pcie_generation", gpu.pcie_generation, Range{1, 10});
  r.finish();
}

// The node at the dotted path `dotted` below `root` ("fabric.radix"), or the deepest one on the
// way that the file (or a --set) spells; `whole` says whether the path was there to its end. Where
// an error a model raises (naming its key) is put in the file.
struct PathNode {
  const YamlNode* node;
  bool whole;
};
PathNode find_path(const YamlNode& root, std::string_view dotted) {
  const YamlNode* at = &root;
  while (!dotted.empty()) {
    const size_t dot = dotted.find('.');
    const YamlNode* next = at->is_map() ? at->find(dotted.substr(0, dot)) : nullptr;
    if (next == nullptr) return {at, false};
    at = next;
    dotted = dot == std::string_view::npos ? std::string_view() : dotted.substr(dot + 1);
  }
  return {at, true};
}

bool from_override(const SourceLocation& where) { return where.file.starts_with("--set "); }

// `--set cluster.node=P` on a file that spells out the GPU, the NVLink or the NICs keeps the
// file's figures, as keys always win over presets: a user switching presets from the command
// line (or a sweep axis) most likely wants the preset's. Says which of those keys the file sets
// to something other than the preset's, and where.
std::optional<std::string> preset_under_file_keys(const YamlNode& cluster, const YamlNode& node,
                                                  const ClusterSpec& c, const ClusterSpec& preset) {
  if (!from_override(node.where) || !node.is_scalar() || !cluster.is_map()) return std::nullopt;
  const std::pair<const char*, bool> differs[] = {{"gpu", c.gpu != preset.gpu},
                                                  {"gpus_per_node", c.gpus_per_node != preset.gpus_per_node},
                                                  {"scale_up", c.scale_up != preset.scale_up},
                                                  {"nic", c.nic != preset.nic}};
  std::string keys;
  const YamlEntry* first = nullptr;
  for (const auto& [k, different] : differs) {
    const YamlEntry* e = cluster.find_entry(k);
    if (!e || !different || from_override(e->value.where)) continue;
    keys += (keys.empty() ? "cluster." : ", cluster.") + std::string(k);
    if (!first) first = e;
  }
  if (!first) return std::nullopt;
  return node.where.file + ": the file's " + keys + " (" + first->key_where.file + ":" +
         std::to_string(first->key_where.line) + ") still override the " + node.scalar +
         " preset; --set them too, or leave them out of the file";
}

// A topology file's figures become the spec's, so that every network model prices the cluster
// the file describes (the closed form never builds the graph that reads the file). A key the
// scenario writes that the file contradicts is refused at that key; a preset figure the file
// replaces is said in one note. Relative paths resolve beside the scenario file, as
// workload.path does.
void adopt_topology_file(const MapReader& r, ClusterSpec& c, const ClusterSpec& preset, const std::string& source_file,
                         std::vector<std::string>& notes) {
  const YamlNode& at = *r.node().find("topology_file");
  std::filesystem::path path = *c.topology_file;
  if (path.is_relative() && !from_override(at.where)) path = std::filesystem::path(source_file).parent_path() / path;
  c.topology_file = path.lexically_normal().string();
  topology::TopologyFileFacts facts;
  try {
    facts = topology::topology_file_facts(c);
  } catch (const InputError& e) {
    if (e.where().line > 0) throw;  // a mistake inside the file names its own line
    fail(at, r.key("topology_file"), *c.topology_file + ": " + e.message());
  }
  std::vector<std::string> took, instead;
  // Takes the file's value of `key` unless the scenario writes another.
  auto adopt = [&](const char* key, auto& value, auto file_value, auto preset_value, const auto& show) {
    if (value == file_value) return;
    const PathNode written = find_path(r.node(), key);
    if (written.whole) {
      fail(*written.node, r.key(key),
           "the scenario says " + show(value) + " but the topology file " + *c.topology_file + " says " +
               show(file_value) + ": leave the key out or make them agree");
    }
    value = file_value;
    took.push_back(std::string(key) + " " + show(file_value));
    instead.push_back(show(preset_value));
  };
  auto count = [](int n) { return std::to_string(n); };
  auto bits = [](Bandwidth b) { return dtsim::to_string_bits(b); };
  auto bytes = [](Bandwidth b) { return dtsim::to_string(b); };
  auto kind = [](topology::ScaleUpKind k) { return std::string(topology::name(k)); };
  if (facts.whole_graph) adopt("nodes", c.nodes, facts.nodes, preset.nodes, count);
  const bool domain_is_node = c.scale_up.domain_gpus == c.gpus_per_node;
  adopt("gpus_per_node", c.gpus_per_node, facts.gpus_per_node, preset.gpus_per_node, count);
  if (domain_is_node && !find_path(r.node(), "scale_up.domain_gpus").whole) c.scale_up.domain_gpus = c.gpus_per_node;
  adopt("nic.count", c.nic.count, facts.nic_count, preset.nic.count, count);
  if (!facts.nic_bandwidth.is_zero()) {
    const bool link_follows = c.fabric.link.bandwidth == c.nic.bandwidth && !find_path(r.node(), "fabric.link.bandwidth").whole;
    // A NIC whose PCIe path is slower than its port runs at its share of the path.
    const Bandwidth usable = facts.nic_pcie_bound.is_zero() ? facts.nic_bandwidth : facts.nic_pcie_bound;
    adopt("nic.bandwidth", c.nic.bandwidth, usable, preset.nic.bandwidth, bits);
    if (!facts.nic_pcie_bound.is_zero()) {
      notes.push_back(*c.topology_file + ": its NICs' PCIe path gives each " + bits(facts.nic_pcie_bound) + " of its " +
                      bits(facts.nic_bandwidth) + " port (cluster.nic.bandwidth)");
    }
    if (link_follows) c.fabric.link.bandwidth = c.nic.bandwidth;
  } else if (c.nic.count > 0) {
    notes.push_back(*c.topology_file + ": the file gives no NIC speed; its NICs run at cluster.nic.bandwidth, " +
                    bits(c.nic.bandwidth));
  }
  if (facts.scale_up_kind) adopt("scale_up.kind", c.scale_up.kind, *facts.scale_up_kind, preset.scale_up.kind, kind);
  if (!facts.scale_up_bandwidth.is_zero()) {
    adopt("scale_up.bandwidth", c.scale_up.bandwidth, facts.scale_up_bandwidth, preset.scale_up.bandwidth, bytes);
  }
  if (facts.slower_nics_left_out > 0) {
    notes.push_back(fmt::format("{}: {} NIC port{} slower than its {} x {} left out (front-end or management ports: "
                                "NCCL's rings run over the fastest)",
                                *c.topology_file, facts.slower_nics_left_out, facts.slower_nics_left_out == 1 ? "" : "s",
                                facts.nic_count, bits(facts.nic_bandwidth)));
  }
  if (facts.gpu_sm > 0 && facts.gpu_sm != c.gpu.compute_capability) {
    notes.push_back(fmt::format("{}: its GPUs are sm {}, the scenario's {} is sm {}; the file does not name the GPU "
                                "model (cluster.gpu or cluster.node does)",
                                *c.topology_file, facts.gpu_sm, c.gpu.name, c.gpu.compute_capability));
  }
  if (!took.empty()) {
    std::string line = *c.topology_file + ": took from the file";
    for (size_t i = 0; i < took.size(); ++i) {
      line += (i ? ", " : " ") + ("cluster." + took[i]) + " (" + (preset.node_preset.empty() ? "default" : preset.node_preset) +
              ": " + instead[i] + ")";
    }
    notes.push_back(line);
  }
}

ClusterSpec read_cluster(MapReader r, const std::string& source_file, std::vector<std::string>& notes) {
  ClusterSpec c = checked(topology::find_node_preset("hgx-h100"));
  if (const YamlNode* n = r.get("node")) {
    c = checked(topology::find_node_preset(to_preset(*n, r.key("node"), topology::node_preset_names())));
  }
  const ClusterSpec preset = c;
  r.read("nodes", c.nodes, Range{1, kMaxGpus});
  if (const YamlNode* n = r.get("gpu")) read_gpu(*n, r.key("gpu"), c.gpu);
  r.read("gpus_per_node", c.gpus_per_node, Range{1, 4096});

  MapReader up = r.map("scale_up");
  up.read("kind", c.scale_up.kind, scale_up_kind_names());
  up.read("bandwidth", c.scale_up.bandwidth);
  up.read("latency", c.scale_up.latency);
  // A whole-node NVLink domain follows the node's size unless the file says otherwise.
  if (preset.scale_up.domain_gpus == preset.gpus_per_node) c.scale_up.domain_gpus = c.gpus_per_node;
  up.read("domain_gpus", c.scale_up.domain_gpus, Range{1, kMaxGpus});
  up.finish();
  // Bridges join two GPUs directly, so a pair runs at the GPU's own bridged NVLink figure, not
  // at the figure of the preset's switch (or of the preset's GPU) it replaced.
  const bool bridge_changed = c.scale_up.kind != preset.scale_up.kind || c.gpu != preset.gpu;
  if (c.scale_up.kind == topology::ScaleUpKind::nvlink_bridge && bridge_changed &&
      !c.gpu.nvlink_bandwidth.is_zero() && !find_path(r.node(), "scale_up.bandwidth").whole) {
    c.scale_up.bandwidth = c.gpu.nvlink_bandwidth;
  }

  MapReader nic = r.map("nic");
  nic.read("kind", c.nic.kind, nic_kind_names());
  nic.read("count", c.nic.count, Range{0, 4096});
  nic.read("bandwidth", c.nic.bandwidth);
  nic.read("latency", c.nic.latency);
  nic.read("message_overhead", c.nic.message_overhead);
  nic.finish();

  MapReader fabric = r.map("fabric");
  fabric.read("kind", c.fabric.kind, fabric_kind_names());
  fabric.read("tiers", c.fabric.tiers, Range{1, 3});
  fabric.read("radix", c.fabric.radix, Range{2, 65536});
  fabric.read("oversubscription", c.fabric.oversubscription, 1, 1024);
  {
    MapReader link = fabric.map("link");
    // The fabric's links run at the NICs' speed unless the file says otherwise.
    c.fabric.link.bandwidth = c.nic.bandwidth;
    link.read("bandwidth", c.fabric.link.bandwidth);
    link.read("latency", c.fabric.link.latency);
    link.finish();
  }
  fabric.read("sharp", c.fabric.sharp);
  fabric.read("dragonfly_groups", c.fabric.dragonfly_groups, Range{0, kMaxCount});
  fabric.read("torus_dims", c.fabric.torus_dims, Range{2, 3});
  fabric.read("routing", c.fabric.routing, routing_names());
  fabric.finish();

  if (r.has("topology_file")) {
    if (const YamlNode* n = r.get_or_null("topology_file")) c.topology_file = to_string(*n, r.key("topology_file"));
    else c.topology_file.reset();
  }
  if (c.uses_topology_file()) adopt_topology_file(r, c, preset, source_file, notes);
  if (const YamlNode* n = r.get("node")) {
    if (auto note = preset_under_file_keys(r.node(), *n, c, preset)) notes.push_back(*note);
  }

  // A fat-tree whose tiers the scenario leaves to the default grows a tier when the cluster's
  // NIC ports outnumber what the default holds (2 tiers of radix 64: 2,048 ports).
  if (c.fabric.kind == topology::FabricKind::fat_tree && c.nodes > 1 && !find_path(r.node(), "fabric.tiers").whole) {
    const int64_t ports = topology::fabric_ports(topology::graph_spec(c));
    topology::FabricSpec grown = c.fabric;
    while (grown.tiers < 3 && topology::clos_shape(grown).max_ports() < ports) ++grown.tiers;
    if (grown.tiers != c.fabric.tiers && topology::clos_shape(grown).max_ports() >= ports) {
      notes.push_back(fmt::format("cluster.fabric: {} NIC ports outgrow a {}-tier fat-tree of radix {} ({} ports): built "
                                  "with {} tiers (cluster.fabric.tiers chooses)",
                                  ports, c.fabric.tiers, c.fabric.radix, topology::clos_shape(c.fabric).max_ports(),
                                  grown.tiers));
      c.fabric.tiers = grown.tiers;
    }
  }
  const YamlNode* nodes_node = r.node().find("nodes");
  const YamlNode& count_at = nodes_node ? *nodes_node : r.node();
  if (int64_t{c.nodes} * c.gpus_per_node > kMaxGpus) {
    fail(count_at, r.key("nodes"), fmt::format("{} nodes of {} GPUs is more than the {} GPUs dtsim can simulate",
                                               c.nodes, c.gpus_per_node, kMaxGpus));
  }
  if (const std::string why = topology::domain_misfit(c); !why.empty()) {
    const PathNode at = find_path(r.node(), "scale_up.domain_gpus");
    fail(at.whole ? *at.node : count_at, r.key("scale_up.domain_gpus"), why);
  }
  if (c.nodes > 1 && c.nic.count == 0) {
    const YamlNode* n = r.node().find("nic");
    fail(n && n->find("count") ? *n->find("count") : count_at, r.key("nic.count"),
         fmt::format("a cluster of {} nodes needs at least one NIC per node", c.nodes));
  }
  // A fabric too small for the NICs is refused whichever network model runs: the analytical
  // model never builds the graph whose builders would say so. The line names the fabric key it
  // blames, at that key in the file when the file spells it, else at cluster.nodes.
  try {
    topology::check_fabric(c);
  } catch (const InputError& e) {
    std::string_view sub = e.key();
    if (sub.starts_with("cluster.")) sub.remove_prefix(std::string_view("cluster.").size());
    const PathNode at = find_path(r.node(), sub);
    fail(at.whole ? *at.node : count_at, r.key(std::string(sub)), e.message());
  }
  r.finish();
  return c;
}

// network.packet.dcqcn: DCQCN's settings for cluster engineers who tune their NICs and switches.
void read_dcqcn(MapReader d, network::DcqcnOptions& o) {
  d.read("kmin", o.kmin, Bytes(0));
  d.read("kmax", o.kmax, Bytes(1));
  if (o.kmax <= o.kmin) {
    const YamlNode* k = d.node().find("kmax");
    fail(k ? *k : d.node(), d.key("kmax"),
         "expected kmax above kmin (" + dtsim::to_string(o.kmin) + "), got " + dtsim::to_string(o.kmax));
  }
  d.read("pmax", o.pmax, 1e-9, 1.0);
  d.read("g", o.g, 1e-9, 0.999999);
  for (auto [name, period] : {std::pair{"cnp_interval", &o.cnp_interval}, {"alpha_period", &o.alpha_period},
                              {"increase_period", &o.increase_period}}) {
    d.read(name, *period);
    if (*period <= Time::zero() && std::string_view(name) != "cnp_interval") {
      fail(*d.node().find(name), d.key(name), "expected a positive period");
    }
  }
  d.read("byte_counter", o.byte_counter, Bytes(1));
  d.read("fast_recovery", o.fast_recovery, Range{0, 1000});
  d.read("additive_increase", o.additive_increase);
  d.read("hyper_increase", o.hyper_increase);
  d.read("min_rate", o.min_rate);
  d.finish();
}

// network.packet.dctcp: DCTCP's marking threshold and window settings.
void read_dctcp(MapReader d, network::DctcpOptions& o) {
  d.read("k", o.k, Bytes(0));
  d.read("g", o.g, 1e-9, 1.0);
  d.read("initial_window", o.initial_window, Bytes(1));
  d.read("slow_start", o.slow_start);
  d.finish();
}

NetworkSpec read_network(MapReader r) {
  NetworkSpec n;
  r.read("model", n.model, network_model_names());
  r.read("background", n.background, background_names());
  r.read("execution", n.execution, execution_names());
  MapReader f = r.map("flow");
  f.read("completion_window", n.flow.completion_window);
  if (n.flow.completion_window > Time::us(1)) {
    fail(*f.node().find("completion_window"), f.key("completion_window"),
         "expected at most 1us (a window near a transfer's own time changes the result), got " +
             describe(*f.node().find("completion_window")));
  }
  f.read("completion_precision", n.flow.completion_precision, 0.0, 1e-2);
  f.finish();
  MapReader p = r.map("packet");
  p.read("mtu", n.packet.mtu, Bytes(64));
  if (n.packet.mtu > Bytes::mib(1)) fail(*p.node().find("mtu"), p.key("mtu"), "expected an MTU of at most 1MiB, got " + describe(*p.node().find("mtu")));
  p.read("buffer_per_port", n.packet.buffer_per_port, Bytes(1));
  if (n.packet.buffer_per_port < n.packet.mtu) {
    const YamlNode* b = p.node().find("buffer_per_port");
    fail(b ? *b : p.node(), p.key("buffer_per_port"),
         "expected at least one MTU (" + dtsim::to_string(n.packet.mtu) + ") of buffer per port");
  }
  p.read("pfc", n.packet.pfc);
  p.read("flow_control", n.packet.flow_control, flow_control_names());
  p.read("switch_buffer", n.packet.switch_buffer, switch_buffer_names());
  p.read("shared_buffer", n.packet.shared_buffer, Bytes(1));
  if (n.packet.shared_buffer < n.packet.mtu || n.packet.shared_buffer > Bytes::gib(2)) {
    const YamlNode* b = p.node().find("shared_buffer");
    fail(b ? *b : p.node(), p.key("shared_buffer"),
         "expected between one MTU (" + dtsim::to_string(n.packet.mtu) + ") and 2GiB of buffer per switch, got " +
             dtsim::to_string(n.packet.shared_buffer));
  }
  p.read("dt_alpha", n.packet.dt_alpha, 1e-6, 1e6);
  p.read("retransmit_timeout", n.packet.retransmit_timeout);
  if (n.packet.retransmit_timeout <= Time::zero()) {
    fail(*p.node().find("retransmit_timeout"), p.key("retransmit_timeout"),
         "expected a positive time, got " + describe(*p.node().find("retransmit_timeout")));
  }
  p.read("sample_interval", n.packet.sample_interval);
  if (n.packet.sample_interval < Time::zero()) {
    fail(*p.node().find("sample_interval"), p.key("sample_interval"),
         "expected a time of at least 0s (0s: no sampling), got " + describe(*p.node().find("sample_interval")));
  }
  n.packet.cc_stated = p.node().find("ecn") != nullptr || p.node().find("cc") != nullptr;
  p.read("ecn", n.packet.ecn);
  if (const YamlNode* cc = p.get("cc")) {
    n.packet.cc = std::string(to_preset(*cc, p.key("cc"), {"dcqcn", "dctcp", "none"}));
  }
  read_dcqcn(p.map("dcqcn"), n.packet.dcqcn);
  read_dctcp(p.map("dctcp"), n.packet.dctcp);
  if (n.packet.dctcp.initial_window < n.packet.mtu) {
    const YamlNode* w = p.node().find("dctcp");
    fail(w ? *w : p.node(), p.key("dctcp"),
         "expected an initial_window of at least one MTU (" + dtsim::to_string(n.packet.mtu) + "), got " +
             dtsim::to_string(n.packet.dctcp.initial_window));
  }
  p.finish();
  r.finish();
  return n;
}

bool is_auto(const YamlNode& n) { return n.is_scalar() && n.scalar == "auto"; }

// `key` as `auto` (0) or an integer in `range` (`expected` says which in words); unchanged when
// absent.
void read_auto_count(MapReader& r, std::string_view key, Range range, std::string_view expected, int& out) {
  const YamlNode* n = r.get(key);
  if (n == nullptr) return;
  if (is_auto(*n)) {
    out = 0;
    return;
  }
  try {
    out = static_cast<int>(to_integer(*n, r.key(key), range));
  } catch (const InputError&) {
    fail(*n, r.key(key), "expected auto or " + std::string(expected) + ", got " + describe(*n));
  }
}

// collectives.algorithm / protocol: auto, one name (forced), or what auto may choose from as NCCL
// reads NCCL_ALGO / NCCL_PROTO: a list ([ring, tree] or "Ring,Tree") or everything but a list
// ("^nvls,nvls_tree"). One name in a list forces it, as NCCL_ALGO=Ring does.
template <class E>
void read_choice(MapReader& r, std::string_view key, const EnumNames<E>& names,
                 std::optional<E>& forced, std::vector<E>& allowed) {
  const YamlNode* n = r.get(key);
  if (n == nullptr || is_auto(*n)) return;
  std::vector<YamlNode> parts;
  bool exclude = false;
  if (n->is_sequence()) {
    parts = n->items;
  } else {
    std::string text = to_string(*n, r.key(key));
    exclude = !text.empty() && text.front() == '^';
    if (exclude) text.erase(0, 1);
    for (size_t at = 0; at <= text.size();) {
      const size_t comma = std::min(text.find(',', at), text.size());
      YamlNode part = *n;
      part.scalar = text.substr(at, comma - at);
      part.scalar.erase(0, part.scalar.find_first_not_of(' '));
      part.scalar.erase(part.scalar.find_last_not_of(' ') + 1);
      parts.push_back(std::move(part));
      at = comma + 1;
    }
  }
  std::vector<E> listed;
  for (const YamlNode& part : parts) {
    const E e = to_enum(part, r.key(key), names);
    if (std::find(listed.begin(), listed.end(), e) == listed.end()) listed.push_back(e);
  }
  if (listed.empty())
    fail(*n, r.key(key), "expected auto, a name or a list of names, got an empty list");
  if (exclude) {
    for (const auto& [spelling, e] : names) {
      if (std::find(listed.begin(), listed.end(), e) == listed.end() &&
          std::find(allowed.begin(), allowed.end(), e) == allowed.end())
        allowed.push_back(e);
    }
    if (allowed.empty()) fail(*n, r.key(key), "excludes every choice; expected at least one left");
  } else if (listed.size() == 1) {
    forced = listed.front();
  } else {
    allowed = listed;
  }
}

collectives::CollectiveOptions read_collectives(MapReader r) {
  collectives::CollectiveOptions o;
  read_choice(r, "algorithm", algorithm_names(), o.algorithm, o.algorithms);
  read_choice(r, "protocol", protocol_names(), o.protocol, o.protocols);
  read_auto_count(r, "channels", Range{1, 64}, "an integer from 1 to 64", o.channels);
  r.read("collnet", o.collnet);
  r.finish();
  return o;
}

void read_model(const YamlNode& node, const std::string& key, workloads::ModelSpec& m) {
  if (node.is_scalar()) {
    m = checked(workloads::find_model_preset(to_preset(node, key, workloads::model_preset_names())));
    return;
  }
  MapReader r(node, key);
  if (const YamlNode* p = r.get("preset")) {
    m = checked(workloads::find_model_preset(to_preset(*p, r.key("preset"), workloads::model_preset_names())));
  }
  r.read("layers", m.layers, Range{1, kMaxModelDim});
  r.read("hidden", m.hidden, Range{1, kMaxModelDim});
  r.read("heads", m.heads, Range{1, kMaxModelDim});
  r.read("kv_heads", m.kv_heads, Range{0, kMaxModelDim});
  r.read("ffn_hidden", m.ffn_hidden, Range{0, kMaxModelDim});
  r.read("seq_len", m.seq_len, Range{1, kMaxModelDim});
  r.read("vocab", m.vocab, Range{1, kMaxModelDim});
  r.read("experts", m.experts, Range{1, kMaxCount});
  r.read("top_k", m.top_k, Range{1, kMaxCount});
  r.read("moe_ffn_hidden", m.moe_ffn_hidden, Range{0, kMaxModelDim});
  r.read("shared_experts", m.shared_experts, Range{0, kMaxCount});
  r.read("first_dense_layers", m.first_dense_layers, Range{0, kMaxModelDim});
  r.read("gated_ffn", m.gated_ffn);
  r.read("head_dim", m.head_dim, Range{0, kMaxModelDim});
  r.read("v_head_dim", m.v_head_dim, Range{0, kMaxModelDim});
  r.read("kv_lora_rank", m.kv_lora_rank, Range{0, kMaxModelDim});
  r.read("q_lora_rank", m.q_lora_rank, Range{0, kMaxModelDim});
  r.read("qk_rope_head_dim", m.qk_rope_head_dim, Range{0, kMaxModelDim});
  r.read("mtp_layers", m.mtp_layers, Range{0, kMaxCount});
  r.finish();
}

// Facts about a training job that no valid scenario breaks; the workload layer checks the rest.
void check_training(MapReader& w, const ClusterSpec& cluster, workloads::TrainingSpec& t,
                    bool dp_given) {
  const YamlNode* model_node = w.node().find("model");
  const YamlNode& model_at = model_node ? *model_node : w.node();
  const auto& m = t.model;
  if (m.layers <= 0 || m.hidden <= 0 || m.heads <= 0) {
    fail(model_at, w.key("model"),
         "expected a model preset (" + join_names(workloads::model_preset_names()) +
             ") or layers, hidden and heads");
  }
  if (m.top_k > m.experts) {
    fail(model_at, w.key("model.top_k"), fmt::format("top_k ({}) exceeds experts ({})", m.top_k, m.experts));
  }
  if (!m.mla() && (m.q_lora_rank > 0 || m.qk_rope_head_dim > 0)) {
    fail(model_at, w.key(m.q_lora_rank > 0 ? "model.q_lora_rank" : "model.qk_rope_head_dim"),
         "applies only to multi-head latent attention: set kv_lora_rank as well");
  }
  if (m.mla() && m.kv_heads != 0 && m.kv_heads != m.heads) {
    fail(model_at, w.key("model.kv_heads"),
         fmt::format("multi-head latent attention (kv_lora_rank > 0) has a key and value per head: kv_heads "
                     "({}) must equal heads ({}) or be left out",
                     m.kv_heads, m.heads));
  }
  // BF16 needs tensor cores that do it (Ampere and later): a V100 would emulate it far below its
  // FP16 rate, which is not what a user who asks for it can want priced.
  if (t.precision == topology::Dtype::bf16) {
    const auto bf16 = cluster.gpu.peak_flops.find(topology::Dtype::bf16);
    if (bf16 == cluster.gpu.peak_flops.end() || bf16->second <= 0) {
      const YamlNode* at = w.node().find("precision");
      fail(at ? *at : w.node(), w.key("precision"),
           fmt::format("the GPU ({}) has no BF16 tensor cores (compute capability {}); use fp16",
                       cluster.gpu.name, cluster.gpu.compute_capability));
    }
  }
  const YamlNode* par_node = w.node().find("parallel");
  const YamlNode& par_at = par_node ? *par_node : w.node();
  auto& p = t.parallel;
  const int64_t gpus = cluster.total_gpus();
  const int64_t model_parallel = int64_t{p.tp} * p.pp * p.cp;
  if (!dp_given) {
    if (model_parallel > gpus || gpus % model_parallel != 0) {
      fail(par_at, w.key("parallel"),
           fmt::format("tp*pp*cp = {} does not divide the cluster's {} GPUs, so dp cannot be derived",
                       model_parallel, gpus));
    }
    p.dp = static_cast<int>(gpus / model_parallel);
  } else if (model_parallel * p.dp > gpus) {
    fail(par_at, w.key("parallel"),
         fmt::format("tp*pp*cp*dp = {} needs more GPUs than the cluster's {}", model_parallel * p.dp, gpus));
  }
  if (t.moe_imbalance > p.ep) {
    const YamlNode* at = w.node().find("moe_imbalance");
    fail(at ? *at : w.node(), w.key("moe_imbalance"),
         fmt::format("{} exceeds ep = {}: the busiest of {} expert-parallel ranks gets at most all "
                     "the tokens, "
                     "{} times the balanced share",
                     t.moe_imbalance, p.ep, p.ep, p.ep));
  }
  // The generator's own rules (heads divide by tp, enough layers for pp x vp chunks, the global
  // batch divides into micro-batches, ...), checked here so that they name the scenario.
  // The line goes at the key it blames where the file (or a --set) spells it, else at its
  // nearest parent there (a preset's model, the parallel map).
  try {
    workloads::resolve_training(t, cluster);
  } catch (const workloads::TrainingSpecError& e) {
    const YamlNode* at = find_path(w.node(), e.key()).node;
    if (at == &w.node() && e.key().starts_with("parallel")) at = &par_at;
    fail(*at, w.key(e.key()), e.message());
  }
}

// An MLP's layer widths: a non-empty list of positive integers, e.g. [512, 256, 128].
void read_layer_widths(MapReader& r, std::string_view key, std::vector<int>& out) {
  const YamlNode* n = r.get(key);
  if (n == nullptr) return;
  if (!n->is_sequence() || n->items.empty()) {
    fail(*n, r.key(key), "expected a list of layer widths like [512, 256, 128], got " + describe(*n));
  }
  out.clear();
  for (const YamlNode& item : n->items) out.push_back(static_cast<int>(to_integer(item, r.key(key), Range{1, kMaxModelDim})));
}

workloads::WorkloadSpec read_workload(MapReader r, const ClusterSpec& cluster) {
  workloads::WorkloadSpec w;
  r.read("kind", w.kind, workload_kind_names());

  auto& s = w.sweep;
  r.read("collective", s.collective, collective_kind_names());
  r.read("min_bytes", s.min_bytes, Bytes(1));
  r.read("max_bytes", s.max_bytes, Bytes(1));
  r.read("step_factor", s.step_factor, Range{2, 1 << 20});
  r.read("dtype", s.dtype, sweep_dtype_names());
  r.read("ranks", s.ranks, Range{0, kMaxGpus});
  r.read("gpus_per_thread", s.gpus_per_thread, Range{1, kMaxGpus});

  auto& t = w.training;
  if (const YamlNode* n = r.get("model")) read_model(*n, r.key("model"), t.model);
  MapReader par = r.map("parallel");
  par.read("tp", t.parallel.tp, Range{1, kMaxCount});
  par.read("pp", t.parallel.pp, Range{1, kMaxCount});
  par.read("dp", t.parallel.dp, Range{1, kMaxGpus});
  const bool dp_given = par.has("dp");
  par.read("ep", t.parallel.ep, Range{1, kMaxCount});
  par.read("cp", t.parallel.cp, Range{1, kMaxCount});
  par.read("vp", t.parallel.vp, Range{1, kMaxCount});
  par.read("sequence_parallel", t.parallel.sequence_parallel);
  par.read("zero", t.parallel.zero, Range{0, 3});
  par.read("shard_group", t.parallel.shard_group, Range{0, kMaxGpus});
  par.read("placement", t.parallel.placement);
  if (const YamlNode* n = par.get("placement")) {
    try {
      workloads::Placement check(t.parallel, t.parallel.placement);
    } catch (const std::invalid_argument&) {
      fail(*n, par.key("placement"),
           "expected the four dimensions tp, cp, dp, pp once each, innermost first (like tp-cp-dp-pp), got \"" +
               t.parallel.placement + "\"");
    }
  }
  par.finish();
  MapReader batch = r.map("batch");
  batch.read("global", t.batch.global, Range{1, kMaxModelDim});
  batch.read("micro", t.batch.micro, Range{1, kMaxModelDim});
  batch.finish();
  r.read("precision", t.precision, precision_names());
  r.read("iterations", t.iterations, Range{1, 1'000'000});
  r.read("activation_recompute", t.activation_recompute, recompute_names());
  r.read("attention", t.attention, attention_names());
  r.read("overlap_ep_comm", t.overlap_ep_comm);
  r.read("moe_dispatch", t.moe_dispatch, moe_dispatch_names());
  r.read("moe_imbalance", t.moe_imbalance, 1.0, 1024.0);
  r.read("fp8_fused_casts", t.fp8_fused_casts);
  r.read("fused_cross_entropy", t.fused_cross_entropy);
  r.read("fused_elementwise", t.fused_elementwise);
  r.read("fp8_tp_all_gather", t.fp8_tp_all_gather);
  r.read("cp_torch_ring", t.cp_torch_ring);
  r.read("bf16_layers_at_start", t.bf16_layers_at_start, Range{0, kMaxCount});
  r.read("bf16_layers_at_end", t.bf16_layers_at_end, Range{0, kMaxCount});
  r.read("cpu_offload_layers", t.cpu_offload_layers, Range{0, kMaxCount});
  r.read("overlap_grad_reduce", t.overlap_grad_reduce);
  r.read("overlap_param_gather", t.overlap_param_gather);
  r.read("overlap_tp_comm", t.overlap_tp_comm);
  r.read("fsdp_reshard_after_forward", t.fsdp_reshard_after_forward);
  int bucket_millions = static_cast<int>(t.dp_bucket_params / 1'000'000);
  r.read("dp_bucket_mparams", bucket_millions, Range{1, 1'000'000});
  t.dp_bucket_params = int64_t{bucket_millions} * 1'000'000;

  MapReader dlrm = r.map("dlrm");
  dlrm.read("tables", w.dlrm.tables, Range{1, kMaxModelDim});
  dlrm.read("embedding_dim", w.dlrm.embedding_dim, Range{1, kMaxModelDim});
  dlrm.read("pooling", w.dlrm.pooling, Range{1, kMaxModelDim});
  dlrm.read("batch_per_gpu", w.dlrm.batch_per_gpu, Range{1, kMaxModelDim});
  dlrm.read("dense_features", w.dlrm.dense_features, Range{1, kMaxModelDim});
  read_layer_widths(dlrm, "bottom_mlp", w.dlrm.bottom_mlp);
  read_layer_widths(dlrm, "top_mlp", w.dlrm.top_mlp);
  dlrm.read("precision", w.dlrm.precision, precision_names());
  dlrm.finish();

  read_auto_count(r, "layers_per_block", Range{1, kMaxCount}, "an integer >= 1", w.layers_per_block);
  if (const YamlNode* f = r.get("format")) w.trace.format = std::string(to_preset(*f, r.key("format"), {"chakra"}));
  r.read("path", w.trace.path);
  r.finish();

  if (s.min_bytes > s.max_bytes) {
    const YamlNode* n = r.node().find("min_bytes");
    fail(n ? *n : r.node(), r.key("min_bytes"),
         "min_bytes (" + dtsim::to_string(s.min_bytes) + ") is larger than max_bytes (" +
             dtsim::to_string(s.max_bytes) + ")");
  }
  if (s.ranks > cluster.total_gpus()) {
    fail(*r.node().find("ranks"), r.key("ranks"),
         fmt::format("expected at most the cluster's {} GPUs, got {}", cluster.total_gpus(), s.ranks));
  }
  if (s.gpus_per_thread > cluster.gpus_per_node) {
    fail(*r.node().find("gpus_per_thread"), r.key("gpus_per_thread"),
         fmt::format("a host thread launches on its own node's GPUs only: expected at most "
                     "cluster.gpus_per_node ({}), got {}",
                     cluster.gpus_per_node, s.gpus_per_thread));
  }
  if (w.kind == workloads::WorkloadKind::training) check_training(r, cluster, t, dp_given);
  if (w.kind == workloads::WorkloadKind::dlrm && w.dlrm.tables < cluster.total_gpus()) {
    const YamlNode* n = r.node().find("dlrm");
    fail(n ? *n : r.node(), r.key("dlrm.tables"),
         fmt::format("a DLRM spreads its tables over the GPUs: expected at least the cluster's {} GPUs' worth, got {}",
                     cluster.total_gpus(), w.dlrm.tables));
  }
  if (w.kind == workloads::WorkloadKind::trace && w.trace.path.empty()) {
    const YamlNode* k = r.node().find("kind");
    fail(k ? *k : r.node(), r.key("path"), "a trace workload needs path: the trace files' prefix");
  }
  return w;
}

OutputSpec read_output(MapReader r, const std::string& name) {
  OutputSpec o;
  o.dir = "out/" + name;
  r.read("dir", o.dir);
  if (const YamlNode* f = r.get("formats")) {
    const std::vector<std::string_view> names = {"table", "csv", "json", "trace", "html"};
    o.formats.clear();
    if (f->is_scalar()) {
      o.formats.emplace_back(names[to_enum_index(*f, r.key("formats"), names)]);
    } else if (f->is_sequence()) {
      for (size_t i = 0; i < f->items.size(); ++i) {
        o.formats.emplace_back(names[to_enum_index(f->items[i], r.key("formats") + "[" + std::to_string(i) + "]", names)]);
      }
      if (o.formats.empty()) fail(*f, r.key("formats"), "expected at least one of table, csv, json, trace or html");
    } else {
      fail(*f, r.key("formats"), "expected a list of table, csv, json, trace or html, got " + describe(*f));
    }
  }
  r.finish();
  return o;
}

// Where jobs[i] asks to run: `nodes` as a count (placed by `placement`, packed by default, or from
// `first_node`) or as [first, last].
workloads::NodeRequest read_node_request(MapReader& r, const YamlNode& job) {
  workloads::NodeRequest q;
  const YamlNode* n = r.get("nodes");
  if (n == nullptr) {
    fail(job, r.key("nodes"), "expected the job's node count (nodes: 4) or its first and last node (nodes: [0, 3])");
  }
  if (n->is_sequence()) {
    if (n->items.size() != 2) {
      fail(*n, r.key("nodes"), fmt::format("expected [first, last] node, got a list of {}", n->items.size()));
    }
    const auto first = static_cast<int>(to_integer(n->items[0], r.key("nodes"), Range{0, kMaxGpus}));
    const auto last = static_cast<int>(to_integer(n->items[1], r.key("nodes"), Range{0, kMaxGpus}));
    if (last < first) {
      fail(*n, r.key("nodes"), fmt::format("expected the last node at or after the first, got [{}, {}]", first, last));
    }
    q = {.policy = workloads::PlacementPolicy::range, .first = first, .count = last - first + 1};
  } else {
    q.count = static_cast<int>(to_integer(*n, r.key("nodes"), Range{1, kMaxGpus}));
  }
  if (const YamlNode* f = r.get("first_node")) {
    if (q.policy == workloads::PlacementPolicy::range) {
      fail(*f, r.key("first_node"), "goes with a node count (nodes: 4); nodes: [first, last] already says where");
    }
    q.policy = workloads::PlacementPolicy::range;
    q.first = static_cast<int>(to_integer(*f, r.key("first_node"), Range{0, kMaxGpus}));
  }
  if (const YamlNode* p = r.get("placement")) {
    if (q.policy == workloads::PlacementPolicy::range) {
      fail(*p, r.key("placement"), "packed and spread choose the nodes; an explicit range (first_node, or nodes: "
                                   "[first, last]) already says where, so leave placement out");
    }
    q.policy = to_enum(*p, r.key("placement"), placement_names());
  }
  return q;
}

// jobs: several jobs on one cluster (JobSpec), each a map with name, nodes (with first_node or
// placement) and one of workload (training, dlrm or trace, read for the job's own GPUs) or traffic.
std::vector<JobSpec> read_jobs(const YamlNode& list, const ClusterSpec& cluster) {
  if (!list.is_sequence() || list.items.empty()) {
    fail(list, "jobs", "expected a list of jobs, each a map with name, nodes and workload or traffic, got " +
                           describe(list));
  }
  std::vector<JobSpec> jobs(list.items.size());
  std::vector<MapReader> readers;
  std::vector<workloads::NodeRequest> requests;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const YamlNode& item = list.items[i];
    const std::string key = fmt::format("jobs[{}]", i);
    if (!item.is_map()) {
      fail(item, key, "expected a map with name, nodes and workload or traffic, got " + describe(item));
    }
    MapReader& r = readers.emplace_back(item, key);
    jobs[i].name = fmt::format("job{}", i);
    r.read("name", jobs[i].name);
    for (size_t k = 0; k < i; ++k) {
      if (jobs[k].name == jobs[i].name) {
        fail(*item.find("name"), r.key("name"),
             fmt::format("\"{}\" is jobs[{}]'s name too; expected a name of its own", jobs[i].name, k));
      }
    }
    r.read("iterations", jobs[i].iterations, Range{1, 1'000'000});
    requests.push_back(read_node_request(r, item));
    jobs[i].request = requests.back();
  }
  std::vector<std::vector<int>> placed;
  try {
    placed = workloads::place_jobs(requests, cluster.nodes);
  } catch (const workloads::PlacementError& e) {
    const size_t j = e.job();
    std::string message = e.what();
    if (e.other() >= 0) {
      const auto other = static_cast<size_t>(e.other());
      message += fmt::format(" of jobs[{}].nodes (\"{}\")", other, jobs[other].name);
    }
    fail(*list.items[j].find("nodes"), readers[j].key("nodes"), message);
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    JobSpec& job = jobs[i];
    MapReader& r = readers[i];
    job.nodes = placed[i];
    const bool has_workload = r.has("workload"), has_traffic = r.has("traffic");
    if (has_workload == has_traffic) {
      fail(list.items[i], r.key("workload"),
           std::string("expected one of workload (training, dlrm or trace) or traffic, got ") +
               (has_workload ? "both" : "neither"));
    }
    if (has_traffic) {
      job.is_traffic = true;
      MapReader t = r.map("traffic");
      t.read("collective", job.traffic.collective, traffic_collective_names());
      t.read("bytes", job.traffic.bytes, Bytes(1));
      t.read("repeat", job.traffic.repeat, Range{1, 1'000'000});
      t.finish();
    } else {
      ClusterSpec own = cluster;
      own.nodes = static_cast<int>(job.nodes.size());
      MapReader w = r.map("workload");
      const YamlNode* kind = w.node().find("kind");
      job.workload = read_workload(w, own);
      if (job.workload.kind == workloads::WorkloadKind::collective_sweep) {
        fail(kind ? *kind : w.node(), w.key("kind"),
             "expected training, dlrm or trace (for a collective among the job's GPUs, give traffic: instead of "
             "workload:)");
      }
    }
    r.finish();
  }
  return jobs;
}

// What a scenario with jobs: needs of the rest of it: a network model with links to share, every
// job online, one compute model for all (one attention kernel), and outputs the jobs' table has.
void check_jobs(const YamlNode& root, const Scenario& s) {
  const YamlNode& jobs = *root.find("jobs");
  const YamlNode* network = root.find("network");
  auto at = [&](std::string_view key) -> const YamlNode& {
    const YamlNode* n = network ? network->find(key) : nullptr;
    return n ? *n : jobs;
  };
  if (s.network.model == NetworkModelKind::analytical) {
    fail(at("model"), "network.model",
         "jobs share the fabric on flow or packet; the analytical model prices each collective alone, with no "
         "links to share (expected flow or packet)");
  }
  if (s.network.background != Background::none) {
    fail(at("background"), "network.background",
         "replicas copies the one workload; with jobs: give each neighbour as a job of its own (expected none)");
  }
  if (s.network.execution != Execution::online) {
    fail(at("execution"), "network.execution", "jobs run together online on one engine (expected online)");
  }
  const JobSpec* first = nullptr;
  for (size_t i = 0; i < s.jobs.size(); ++i) {
    const JobSpec& job = s.jobs[i];
    if (job.is_traffic) continue;
    if (first == nullptr) {
      first = &job;
    } else if (job.workload.training.attention != first->workload.training.attention) {
      const YamlNode* w = jobs.items[i].find("workload");
      const YamlNode* a = w ? w->find("attention") : nullptr;
      fail(a ? *a : jobs.items[i], fmt::format("jobs[{}].workload.attention", i),
           fmt::format("every job's compute is priced by one model: expected {} as job \"{}\" has",
                       enum_name(first->workload.training.attention, attention_names()), first->name));
    }
  }
  for (const std::string& f : s.output.formats) {
    if (f == "trace" || f == "html") {
      const YamlNode* o = root.find("output");
      const YamlNode* n = o ? o->find("formats") : nullptr;
      fail(n ? *n : jobs, "output.formats", "jobs write table, csv or json; expected those, got " + f);
    }
  }
}

Scenario convert(const YamlNode& root, const std::string& source_name) {
  if (root.is_null()) {
    throw InputError(SourceLocation{source_name, 1, 1}, "",
                     "the scenario is empty; expected a map of keys (name, cluster, workload, ...)");
  }
  MapReader r(root, "");
  Scenario s;
  s.source_file = source_name;
  s.name = file_stem(source_name);
  r.read("name", s.name);
  r.read("seed", s.seed);
  s.cluster = read_cluster(r.map("cluster"), source_name, s.notes);
  s.network = read_network(r.map("network"));
  s.collectives = read_collectives(r.map("collectives"));
  if (s.cluster.fabric.sharp && !s.collectives.collnet) {
    s.notes.push_back("cluster.fabric.sharp: true: CollNet (SHARP) stays off, as in NCCL without NCCL_COLLNET_ENABLE=1; "
                      "set collectives.collnet: true to let the tuner choose it");
  }
  if (const YamlNode* c = r.get_or_null("calibration")) s.calibration = to_string(*c, "calibration");
  if (const YamlNode* jobs = r.get("jobs")) {
    if (const YamlNode* w = root.find("workload")) {
      fail(*w, "workload", "a scenario with jobs: gives each job its own workload; expected it under jobs, not here");
    }
    s.jobs = read_jobs(*jobs, s.cluster);
  } else {
    s.workload = read_workload(r.map("workload"), s.cluster);
  }
  s.output = read_output(r.map("output"), s.name);
  r.finish();
  if (!s.jobs.empty()) check_jobs(root, s);
  if (s.network.model == NetworkModelKind::packet && s.network.execution == Execution::per_collective &&
      s.workload.kind != workloads::WorkloadKind::collective_sweep) {
    fail(*root.find("network")->find("execution"), "network.execution",
         "per_collective prices each collective alone on flows; the packet model runs a workload online "
         "(expected online, or network.model: flow)");
  }
  // The job's copies share the fabric only where links are shared: on flows or packets, for a
  // job whose size says where its copies go (a generated training job's tp x pp x cp x dp, a
  // collective sweep's ranks).
  if (s.network.background == Background::replicas) {
    const YamlNode& at = *root.find("network")->find("background");
    if (s.network.model == NetworkModelKind::analytical) {
      fail(at, "network.background",
           "replicas needs network.model: flow or packet (the analytical model prices each collective alone, "
           "with no links to share)");
    }
    if (s.workload.kind == workloads::WorkloadKind::trace || s.workload.kind == workloads::WorkloadKind::dlrm) {
      fail(at, "network.background",
           "replicas needs workload.kind: training or collective-sweep (a trace does not say which of the "
           "cluster's GPUs it leaves free, and a dlrm job fills the cluster)");
    }

  }
  return s;
}

}  // namespace

Scenario load_scenario_text(std::string_view yaml, const std::string& source_name,
                            const std::vector<Override>& overrides) {
  YamlNode root = parse_yaml_tree(yaml, source_name);
  if (root.is_null() && !overrides.empty()) {
    throw InputError(SourceLocation{source_name, 1, 1}, "",
                     "the scenario is empty; expected a map of keys (name, cluster, workload, ...)");
  }
  if (!root.is_map() && !root.is_null()) {
    throw InputError(root.where, "", "expected a map of keys (name, cluster, workload, ...), got " + describe(root));
  }
  apply_overrides(root, overrides);
  return convert(root, source_name);
}

Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(SourceLocation{path, 0, 0}, "", "expected a scenario file, got a directory");
  }
  if (const auto kind = std::filesystem::status(path, ec).type();
      kind == std::filesystem::file_type::character || kind == std::filesystem::file_type::block) {
    throw InputError(SourceLocation{path, 0, 0}, "", "expected a scenario file, got a device");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "", "cannot open the scenario file (no such file or not readable)");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(SourceLocation{path, 0, 0}, "", "cannot read the scenario file");
  return load_scenario_text(text.str(), path, overrides);
}

}  // namespace dtsim::config
