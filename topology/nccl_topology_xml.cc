// NCCL topology XML (NCCL_TOPO_DUMP_FILE) to a NodeTemplate: <cpu> sockets, <pci> bridges as
// PCIe switches, <pci> devices holding a <gpu> or a <nic> (one NIC per <net>), and each GPU's
// <nvlink> entries, to a peer GPU's bus id or to the NVSwitch fabric (tclass 0x068000).
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
constexpr const char* kNvswitchClass = "0x068000";

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
  Bandwidth pci_bandwidth(const pugi::xml_node& pci, Bandwidth inherited) const {
    const char* speed = pci.attribute("link_speed").value();
    int width = pci.attribute("link_width").as_int(0);
    double gts = std::atof(speed);
    if (gts <= 0 || width <= 0) return inherited;
    return Bandwidth::gbytes_per_s(gts * width * (128.0 / 130.0) / 8 * kPcieEfficiency);
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
      // NCCL writes the port speed in Mb/s; the node's NICs run at the slowest port's.
      if (net.attribute("speed")) {
        Bandwidth speed = Bandwidth::gbps(net.attribute("speed").as_double() / 1000);
        if (t.nic_bandwidth.is_zero() || speed < t.nic_bandwidth) t.nic_bandwidth = speed;
      }
      int dev = net.attribute("dev").as_int(static_cast<int>(nics.size()));
      int part =
          add(DeviceKind::nic, "nic" + std::to_string(nics.size()), static_cast<int>(nics.size()));
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
        if (gpu) {
          if (!gpu.attribute("dev")) fail(gpu, describe(gpu), "a <gpu> needs its dev index");
          if (busid_part.count(busid)) fail(c, describe(c), "duplicate bus id " + busid);
          int dev = gpu.attribute("dev").as_int();
          int part = add(DeviceKind::gpu, "gpu" + std::to_string(dev), dev);
          busid_part[busid] = part;
          gpu_xml[part] = gpu;
          gpu_sm[part] = gpu.attribute("sm").as_int(spec.gpu.compute_capability);
          wire(part, parent, LinkKind::pcie, link, Time::ns(kPcieHopNs));
        } else if (nic) {
          add_nics(nic, parent, link);
        } else {
          int sw = add(DeviceKind::pcie_switch, "pcie" + std::to_string(switches), switches);
          ++switches;
          wire(sw, parent, LinkKind::pcie, link, Time::ns(kPcieHopNs));
          walk(c, sw, link);
        }
      } else if (name == "gpu" || name == "net") {
        fail(c, describe(c), "must sit inside a <pci> (or <nic>) element");
      } else if (name != "c2c" && name != "nvlink") {
        fail(c, describe(c),
             "unknown element <" + name + ">; expected <cpu>, <pci>, <gpu>, <nic> or <net>");
      }
    }
  }

  void nvlinks() {
    std::map<std::pair<int, int>, int> pairs;  // GPU-GPU link counts, each pair once
    std::map<int, int> to_switch;
    for (const auto& [part, gpu] : gpu_xml) {
      for (pugi::xml_node nv : gpu.children("nvlink")) {
        int count = nv.attribute("count").as_int(1);
        if (count <= 0) fail(nv, describe(nv), "count must be positive");
        const std::string target = lower(nv.attribute("target").value());
        const std::string tclass = lower(nv.attribute("tclass").value());
        if (auto it = busid_part.find(target); it != busid_part.end()) {
          if (it->second == part) fail(nv, describe(nv), "an NVLink from a GPU to itself");
          auto key = std::minmax(part, it->second);
          pairs[{key.first, key.second}] = std::max(pairs[{key.first, key.second}], count);
        } else if (tclass == kNvswitchClass) {
          to_switch[part] += count;
        } else {
          fail(nv, describe(nv),
               "dangling NVLink: no GPU with bus id " + target + " (and tclass is not NVSwitch " +
                   kNvswitchClass + ")");
        }
      }
    }
    for (const auto& [ab, count] : pairs) {
      wire(ab.first, ab.second, LinkKind::nvlink, nvlink_per_link(gpu_sm[ab.first]) * count,
           Time::ns(500));
    }
    if (!to_switch.empty()) {
      nvswitch = add(DeviceKind::nvswitch, "nvswitch0", 0);
      for (const auto& [part, count] : to_switch) {
        wire(part, nvswitch, LinkKind::nvlink, nvlink_per_link(gpu_sm[part]) * count,
             Time::ns(500));
      }
    }
  }
};

}  // namespace

NodeTemplate parse_nccl_topology_xml(const ClusterSpec& spec, std::string_view text,
                                     const std::string& file_name) {
  pugi::xml_document doc;
  pugi::xml_parse_result ok = doc.load_buffer(text.data(), text.size());
  XmlReader r{spec, text, file_name, {}, {}, {}, {}, {}, 0, -1};
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
    throw InputError(SourceLocation{file_name, r.line_of(system), 0}, "<system>", "no <gpu> found");
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
  for (size_t n = 0; n < r.nics.size(); ++n) {
    r.t.parts[static_cast<size_t>(r.nics[n].second)].local = static_cast<int>(n);
    r.t.parts[static_cast<size_t>(r.nics[n].second)].name = "nic" + std::to_string(n);
    r.t.nics.push_back(r.nics[n].second);
  }
  r.t.gpus = static_cast<int>(gpu_dev.size());
  return std::move(r.t);
}

NodeTemplate read_nccl_topology_xml(const ClusterSpec& spec, const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw InputError(SourceLocation{path, 0, 0}, "cluster.topology_file", "cannot open the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_nccl_topology_xml(spec, ss.str(), path);
}

}  // namespace dtsim::topology
