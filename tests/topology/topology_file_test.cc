#include "topology/topology_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "sim/error.h"
#include "spec_helpers.h"
#include "topology/describe.h"

namespace dtsim::topology {
namespace {

// Two nodes of two GPUs and one NIC, under one switch.
const char* kGoodYaml = R"(devices:
  - {name: n0/gpu0, kind: gpu, node: 0}
  - {name: n0/gpu1, kind: gpu, node: 0}
  - {name: n0/nvs, kind: nvswitch, node: 0}
  - {name: n0/nic0, kind: nic, node: 0}
  - {name: n1/gpu0, kind: gpu, node: 1}
  - {name: n1/gpu1, kind: gpu, node: 1}
  - {name: n1/nvs, kind: nvswitch, node: 1}
  - {name: n1/nic0, kind: nic, node: 1}
  - {name: sw0, kind: switch}
links:
  - {from: n0/gpu0, to: n0/nvs, bandwidth: 450GB/s, latency: 500ns}
  - {from: n0/gpu1, to: n0/nvs, bandwidth: 450GB/s, latency: 500ns}
  - {from: n0/gpu0, to: n0/nic0, bandwidth: 50GB/s, latency: 1us}
  - {from: n0/gpu1, to: n0/nic0, bandwidth: 50GB/s, latency: 1us}
  - {from: n1/gpu0, to: n1/nvs, bandwidth: 450GB/s, latency: 500ns}
  - {from: n1/gpu1, to: n1/nvs, bandwidth: 450GB/s, latency: 500ns}
  - {from: n1/gpu0, to: n1/nic0, bandwidth: 50GB/s, latency: 1us}
  - {from: n1/gpu1, to: n1/nic0, bandwidth: 50GB/s, latency: 1us}
  - {from: n0/nic0, to: sw0, bandwidth: 400Gbps, latency: 500ns}
  - {from: n1/nic0, to: sw0, bandwidth: 400Gbps, latency: 500ns}
)";

ClusterSpec base() {
  return *find_node_preset("hgx-h100");
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// The InputError a malformed file raises.
InputError yaml_error(const std::string& text) {
  try {
    parse_topology_yaml(base(), text, "bad.yaml");
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected InputError";
  return InputError("none");
}

TEST(TopologyYaml, WholeGraphBuildsWithNodesAndGpusFromTheFile) {
  auto c = parse_topology_yaml(base(), kGoodYaml, "good.yaml");
  EXPECT_EQ(c->spec().nodes, 2);
  EXPECT_EQ(c->gpu_count(), 4);
  EXPECT_EQ(c->links().size(), 20u);
  auto r = c->route(1, 3);
  EXPECT_EQ(r.size(), 4u);  // gpu -> nic -> sw0 -> nic -> gpu
  EXPECT_EQ(c->link(r[1]).kind, LinkKind::network);
  EXPECT_EQ(summarize(*c).fabric, "file");
  std::ostringstream text;
  describe(*c, DescribeFormat::text, text);
  EXPECT_NE(text.str().find("2 nodes x 2 GPUs = 4 GPUs"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("good.yaml"), std::string::npos) << text.str();
}

TEST(TopologyYaml, DanglingLinkNamesTheMissingDeviceAndLine) {
  InputError e =
      yaml_error(replace(kGoodYaml, "to: sw0, bandwidth: 400Gbps", "to: sw9, bandwidth: 400Gbps"));
  EXPECT_EQ(e.key(), "links[8].to");
  EXPECT_EQ(e.where().line, 20);
  EXPECT_NE(e.message().find("no device named \"sw9\""), std::string::npos) << e.what();
}

TEST(TopologyYaml, ZeroBandwidthIsRejectedAtItsLink) {
  InputError e = yaml_error(
      replace(kGoodYaml, "to: n0/nvs, bandwidth: 450GB/s", "to: n0/nvs, bandwidth: 0GB/s"));
  EXPECT_EQ(e.key(), "links[0].bandwidth");
  EXPECT_EQ(e.where().line, 12);
}

TEST(TopologyYaml, DisconnectedGpuIsNamed) {
  std::string text = kGoodYaml;
  text = replace(text, "  - {from: n1/gpu1, to: n1/nvs, bandwidth: 450GB/s, latency: 500ns}\n", "");
  text = replace(text, "  - {from: n1/gpu1, to: n1/nic0, bandwidth: 50GB/s, latency: 1us}\n", "");
  InputError e = yaml_error(text);
  EXPECT_NE(e.message().find("disconnected GPU: \"n1/gpu1\""), std::string::npos) << e.what();
  EXPECT_EQ(e.where().line, 7);
}

TEST(TopologyYaml, DuplicateNameGivesBothLines) {
  InputError e = yaml_error(replace(kGoodYaml, "{name: n1/nvs,", "{name: n0/nvs,"));
  EXPECT_EQ(e.key(), "devices[6].name");
  EXPECT_EQ(e.where().line, 8);
  EXPECT_NE(e.message().find("duplicate device name \"n0/nvs\" (first at line 4)"),
            std::string::npos)
      << e.what();
}

TEST(TopologyYaml, UnknownDeviceKindListsTheKinds) {
  InputError e = yaml_error(replace(kGoodYaml, "kind: switch}", "kind: tpu}"));
  EXPECT_EQ(e.key(), "devices[8].kind");
  EXPECT_NE(e.message().find("unknown device kind \"tpu\" for \"sw0\""), std::string::npos)
      << e.what();
}

// A GPU of node 0 cabled to a NIC of node 1 is refused at the link: no route between nodes could cross it.
TEST(TopologyYaml, ALinkBetweenTwoNodesInsidesIsRefused) {
  InputError e = yaml_error(replace(kGoodYaml, "{name: n0/nic0, kind: nic, node: 0}", "{name: n0/nic0, kind: nic, node: 1}"));
  EXPECT_NE(e.message().find("devices of two nodes meet only NIC to NIC"), std::string::npos) << e.what();
}

// A device written as a map whose key is itself a map ("- {name: x, node0}: ") is an InputError
// at the device, not yaml-cpp's "bad conversion".
TEST(TopologyYaml, AKeyThatIsNotANameIsRefused) {
  InputError e = yaml_error(replace(kGoodYaml, "{name: n0/nvs, kind: nvswitch, node: 0}", "{name: n0/nvs, kind: nvswitch, node0}: "));
  EXPECT_GT(e.where().line, 0) << e.what();
}

// A GPU with no path to a NIC of its node (its only link to the NVSwitch) cannot reach the other
// node, and is refused at load, not when a model first routes over it.
TEST(TopologyYaml, AGpuThatReachesNoNicIsRefused) {
  InputError e = yaml_error(replace(kGoodYaml, "{from: n1/gpu1, to: n1/nic0, bandwidth: 50GB/s, latency: 1us}",
                                    "{from: n1/gpu0, to: n1/nic0, bandwidth: 50GB/s, latency: 1us}"));
  EXPECT_NE(e.message().find("a GPU cannot reach another node through NICs and switches"), std::string::npos) << e.what();
}

// A bandwidth or latency too large for its type is an InputError at the link.
TEST(TopologyYaml, FiguresOutOfRangeAreRefusedAtTheLink) {
  EXPECT_EQ(yaml_error(replace(kGoodYaml, "{from: n0/gpu0, to: n0/nvs, bandwidth: 450GB/s", "{from: n0/gpu0, to: n0/nvs, bandwidth: 9999999999999999999999999GB/s")).key(),
            "links[0].bandwidth");
  EXPECT_EQ(yaml_error(replace(kGoodYaml, "bandwidth: 450GB/s, latency: 500ns}", "bandwidth: 450GB/s, latency: 99999999999999999999s}")).key(),
            "links[0].latency");
}

TEST(TopologyYaml, UnknownKeyIsAnErrorNotIgnored) {
  InputError e = yaml_error(replace(kGoodYaml, "{name: sw0,", "{name: sw0, radix: 64,"));
  EXPECT_EQ(e.key(), "devices[8].radix");
}

// What NCCL_TOPO_DUMP_FILE writes for a 4-GPU NVSwitch board with two NICs (trimmed attributes).
const char* kNcclXml = R"(<system version="1">
  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:15:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:18:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="90" rank="0" gdr="1">
          <nvlink target="0000:07:00.0" count="9" tclass="0x068000"/>
          <nvlink target="0000:08:00.0" count="9" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:19:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="1" sm="90" rank="1" gdr="1">
          <nvlink target="0000:07:00.0" count="18" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:1a:00.0" class="0x020700" link_speed="32.0 GT/s PCIe" link_width="16">
        <nic>
          <net name="mlx5_0" dev="0" speed="400000" port="1" latency="0.000000" guid="0x1" maxconn="131072" gdr="1"/>
        </nic>
      </pci>
    </pci>
  </cpu>
  <cpu numaid="1" affinity="ffff0000" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:95:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:98:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="2" sm="90" rank="2" gdr="1">
          <nvlink target="0000:07:00.0" count="18" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:99:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="3" sm="90" rank="3" gdr="1">
          <nvlink target="0000:07:00.0" count="18" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:9a:00.0" class="0x020700" link_speed="32.0 GT/s PCIe" link_width="16">
        <nic>
          <net name="mlx5_1" dev="1" speed="400000" port="1" latency="0.000000" guid="0x2" maxconn="131072" gdr="1"/>
        </nic>
      </pci>
    </pci>
  </cpu>
</system>
)";

InputError xml_error(const std::string& text) {
  try {
    parse_nccl_topology_xml(base(), text, "bad.xml");
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected InputError";
  return InputError("none");
}

TEST(NcclTopologyXml, NodeInsideComesFromTheDump) {
  NodeTemplate t = parse_nccl_topology_xml(base(), kNcclXml, "node.xml");
  EXPECT_EQ(t.gpus, 4);
  EXPECT_EQ(t.nics.size(), 2u);
  int nvlinks = 0;
  for (const auto& w : t.wires) {
    if (w.kind != LinkKind::nvlink) continue;
    ++nvlinks;
    EXPECT_EQ(w.bandwidth, Bandwidth::gbytes_per_s(450));  // 18 NVLink4 links of 25 GB/s
  }
  EXPECT_EQ(nvlinks, 4);
  EXPECT_EQ(t.nic_bandwidth, Bandwidth::gbps(400));  // speed="400000" Mb/s
}

TEST(NcclTopologyXml, EveryNodeGetsTheInsideAndTheSpecsFabricJoinsThem) {
  ClusterSpec s = base();
  s.nodes = 4;
  s.fabric.kind = FabricKind::single_switch;
  auto c = build_nodes_and_fabric(s, parse_nccl_topology_xml(s, kNcclXml, "node.xml"));
  EXPECT_EQ(c->gpu_count(), 16);
  EXPECT_EQ(c->spec().gpus_per_node, 4);
  auto r = c->route(3, 7);  // GPU 3 of node 0 to GPU 3 of node 1, through NIC 1 (same PCIe switch)
  EXPECT_EQ(c->device(c->link(r[1]).to).name, "node0/nic1");
  EXPECT_EQ(c->link(c->route(0, 3)[0]).kind, LinkKind::nvlink);
}

// As NCCL: an NVLink to a GPU the file does not hold (a dump of a job that used some of the
// node's GPUs) carries nothing, and one whose tclass is not a GPU's reaches the NVSwitch whatever
// its target (Azure's NC A100 v4 files name the GPU's own bus id with a GPU tclass: no link).
TEST(NcclTopologyXml, NvlinksFollowTheirTargetClassAsNcclReadsThem) {
  auto nvlink_bandwidth = [](const NodeTemplate& t, int gpu) {
    Bandwidth sum;
    for (const auto& w : t.wires) {
      if (w.kind != LinkKind::nvlink) continue;
      for (int end : {w.a, w.b}) {
        if (t.parts[static_cast<size_t>(end)].kind == DeviceKind::gpu && t.parts[static_cast<size_t>(end)].local == gpu)
          sum = sum + w.bandwidth;
      }
    }
    return sum;
  };
  const NodeTemplate absent = parse_nccl_topology_xml(
      base(), replace(kNcclXml, R"(target="0000:08:00.0" count="9" tclass="0x068000")", R"(target="0000:08:00.0" count="9" tclass="0x030200")"),
      "t.xml");
  EXPECT_EQ(nvlink_bandwidth(absent, 0), Bandwidth::gbytes_per_s(225));  // the other 9 links, to the switch
  const NodeTemplate own = parse_nccl_topology_xml(
      base(), replace(kNcclXml, R"(target="0000:07:00.0" count="18" tclass="0x068000")", R"(target="0000:19:00.0" count="18" tclass="0x068000")"),
      "t.xml");
  EXPECT_EQ(nvlink_bandwidth(own, 1), Bandwidth::gbytes_per_s(450));  // its own bus id, an NVSwitch tclass
  const NodeTemplate self = parse_nccl_topology_xml(
      base(), replace(kNcclXml, R"(target="0000:07:00.0" count="18" tclass="0x068000")", R"(target="0000:19:00.0" count="18" tclass="0x030200")"),
      "t.xml");
  EXPECT_EQ(nvlink_bandwidth(self, 1), Bandwidth());
}

TEST(NcclTopologyXml, ZeroNicSpeedIsRejectedAtTheNet) {
  InputError e = xml_error(replace(kNcclXml, R"(name="mlx5_1" dev="1" speed="400000")",
                                   R"(name="mlx5_1" dev="1" speed="0")"));
  EXPECT_EQ(e.where().line, 36);
  EXPECT_NE(e.key().find("mlx5_1"), std::string::npos) << e.what();
}

TEST(NcclTopologyXml, BrokenXmlGivesTheLine) {
  InputError e = xml_error(replace(kNcclXml, "</gpu>\n      </pci>\n      <pci busid=\"0000:19",
                                   "\n      </pci>\n      <pci busid=\"0000:19"));
  EXPECT_GT(e.where().line, 5);
  EXPECT_NE(e.message().find("malformed XML"), std::string::npos) << e.what();
}

TEST(NcclTopologyXml, UnknownElementIsNamed) {
  InputError e = xml_error(
      replace(kNcclXml, "<pci busid=\"0000:95:00.0\"", "<fpga/><pci busid=\"0000:95:00.0\""));
  EXPECT_NE(e.message().find("unknown element <fpga>"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace dtsim::topology

namespace dtsim::topology {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(TopologyFile, BuildClusterReadsAYamlFileTheSpecNames) {
  ClusterSpec s = base();
  s.topology_file = write_temp("dtsim_topology_good.yaml", kGoodYaml);
  auto c = build_cluster(s);
  EXPECT_EQ(c->gpu_count(), 4);
  EXPECT_EQ(c->spec().topology_file, s.topology_file);
}

TEST(TopologyFile, BuildClusterReadsAnNcclXmlPerNode) {
  ClusterSpec s = base();
  s.nodes = 2;
  s.fabric.kind = FabricKind::single_switch;
  s.topology_file = write_temp("dtsim_topology_node.xml", kNcclXml);
  auto c = build_cluster(s);
  EXPECT_EQ(c->gpu_count(), 8);
  EXPECT_EQ(summarize(*c).nics, 4);
}

TEST(TopologyFile, MissingFileIsAnInputErrorNamingIt) {
  ClusterSpec s = base();
  s.topology_file = "/nonexistent/cluster.yaml";
  try {
    build_cluster(s);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "/nonexistent/cluster.yaml");
  }
}

}  // namespace
}  // namespace dtsim::topology

namespace dtsim::topology {
namespace {

// GPUs cabled straight to a switch, no NICs and nothing inside a node joining them.
const char* kGpusOnASwitch = R"(devices:
  - {name: a/gpu0, kind: gpu, node: 0}
  - {name: a/gpu1, kind: gpu, node: 0}
  - {name: b/gpu0, kind: gpu, node: 1}
  - {name: b/gpu1, kind: gpu, node: 1}
  - {name: tor, kind: switch}
links:
  - {from: a/gpu0, to: tor, bandwidth: 100Gbps, latency: 1us}
  - {from: a/gpu1, to: tor, bandwidth: 100Gbps, latency: 1us}
  - {from: b/gpu0, to: tor, bandwidth: 100Gbps, latency: 1us}
  - {from: b/gpu1, to: tor, bandwidth: 100Gbps, latency: 1us}
)";

TEST(TopologyYaml, GpusWiredStraightToTheFabricRouteThroughIt) {
  auto c = parse_topology_yaml(base(), kGpusOnASwitch, "tor.yaml");
  EXPECT_EQ(c->route(0, 3).size(), 2u);  // across nodes
  EXPECT_EQ(c->route(0, 1).size(), 2u);  // within a node, out and back in
  EXPECT_EQ(c->device(c->link(c->route(0, 1)[0]).to).name, "tor");
}

}  // namespace
}  // namespace dtsim::topology

namespace dtsim::topology {
namespace {

// Routes inside a node are cached by the node's shape (device kinds, internal links and their
// costs); nodes that differ only in a link's bandwidth must not share them.
TEST(TopologyYaml, NodesThatDifferInsideRouteByTheirOwnLinks) {
  std::string yaml = kGoodYaml;
  yaml = replace(yaml, "{from: n1/gpu0, to: n1/nvs, bandwidth: 450GB/s", "{from: n1/gpu0, to: n1/nvs, bandwidth: 10GB/s");
  yaml = replace(yaml, "{from: n1/gpu1, to: n1/nvs, bandwidth: 450GB/s", "{from: n1/gpu1, to: n1/nvs, bandwidth: 10GB/s");
  auto c = parse_topology_yaml(base(), yaml, "mixed.yaml");
  for (int pass = 0; pass < 2; ++pass) {  // the second pass reads the cached tables
    const auto inside0 = c->route(0, 1);
    ASSERT_EQ(inside0.size(), 2u);
    EXPECT_EQ(c->device(c->link(inside0[0]).to).name, "n0/nvs");
    const auto inside1 = c->route(2, 3);
    ASSERT_EQ(inside1.size(), 2u);
    EXPECT_EQ(c->device(c->link(inside1[0]).to).name, "n1/nic0");  // 2 x 50 GB/s beats 2 x 10
  }
  // The same file with both nodes alike routes both through their switch.
  auto alike = parse_topology_yaml(base(), kGoodYaml, "good.yaml");
  EXPECT_EQ(alike->device(alike->link(alike->route(2, 3)[0]).to).name, "n1/nvs");
}

}  // namespace
}  // namespace dtsim::topology
