// NCCL topology XML (NCCL_TOPO_DUMP_FILE, NCCL_TOPO_FILE) to a NodeTemplate: <cpu> sockets,
// <pci> bridges as PCIe switches, <pci> devices holding a <gpu> or a <nic> (one NIC per <net>),
// and each GPU's <nvlink> entries, to a peer GPU or to the NVSwitch fabric. Attributes NCCL
// defaults are read by NCCL's rules (src/graph/topo.cc, 2.30): link_width 0 or empty is x16; a
// link_speed NCCL does not know is Gen3; a <pci> whose class says GPU (0x03....) or NIC
// (0x02....) without a <gpu> or <nic> inside, as cloud vendors publish their VMs' files for
// NCCL_TOPO_FILE (NCCL fills those in at run time), is that device; an <nvlink> whose tclass is
// not a GPU's goes to the node's NVSwitch fabric whatever its target, and one to a GPU the file
// does not hold carries nothing.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <pugixml.hpp>
#include <sstream>
#include <string>

#include "sim/error.h"
#include "topology/topology_file.h"

namespace dtsim::topology {
namespace {

constexpr double kPcieEfficiency = 0.8;  // usable share of the raw PCIe rate (TLP overheads)
constexpr double kPcieHopNs = 250;
constexpr double kSocketHopNs = 150;
constexpr std::string_view kGpuClassPrefix = "0x03";  // 0x0302: 3D controller, 0x0300: VGA
constexpr std::string_view kNicClassPrefix = "0x02";  // 0x0207: InfiniBand, 0x0200: Ethernet
constexpr std::string_view kCpuClass = "0x068001";    // an NVLink to the CPU (POWER9)

// NVLink per link per direction: NVLink2/3/4 run 25 GB/s a link, NVLink5 50 GB/s.
Bandwidth nvlink_per_link(int sm) {
  if (sm >= 100) return Bandwidth::gbytes_per_s(50);
  if (sm >= 70) return Bandwidth::gbytes_per_s(25);
  return Bandwidth::gbytes_per_s(20);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

struct XmlReader {
  const ClusterSpec& spec;
  std::string_view text;
  std::string file;
  NodeTemplate t;
  std::map<std::string, int> busid_part;  // bus id -> GPU part
  std::map<int, pugi::xml_node> gpu_xml;  // GPU part -> its <gpu> element
  std::map<int, int> gpu_sm;
  std::vector<int> class_only_gpus;  // GPU parts named by class code only, in file order
  std::map<int, Bandwidth> nic_speed;  // NIC part -> its port speed; zero when unsaid
  std::vector<std::pair<int, int>> nics;  // (net dev, part)
  int switches = 0;
  int nvswitch = -1;

  int line_of(const pugi::xml_node& n) const {
    auto off = static_cast<size_t>(std::max<ptrdiff_t>(n.offset_debug(), 0));
    return 1 + static_cast<int>(std::count(
                   text.begin(), text.begin() + static_cast<ptrdiff_t>(std::min(off, text.size())),
                   '\n'));
  }
  [[noreturn]] void fail(const pugi::xml_node& n, const std::string& element,
                         const std::string& message) const {
    throw InputError(SourceLocation{file, line_of(n), 0}, element, message);
  }
  int add(DeviceKind kind, std::string name, int local) {
    t.parts.push_back({kind, std::move(name), local});
    return static_cast<int>(t.parts.size() - 1);
  }
  std::string describe(const pugi::xml_node& n) const {
    std::string s = std::string("<") + n.name();
    for (const char* a : {"busid", "dev", "name", "numaid", "target"}) {
      if (n.attribute(a)) s += std::string(" ") + a + "=\"" + n.attribute(a).value() + "\"";
    }
    return s + ">";
  }
  // A <pci>'s link to its parent. Without link_speed it runs at its parent's rate (NCCL fills a
  // missing speed in from sysfs at run time; a file for offline use has none to read).
  Bandwidth pci_bandwidth(const pugi::xml_node& pci, Bandwidth inherited) const {
    if (!pci.attribute("link_speed")) return inherited;
    const std::string speed = pci.attribute("link_speed").value();
    // NCCL matches the speed's leading "N GT/s" and takes Gen3 for what it does not know.
    double gts = std::atof(speed.c_str());
    if (gts != 2.5 && gts != 5 && gts != 8 && gts != 16 && gts != 32 && gts != 64) gts = 8;
    int width = pci.attribute("link_width").as_int(0);
    if (width <= 0) width = 16;  // NCCL: "0" (or empty) is x16, as VMs' virtual bridges write it
    const double encoding = gts < 8 ? 8.0 / 10.0 : 128.0 / 130.0;  // Gen1-2: 8b/10b; Gen3 on: 128b/130b
    return Bandwidth::gbytes_per_s(gts * width * encoding / 8 * kPcieEfficiency);
  }
  // The one NIC a class-code-only <pci> stands for.
  void add_class_nic(int parent, Bandwidth bw) {
    const int part = add(DeviceKind::nic, "nic" + std::to_string(nics.size()), static_cast<int>(nics.size()));
    nics.emplace_back(static_cast<int>(nics.size()), part);
    wire(part, parent, LinkKind::pcie, bw, spec.nic.latency.scaled(0.5));
  }
  void wire(int a, int b, LinkKind kind, Bandwidth bw, Time lat) {
    t.wires.push_back({a, b, kind, bw, lat});
  }

  void add_nics(const pugi::xml_node& nic, int parent, Bandwidth bw) {
    for (pugi::xml_node net : nic.children()) {
      if (std::string(net.name()) != "net")
        fail(net, describe(net), "unexpected element inside <nic>; expected <net>");
      if (net.attribute("speed") && net.attribute("speed").as_double(0) <= 0) {
        fail(net, describe(net),
             "speed must be a positive number of Mb/s, got \"" +
                 std::string(net.attribute("speed").value()) + "\"");
      }
      int dev = net.attribute("dev").as_int(static_cast<int>(nics.size()));
      // NCCL numbers a node's NICs by dev; a dump that repeats a NIC under every socket (virtual
      // NICs in VMs) lists one NIC several times.
      if (std::any_of(nics.begin(), nics.end(), [&](const auto& n) { return n.first == dev; })) continue;
      int part =
          add(DeviceKind::nic, "nic" + std::to_string(nics.size()), static_cast<int>(nics.size()));
      // NCCL writes the port speed in Mb/s.
      nic_speed[part] = net.attribute("speed") ? Bandwidth::gbps(net.attribute("speed").as_double() / 1000) : Bandwidth();
      nics.emplace_back(dev, part);
      wire(part, parent, LinkKind::pcie, bw, spec.nic.latency.scaled(0.5));
    }
  }

  void walk(const pugi::xml_node& parent_xml, int parent, Bandwidth bw) {
    for (pugi::xml_node c : parent_xml.children()) {
      const std::string name = c.name();
      if (c.type() != pugi::node_element) continue;
      if (name == "nic") {
        add_nics(c, parent, bw);
      } else if (name == "pci") {
        Bandwidth link = pci_bandwidth(c, bw);
        const std::string busid = lower(c.attribute("busid").value());
        if (busid.empty()) fail(c, describe(c), "a <pci> element needs a busid");
        pugi::xml_node gpu = c.child("gpu");
        pugi::xml_node nic = c.child("nic");
        const std::string pci_class = lower(c.attribute("class").value());
        if (gpu || (!nic && pci_class.starts_with(kGpuClassPrefix))) {
          if (gpu && !gpu.attribute("dev")) fail(gpu, describe(gpu), "a <gpu> needs its dev index");
          if (busid_part.count(busid)) fail(c, describe(c), "duplicate bus id " + busid);
          // A class-code-only GPU takes its place in file order for its dev index.
          int dev = gpu ? gpu.attribute("dev").as_int() : 1'000'000 + static_cast<int>(gpu_xml.size());
          int part = add(DeviceKind::gpu, "gpu" + std::to_string(dev), dev);
          busid_part[busid] = part;
          gpu_xml[part] = gpu ? gpu : c;
          if (!gpu) class_only_gpus.push_back(part);
          gpu_sm[part] = gpu ? gpu.attribute("sm").as_int(spec.gpu.compute_capability) : spec.gpu.compute_capability;
          wire(part, parent, LinkKind::pcie, link, Time::ns(kPcieHopNs));
        } else if (nic) {
          add_nics(nic, parent, link);
        } else if (pci_class.starts_with(kNicClassPrefix)) {
          add_class_nic(parent, link);
        } else {
          int sw = add(DeviceKind::pcie_switch, "pcie" + std::to_string(switches), switches);
          ++switches;
          wire(sw, parent, LinkKind::pcie, link, Time::ns(kPcieHopNs));
          walk(c, sw, link);
        }
      } else if (name == "gpu" || name == "net") {
        fail(c, describe(c), "must sit inside a <pci> (or <nic>) element");
      } else if (name != "c2c" && name != "nvlink" && name != "pcilink") {
        fail(c, describe(c),
             "unknown element <" + name + ">; expected <cpu>, <pci>, <gpu>, <nic> or <net>");
      }
    }
  }

  void nvlinks() {
    std::map<std::pair<int, int>, int> pairs;  // GPU-GPU link counts, each pair once
    std::map<int, Bandwidth> to_switch;
    for (const auto& [part, gpu] : gpu_xml) {
      for (pugi::xml_node nv : gpu.children("nvlink")) {
        int count = nv.attribute("count").as_int(1);
        if (count <= 0) fail(nv, describe(nv), "count must be positive");
        const std::string target = lower(nv.attribute("target").value());
        const std::string tclass = lower(nv.attribute("tclass").value());
        auto peer = busid_part.find(target);
        // As NCCL: a GPU's tclass names a peer (an NVLink bridge or a direct mesh), the CPU's
        // an NVLink to the host (not modelled: host traffic runs over PCIe here), and any other
        // the NVSwitch fabric, whatever the target's bus id (VMs hide the switches and some
        // dumps name the GPU's own). Without a tclass, the target's bus id decides.
        const bool to_gpu = tclass.empty() ? peer != busid_part.end() : tclass.starts_with(kGpuClassPrefix);
        if (tclass == kCpuClass) continue;
        if (!to_gpu) {
          to_switch[part] = to_switch[part] + nvlink_per_link(gpu_sm[part]) * count;
        } else if (peer != busid_part.end() && peer->second != part) {
          auto key = std::minmax(part, peer->second);
          pairs[{key.first, key.second}] = std::max(pairs[{key.first, key.second}], count);
        }
        // A peer GPU the file does not hold (a dump of a job that used some of the node's GPUs)
        // or the GPU itself: NCCL drops the link, and so does this reader.
      }
    }
    // GPUs the file names by class code only take the spec's scale-up: an NVSwitch port each, or
    // bridges joining them two by two in file order.
    if (!class_only_gpus.empty()) {
      t.scale_up_from_spec = true;
      const auto kind = spec.scale_up.kind;
      for (size_t i = 0; i < class_only_gpus.size(); ++i) {
        const int part = class_only_gpus[i];
        if (kind == ScaleUpKind::nvswitch) to_switch[part] = spec.scale_up.bandwidth;
        if (kind == ScaleUpKind::nvlink_bridge && i % 2 == 1) {
          wire(class_only_gpus[i - 1], part, LinkKind::nvlink, spec.scale_up.bandwidth, Time::ns(500));
        }
      }
    }
    for (const auto& [ab, count] : pairs) {
      wire(ab.first, ab.second, LinkKind::nvlink, nvlink_per_link(gpu_sm[ab.first]) * count,
           Time::ns(500));
    }
    if (!to_switch.empty()) {
      nvswitch = add(DeviceKind::nvswitch, "nvswitch0", 0);
      for (const auto& [part, bandwidth] : to_switch) wire(part, nvswitch, LinkKind::nvlink, bandwidth, Time::ns(500));
    }
  }
};

}  // namespace

NodeTemplate parse_nccl_topology_xml(const ClusterSpec& spec, std::string_view text,
                                     const std::string& file_name) {
  pugi::xml_document doc;
  pugi::xml_parse_result ok = doc.load_buffer(text.data(), text.size());
  XmlReader r{spec, text, file_name, {}, {}, {}, {}, {}, {}, {}, 0, -1};
  if (!ok) {
    int line =
        1 + static_cast<int>(std::count(
                text.begin(),
                text.begin() + std::min<ptrdiff_t>(ok.offset, static_cast<ptrdiff_t>(text.size())),
                '\n'));
    throw InputError(SourceLocation{file_name, line, 0}, "",
                     std::string("malformed XML: ") + ok.description());
  }
  pugi::xml_node system = doc.child("system");
  if (!system && doc.child("graphs")) {
    throw InputError(SourceLocation{file_name, r.line_of(doc.child("graphs")), 0}, "<graphs>",
                     "an NCCL graph file (NCCL_GRAPH_FILE: the rings and trees NCCL chose), not a topology; "
                     "give the <system> file NCCL_TOPO_DUMP_FILE writes");
  }
  if (!system)
    throw InputError(SourceLocation{file_name, 1, 0}, "", "expected a <system> root element");
  const Bandwidth pcie = pcie_x16_bandwidth(spec.gpu.pcie_generation);
  std::vector<int> cpus;
  for (pugi::xml_node c : system.children()) {
    if (c.type() != pugi::node_element) continue;
    const std::string name = c.name();
    if (name != "cpu")
      r.fail(c, r.describe(c), "unknown element <" + name + "> under <system>; expected <cpu>");
    int cpu =
        r.add(DeviceKind::host, "cpu" + std::to_string(cpus.size()), static_cast<int>(cpus.size()));
    if (!cpus.empty()) {
      r.wire(cpus.back(), cpu, LinkKind::pcie, pcie * 2.0, Time::ns(kSocketHopNs));
    }
    cpus.push_back(cpu);
    r.walk(c, cpu, pcie);
  }
  if (r.gpu_xml.empty())
    throw InputError(SourceLocation{file_name, r.line_of(system), 0}, "<system>",
                     "no GPU found (neither a <gpu> element nor a <pci> of class 0x03....)");
  r.nvlinks();
  // GPUs and NICs take their local index from NCCL's dev numbering.
  std::map<int, int> gpu_dev;
  for (const auto& [part, xml] : r.gpu_xml) {
    int dev = r.t.parts[static_cast<size_t>(part)].local;
    if (gpu_dev.count(dev))
      r.fail(xml, r.describe(xml), "duplicate GPU dev " + std::to_string(dev));
    gpu_dev[dev] = part;
  }
  int i = 0;
  for (const auto& [dev, part] : gpu_dev) {
    r.t.parts[static_cast<size_t>(part)].local = i;
    r.t.parts[static_cast<size_t>(part)].name = "gpu" + std::to_string(i);
    ++i;
  }
  std::stable_sort(r.nics.begin(), r.nics.end());
  // The node's fabric ports are its fastest NICs: NCCL runs its rings over them, and the slower
  // ports of a dump are front-end or management networks (a B200 VM: 8 x 400 Gb/s beside
  // 5 ports of 100-200). The slower ones are left out of the node.
  Bandwidth fastest;
  for (const auto& [dev, part] : r.nics) fastest = std::max(fastest, r.nic_speed[part]);
  std::vector<bool> keep(r.t.parts.size(), true);
  std::erase_if(r.nics, [&](const std::pair<int, int>& nic) {
    if (r.nic_speed[nic.second] >= fastest) return false;
    keep[static_cast<size_t>(nic.second)] = false;
    ++r.t.slower_nics_left_out;
    return true;
  });
  if (r.t.slower_nics_left_out > 0) {
    std::vector<int> index(r.t.parts.size(), -1);
    std::vector<NodeTemplate::Part> parts;
    for (size_t p = 0; p < r.t.parts.size(); ++p) {
      if (!keep[p]) continue;
      index[p] = static_cast<int>(parts.size());
      parts.push_back(r.t.parts[p]);
    }
    std::erase_if(r.t.wires, [&](const NodeTemplate::Wire& w) {
      return !keep[static_cast<size_t>(w.a)] || !keep[static_cast<size_t>(w.b)];
    });
    for (NodeTemplate::Wire& w : r.t.wires) {
      w.a = index[static_cast<size_t>(w.a)];
      w.b = index[static_cast<size_t>(w.b)];
    }
    for (auto& [dev, part] : r.nics) part = index[static_cast<size_t>(part)];
    std::map<int, Bandwidth> speed;
    for (const auto& [part, bw] : r.nic_speed) {
      if (keep[static_cast<size_t>(part)]) speed[index[static_cast<size_t>(part)]] = bw;
    }
    r.nic_speed = std::move(speed);
    std::map<int, pugi::xml_node> gpus;
    std::map<int, int> sms;
    for (const auto& [part, xml] : r.gpu_xml) {
      gpus[index[static_cast<size_t>(part)]] = xml;
      sms[index[static_cast<size_t>(part)]] = r.gpu_sm[part];
    }
    r.gpu_xml = std::move(gpus);
    r.gpu_sm = std::move(sms);
    r.t.parts = std::move(parts);
  }
  for (size_t n = 0; n < r.nics.size(); ++n) {
    r.t.parts[static_cast<size_t>(r.nics[n].second)].local = static_cast<int>(n);
    r.t.parts[static_cast<size_t>(r.nics[n].second)].name = "nic" + std::to_string(n);
    r.t.nics.push_back(r.nics[n].second);
  }
  r.t.gpus = static_cast<int>(gpu_dev.size());
  // The fabric side of the NICs runs at the slowest port the file gives.
  for (const auto& [dev, part] : r.nics) {
    const Bandwidth speed = r.nic_speed[part];
    if (!speed.is_zero() && (r.t.nic_bandwidth.is_zero() || speed < r.t.nic_bandwidth)) r.t.nic_bandwidth = speed;
  }
  for (const auto& [part, xml] : r.gpu_xml) {
    if (xml.name() == std::string_view("gpu")) r.t.gpu_sm = r.gpu_sm[part];
  }
  return std::move(r.t);
}

TopologyFileFacts nccl_topology_facts(const NodeTemplate& t) {
  TopologyFileFacts f;
  f.gpus_per_node = t.gpus;
  f.nic_count = static_cast<int>(t.nics.size());  // the fastest ports only (the reader left the rest out)
  f.nic_bandwidth = t.nic_bandwidth;
  // A NIC sends no faster than its PCIe path to the CPU, whose links it shares with the NICs
  // beneath them (a VM's host bridge of unknown speed, Gen3 x16 by NCCL's rule, under four 400 Gb/s
  // NICs): the closed form takes the slowest NIC's share, as flows find it on the graph.
  if (!f.nic_bandwidth.is_zero()) {
    std::map<int, std::pair<int, Bandwidth>> up;  // part -> (its parent, the link to it)
    for (const NodeTemplate::Wire& w : t.wires) {
      if (w.kind == LinkKind::pcie && t.parts[static_cast<size_t>(w.a)].kind != DeviceKind::host) up[w.a] = {w.b, w.bandwidth};
    }
    std::map<int, int> beneath;  // part -> NICs whose path to the CPU crosses its uplink
    for (int nic : t.nics) {
      for (int at = nic; up.count(at); at = up[at].first) ++beneath[at];
    }
    for (int nic : t.nics) {
      Bandwidth share = f.nic_bandwidth;
      for (int at = nic; up.count(at); at = up[at].first) share = std::min(share, up[at].second / beneath[at]);
      f.nic_pcie_bound = std::min(f.nic_pcie_bound.is_zero() ? share : f.nic_pcie_bound, share);
    }
    if (f.nic_pcie_bound >= f.nic_bandwidth) f.nic_pcie_bound = Bandwidth();
  }
  f.slower_nics_left_out = t.slower_nics_left_out;
  f.gpu_sm = t.gpu_sm;
  // Per GPU: its NVLinks to the switch, to peers, and its PCIe link; the slowest GPU sets the node's figure.
  std::map<int, Bandwidth> to_switch, to_peers, pcie;
  for (const NodeTemplate::Wire& w : t.wires) {
    const auto kind_of = [&](int part) { return t.parts[static_cast<size_t>(part)].kind; };
    for (auto [gpu, other] : {std::pair{w.a, w.b}, std::pair{w.b, w.a}}) {
      if (kind_of(gpu) != DeviceKind::gpu) continue;
      if (w.kind == LinkKind::nvlink && kind_of(other) == DeviceKind::nvswitch) to_switch[gpu] = to_switch[gpu] + w.bandwidth;
      if (w.kind == LinkKind::nvlink && kind_of(other) == DeviceKind::gpu) to_peers[gpu] = to_peers[gpu] + w.bandwidth;
      if (w.kind == LinkKind::pcie) pcie[gpu] = w.bandwidth / kPcieEfficiency;  // the raw rate
    }
  }
  auto slowest = [](const std::map<int, Bandwidth>& by_gpu) {
    Bandwidth m;
    for (const auto& [gpu, bw] : by_gpu) m = m.is_zero() || bw < m ? bw : m;
    return m;
  };
  if (t.scale_up_from_spec) {
    // The file does not say: the spec's scale-up stands.
  } else if (!to_switch.empty()) {
    f.scale_up_kind = ScaleUpKind::nvswitch;
    f.scale_up_bandwidth = static_cast<int>(to_switch.size()) == t.gpus ? slowest(to_switch) : Bandwidth();
  } else if (!to_peers.empty()) {
    f.scale_up_kind = ScaleUpKind::nvlink_bridge;
    f.scale_up_bandwidth = slowest(to_peers);
  } else {
    f.scale_up_kind = ScaleUpKind::pcie;
    f.scale_up_bandwidth = slowest(pcie);
  }
  return f;
}

NodeTemplate read_nccl_topology_xml(const ClusterSpec& spec, const std::string& path) {
  // A node's XML or a cluster's graph: megabytes at most; 256 MiB is a wrong file.
  return parse_nccl_topology_xml(spec, read_input_file(path, "cluster.topology_file", std::uintmax_t{256} << 20), path);
}

}  // namespace dtsim::topology
