// The scenario loader: SCENARIO.md's keys load into the typed Scenario with presets applied first
// and the file's keys on top; every mistake is an InputError naming where and what.
#include "config/loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sim/error.h"
#include "topology/catalog.h"
#include "workloads/model_catalog.h"

namespace dtsim::config {
namespace {

Scenario load(std::string_view yaml, const std::vector<Override>& overrides = {}) {
  return load_scenario_text(yaml, "test/example.yaml", overrides);
}

// The message of the InputError that loading `yaml` throws ("" when it loads).
std::string error_of(std::string_view yaml, const std::vector<Override>& overrides = {}) {
  try {
    load(yaml, overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Loader, NvlinkDomainThatDoesNotTileTheNodesIsAnErrorNamingIt) {
  EXPECT_NE(error_of("cluster:\n  node: hgx-h100\n  scale_up: {domain_gpus: 4}\n")
                .find("cluster.scale_up.domain_gpus: an NVLink domain of 4 GPUs does not fit nodes of 8"),
            std::string::npos);
  EXPECT_NE(error_of("cluster: {node: gb200-nvl72, nodes: 20, gpus_per_node: 4, scale_up: {domain_gpus: 72}}\n")
                .find("20 nodes leave the last one partial: use a multiple of 18"),
            std::string::npos);
  const Scenario s = load("cluster: {node: gb200-nvl72, nodes: 36, gpus_per_node: 4, nic: {count: 4}, scale_up: {domain_gpus: 72}}\n");
  EXPECT_EQ(s.cluster.nodes_per_domain(), 18);
}

// A fabric too small for the cluster is refused at load, whatever the network model: the
// analytical model never builds the graph, and had priced a 2-tier fat-tree of radix 2 holding
// 16 NIC ports without a word while flows and --describe refused it.
TEST(Loader, FabricTooSmallForTheNicsIsAnErrorOnEveryModel) {
  EXPECT_EQ(error_of("cluster:\n  nodes: 64\n  fabric:\n    kind: fat-tree\n    radix: 8\nnetwork: {model: analytical}\n"),
            "test/example.yaml:5:12: cluster.fabric.radix: a 2-tier fat-tree of radix 8 holds at most 32 NIC ports; "
            "512 needed (64 nodes x 8 NICs): use radix >= 32");
  EXPECT_NE(error_of("cluster: {nodes: 16, fabric: {kind: single-switch}}\n")
                .find("cluster.fabric.radix: a single switch of radix 64 holds at most 64 NIC ports; 128 needed"),
            std::string::npos);
  EXPECT_NE(error_of("cluster: {nodes: 4, fabric: {kind: rail-optimized, tiers: 1}}\n")
                .find("cluster.fabric.tiers: a rail-optimized fabric needs tiers >= 2"),
            std::string::npos);
  EXPECT_EQ(error_of("cluster: {nodes: 64, fabric: {kind: fat-tree, radix: 32}}\n"), "");
}

TEST(Loader, FlowCompletionWindowDefaultsToANanosecondAndStaysShort) {
  EXPECT_EQ(load("seed: 1\n").network.flow.completion_window, Time::ns(1));
  EXPECT_EQ(load("network: {flow: {completion_window: 0ns}}\n").network.flow.completion_window, Time::zero());
  EXPECT_NE(error_of("network: {flow: {completion_window: 5us}}\n")
                .find("network.flow.completion_window: expected at most 1us"),
            std::string::npos);
  EXPECT_NE(error_of("network: {flow: {window: 1ns}}\n").find("network.flow.window"), std::string::npos);
}

TEST(Loader, FlowCompletionPrecisionDefaultsToOffAndStaysSmall) {
  EXPECT_EQ(load("seed: 1\n").network.flow.completion_precision, 0.0);
  EXPECT_EQ(load("network: {flow: {completion_precision: 1e-4}}\n").network.flow.completion_precision, 1e-4);
  EXPECT_NE(error_of("network: {flow: {completion_precision: 0.5}}\n").find("network.flow.completion_precision"),
            std::string::npos);
}

// A preset chosen by --set under keys the file spells out keeps the file's figures (keys win over
// presets); the loader says so in one line, naming the keys that differ from the preset's and
// where the file sets them. Nothing is said when the file chose the preset itself, or when its
// keys agree with the new preset.
TEST(Loader, PresetChosenBySetUnderTheFilesOwnKeysIsNoted) {
  const std::string file =
      "cluster:\n  node: hgx-h100\n  nodes: 2\n  gpu: h100-sxm\n  gpus_per_node: 8\n"
      "  nic: {kind: infiniband, count: 8, bandwidth: 400Gbps}\n";
  const Scenario a100 = load(file, {{"cluster.node", "hgx-a100"}});
  ASSERT_EQ(a100.notes.size(), 1u);
  EXPECT_EQ(a100.notes[0],
            "--set cluster.node=hgx-a100: the file's cluster.gpu, cluster.nic (test/example.yaml:4) still override "
            "the hgx-a100 preset; --set them too, or leave them out of the file");
  EXPECT_EQ(a100.cluster.gpu.name, "h100-sxm");  // the file's keys still win
  EXPECT_TRUE(load(file, {{"cluster.node", "hgx-h100"}}).notes.empty());
  EXPECT_TRUE(
      load(file, {{"cluster.node", "hgx-a100"}, {"cluster.gpu", "a100-sxm-80g"}, {"cluster.nic.bandwidth", "200Gbps"}})
          .notes.empty());
  EXPECT_TRUE(load("cluster: {node: hgx-a100, gpu: h100-sxm}\n").notes.empty());
}

// A SHARP fabric leaves CollNet off, as NCCL does without NCCL_COLLNET_ENABLE=1, and says so once;
// collectives.collnet turns it on and silences the note.
TEST(Loader, SharpWithoutCollnetSaysCollnetStaysOff) {
  const Scenario off = load("cluster: {fabric: {sharp: true}}\n");
  EXPECT_FALSE(off.collectives.collnet);
  ASSERT_EQ(off.notes.size(), 1u);
  EXPECT_NE(off.notes[0].find("set collectives.collnet: true"), std::string::npos) << off.notes[0];
  const Scenario on = load("cluster: {fabric: {sharp: true}}\ncollectives: {collnet: true}\n");
  EXPECT_TRUE(on.collectives.collnet);
  EXPECT_TRUE(on.notes.empty());
  EXPECT_TRUE(load_scenario_text(dump_scenario(on), "again.yaml").collectives.collnet);
}

TEST(Loader, NameDefaultsToTheFileStem) {
  EXPECT_EQ(load("seed: 3\n").name, "example");
}

TEST(Loader, OutputDirDefaultsToOutSlashName) {
  EXPECT_EQ(load("name: abc\n").output.dir, "out/abc");
}

TEST(Loader, ExplicitNameAndSeedAreKept) {
  Scenario s = load("name: h100-2node\nseed: 42\n");
  EXPECT_EQ(s.name, "h100-2node");
  EXPECT_EQ(s.seed, 42u);
}

TEST(Loader, NodePresetCopiesTheWholeClusterSpec) {
  Scenario s = load("cluster: {node: gb200-nvl72, nodes: 1}\n");
  const topology::ClusterSpec& preset = *topology::find_node_preset("gb200-nvl72");
  EXPECT_EQ(s.cluster.node_preset, "gb200-nvl72");
  EXPECT_EQ(s.cluster.gpus_per_node, 72);
  EXPECT_EQ(s.cluster.gpu.name, "gb200");
  EXPECT_EQ(s.cluster.scale_up.domain_gpus, 72);
  EXPECT_EQ(s.cluster.scale_up.bandwidth, preset.scale_up.bandwidth);
  EXPECT_EQ(s.cluster.nic.count, preset.nic.count);
}

TEST(Loader, FileKeysOverrideSingleFieldsOfTheNodePreset) {
  Scenario s = load("cluster:\n  node: hgx-a100\n  nic: {bandwidth: 100Gbps}\n");
  const topology::ClusterSpec& preset = *topology::find_node_preset("hgx-a100");
  EXPECT_EQ(s.cluster.nic.bandwidth, Bandwidth::gbps(100));
  EXPECT_EQ(s.cluster.nic.count, preset.nic.count);
  EXPECT_EQ(s.cluster.nic.latency, preset.nic.latency);
  EXPECT_EQ(s.cluster.gpu.name, "a100-sxm-80g");
}

TEST(Loader, GpuPresetReplacesTheNodesGpu) {
  Scenario s = load("cluster: {node: hgx-h100, gpu: h200-sxm}\n");
  EXPECT_EQ(s.cluster.gpu.name, "h200-sxm");
  EXPECT_EQ(s.cluster.gpu.hbm_capacity, topology::find_gpu_preset("h200-sxm")->hbm_capacity);
}

TEST(Loader, GpuMapRefinesItsPreset) {
  Scenario s = load("cluster:\n  gpu: {preset: h100-sxm, hbm_capacity: 96GB, peak_flops: {bf16: 1000TFLOPS}}\n");
  EXPECT_EQ(s.cluster.gpu.hbm_capacity, Bytes(96'000'000'000));
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops.at(topology::Dtype::bf16), 1000e12);
  EXPECT_EQ(s.cluster.gpu.hbm_bandwidth, topology::find_gpu_preset("h100-sxm")->hbm_bandwidth);
}

TEST(Loader, BridgeSwitchedOntoAnNvswitchPresetTakesTheGpusOwnNvlinkFigure) {
  // A pair of H100 PCIe on bridges runs at the card's bridged figure, not at HGX H100's switch.
  Scenario s = load("cluster: {node: hgx-h100, gpu: h100-pcie, gpus_per_node: 2, scale_up: {kind: nvlink-bridge}}\n");
  EXPECT_EQ(s.cluster.scale_up.bandwidth, topology::find_gpu_preset("h100-pcie")->nvlink_bandwidth);
  // The bridged preset follows a GPU swapped into it; a stated bandwidth always wins.
  EXPECT_EQ(load("cluster: {node: pcie-h100-nvlink, gpu: a100-pcie-80g}\n").cluster.scale_up.bandwidth,
            Bandwidth::gbytes_per_s(300));
  EXPECT_EQ(load("cluster: {node: hgx-h100, scale_up: {kind: nvlink-bridge, bandwidth: 56GB/s}}\n")
                .cluster.scale_up.bandwidth,
            Bandwidth::gbytes_per_s(56));
}

TEST(Loader, EverySpelledValueOfScenarioMdIsAccepted) {
  Scenario s = load(R"(
cluster:
  scale_up: {kind: nvlink-bridge}
  nic: {kind: roce}
  fabric: {kind: rail-optimized}
network: {model: packet}
collectives: {algorithm: nvls_tree, protocol: ll128, channels: 4}
workload: {kind: collective-sweep, collective: reduce_scatter, dtype: float32}
)");
  EXPECT_EQ(s.cluster.scale_up.kind, topology::ScaleUpKind::nvlink_bridge);
  EXPECT_EQ(s.cluster.nic.kind, topology::NicKind::roce);
  EXPECT_EQ(s.cluster.fabric.kind, topology::FabricKind::rail_optimized);
  EXPECT_EQ(s.network.model, NetworkModelKind::packet);
  EXPECT_EQ(s.collectives.algorithm, collectives::Algorithm::nvls_tree);
  EXPECT_EQ(s.collectives.protocol, collectives::Protocol::ll128);
  EXPECT_EQ(s.collectives.channels, 4);
  EXPECT_EQ(s.workload.sweep.collective, collectives::CollectiveKind::reduce_scatter);
  EXPECT_EQ(s.workload.sweep.dtype, topology::Dtype::fp32);
}

TEST(Loader, AutoLeavesCollectiveChoicesToTheTuner) {
  Scenario s = load("collectives: {algorithm: auto, protocol: auto, channels: auto}\n");
  EXPECT_FALSE(s.collectives.algorithm.has_value());
  EXPECT_FALSE(s.collectives.protocol.has_value());
  EXPECT_EQ(s.collectives.channels, 0);
}

// NCCL_ALGO / NCCL_PROTO syntax: a list (YAML or comma-separated, NCCL's spellings too) narrows
// what auto chooses from, a leading ^ takes names away, one name alone forces it.
TEST(Loader, AlgorithmAndProtocolListsReadAsNcclReadsItsEnvironment) {
  using collectives::Algorithm;
  using collectives::Protocol;
  Scenario s = load("collectives: {algorithm: [ring, tree], protocol: \"^LL128\"}\n");
  EXPECT_FALSE(s.collectives.algorithm.has_value());
  EXPECT_EQ(s.collectives.algorithms, (std::vector<Algorithm>{Algorithm::ring, Algorithm::tree}));
  EXPECT_EQ(s.collectives.protocols, (std::vector<Protocol>{Protocol::ll, Protocol::simple}));
  s = load("collectives: {algorithm: \"Ring,NVLSTree\", protocol: Simple}\n");
  EXPECT_EQ(s.collectives.algorithms,
            (std::vector<Algorithm>{Algorithm::ring, Algorithm::nvls_tree}));
  EXPECT_EQ(s.collectives.protocol, Protocol::simple);
  s = load("collectives: {algorithm: [tree]}\n");
  EXPECT_EQ(s.collectives.algorithm, Algorithm::tree);
  EXPECT_TRUE(s.collectives.algorithms.empty());
  EXPECT_NE(error_of("collectives: {algorithm: \"ring,treee\"}\n").find("did you mean 'tree'"),
            std::string::npos);
  EXPECT_NE(error_of("collectives: {protocol: \"^ll,ll128,simple\"}\n")
                .find("collectives.protocol: excludes every"),
            std::string::npos);
}

TEST(Loader, UnitsParseIntoValueTypes) {
  Scenario s = load(R"(
cluster:
  scale_up: {bandwidth: 450GB/s, latency: 1us}
  nic: {bandwidth: 400Gbps, latency: 2us, message_overhead: 300ns}
workload: {min_bytes: 1KiB, max_bytes: 8GiB}
network: {packet: {mtu: 4096, buffer_per_port: 32MiB}}
)");
  EXPECT_EQ(s.cluster.scale_up.bandwidth, Bandwidth::gbytes_per_s(450));
  EXPECT_EQ(s.cluster.scale_up.latency, Time::us(1));
  EXPECT_EQ(s.cluster.nic.bandwidth, Bandwidth::gbps(400));
  EXPECT_EQ(s.cluster.nic.message_overhead, Time::ns(300));
  EXPECT_EQ(s.workload.sweep.min_bytes, Bytes(1024));
  EXPECT_EQ(s.workload.sweep.max_bytes, Bytes::gib(8));
  EXPECT_EQ(s.network.packet.mtu, Bytes(4096));
  EXPECT_EQ(s.network.packet.buffer_per_port, Bytes::mib(32));
}

TEST(Loader, PacketFlowControlIsCreditsUnlessPfcIsAsked) {
  EXPECT_EQ(load("network: {model: packet}\n").network.packet.flow_control, network::FlowControl::credits);
  EXPECT_EQ(load("network: {packet: {flow_control: pfc}}\n").network.packet.flow_control, network::FlowControl::pfc);
  EXPECT_EQ(load("network: {packet: {flow_control: lossy}}\n").network.packet.flow_control,
            network::FlowControl::lossy);
  EXPECT_NE(error_of("network: {packet: {flow_control: pause}}\n").find("network.packet.flow_control"),
            std::string::npos);
  EXPECT_EQ(load("network: {packet: {retransmit_timeout: 20us}}\n").network.packet.retransmit_timeout, Time::us(20));
  EXPECT_NE(error_of("network: {packet: {retransmit_timeout: 0us}}\n").find("network.packet.retransmit_timeout"),
            std::string::npos);
}

TEST(Loader, SwitchBuffersAreDedicatedUnlessSharedIsAsked) {
  const Scenario plain = load("network: {model: packet}\n");
  EXPECT_EQ(plain.network.packet.switch_buffer, network::SwitchBuffer::dedicated);
  const Scenario shared =
      load("network: {packet: {switch_buffer: shared, shared_buffer: 16MiB, dt_alpha: 0.5}}\n");
  EXPECT_EQ(shared.network.packet.switch_buffer, network::SwitchBuffer::shared);
  EXPECT_EQ(shared.network.packet.shared_buffer, Bytes::mib(16));
  EXPECT_EQ(shared.network.packet.dt_alpha, 0.5);
  for (const char* wrong : {"network: {packet: {switch_buffer: pooled}}\n", "network: {packet: {dt_alpha: 0}}\n",
                            "network: {packet: {shared_buffer: 1KiB}}\n", "network: {packet: {shared_buffer: 4GiB}}\n"}) {
    const std::string line = error_of(wrong);
    EXPECT_NE(line.find("network.packet."), std::string::npos) << wrong << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  }
}

TEST(Loader, PortSamplingIsOffUnlessGivenAnInterval) {
  EXPECT_EQ(load("network: {model: packet}\n").network.packet.sample_interval, Time::zero());
  EXPECT_EQ(load("network: {packet: {sample_interval: 1us}}\n").network.packet.sample_interval, Time::us(1));
  EXPECT_EQ(load("network: {packet: {sample_interval: 0s}}\n").network.packet.sample_interval, Time::zero());
  EXPECT_NE(error_of("network: {packet: {sample_interval: -1us}}\n").find("network.packet.sample_interval"),
            std::string::npos);
}

TEST(Loader, FabricLinkFollowsTheNicBandwidthUnlessGiven) {
  EXPECT_EQ(load("cluster: {nic: {bandwidth: 200Gbps}}\n").cluster.fabric.link.bandwidth, Bandwidth::gbps(200));
  EXPECT_EQ(load("cluster: {nic: {bandwidth: 200Gbps}, fabric: {link: {bandwidth: 800Gbps}}}\n")
                .cluster.fabric.link.bandwidth,
            Bandwidth::gbps(800));
}

TEST(Loader, WholeNodeNvlinkDomainFollowsGpusPerNode) {
  EXPECT_EQ(load("cluster: {node: hgx-h100, gpus_per_node: 4}\n").cluster.scale_up.domain_gpus, 4);
  EXPECT_EQ(load("cluster: {node: pcie-server, gpus_per_node: 4}\n").cluster.scale_up.domain_gpus, 1);
}

// A folder of its own for files a test writes, and a writer.
std::filesystem::path temp_dir(const char* name) {
  const auto dir = std::filesystem::temp_directory_path() / ("dtsim_loader_" + std::to_string(::getpid())) / name;
  std::filesystem::create_directories(dir);
  return dir;
}
void write_file(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// One node of NCCL's XML: 2 GPUs on PCIe only (no NVLink) and one 100 Gb/s NIC.
constexpr std::string_view kSmallNode = R"(<system version="1">
  <cpu numaid="0" arch="x86_64" vendor="AuthenticAMD" familyid="25" modelid="1">
    <pci busid="0000:01:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="90"/></pci>
    <pci busid="0000:02:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev="1" sm="90"/></pci>
    <pci busid="0000:03:00.0" class="0x020700" link_speed="16.0 GT/s PCIe" link_width="16">
      <nic><net name="mlx5_0" dev="0" speed="100000" port="1"/></nic>
    </pci>
  </cpu>
</system>
)";

TEST(Loader, TopologyFileAndCalibrationAcceptNull) {
  Scenario s = load("cluster: {topology_file: null}\ncalibration: null\n");
  EXPECT_FALSE(s.cluster.topology_file.has_value());
  EXPECT_FALSE(s.calibration.has_value());
  const auto dir = temp_dir("null");
  write_file(dir / "topo.xml", kSmallNode);
  Scenario t = load_scenario_text("cluster: {topology_file: topo.xml}\ncalibration: cal.yaml\n",
                                  (dir / "example.yaml").string());
  EXPECT_EQ(t.cluster.topology_file, (dir / "topo.xml").lexically_normal().string());
  EXPECT_EQ(t.calibration, "cal.yaml");
}

// The closed form never builds the graph that reads the file, so the loader takes the file's
// figures into the spec: one 100 Gb/s NIC and PCIe between GPUs, not the preset's eight 400 Gb/s
// NICs and NVSwitch. The note says what was taken, and over what.
TEST(Loader, TopologyFileFiguresReplaceThePresetsAndSaySo) {
  const auto dir = temp_dir("facts");
  write_file(dir / "topo" / "node.xml", kSmallNode);
  const Scenario s = load_scenario_text("cluster: {node: hgx-h100, nodes: 2, topology_file: topo/node.xml}\n",
                                        (dir / "s.yaml").string());
  EXPECT_EQ(s.cluster.gpus_per_node, 2);
  EXPECT_EQ(s.cluster.nic.count, 1);
  EXPECT_EQ(s.cluster.nic.bandwidth, Bandwidth::gbps(100));
  EXPECT_EQ(s.cluster.fabric.link.bandwidth, Bandwidth::gbps(100));
  EXPECT_EQ(s.cluster.scale_up.kind, topology::ScaleUpKind::pcie);
  EXPECT_EQ(s.cluster.scale_up.domain_gpus, 2);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("took from the file cluster.gpus_per_node 2 (hgx-h100: 8), cluster.nic.count 1 (hgx-h100: 8), "
                            "cluster.nic.bandwidth 100Gbps (hgx-h100: 400Gbps), cluster.scale_up.kind pcie (hgx-h100: nvswitch)"),
            std::string::npos)
      << s.notes[0];
  // A key the scenario writes that the file contradicts is refused at that key.
  try {
    load_scenario_text("cluster: {node: hgx-h100, nodes: 2, nic: {count: 8}, topology_file: topo/node.xml}\n",
                       (dir / "s.yaml").string());
    FAIL() << "a contradicting nic.count was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "cluster.nic.count");
    EXPECT_NE(e.message().find("the scenario says 8 but the topology file"), std::string::npos) << e.what();
  }
  // A file that is not there is one line at the key, whichever model runs.
  try {
    load_scenario_text("cluster: {topology_file: nowhere.xml}\n", (dir / "s.yaml").string());
    FAIL() << "a missing topology file was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "cluster.topology_file");
    EXPECT_NE(e.message().find("cannot open the file"), std::string::npos) << e.what();
  }
}

// 288 HGX nodes are 2,304 NIC ports, more than the default 2-tier fat-tree of radix 64 holds
// (2,048): without a tiers key the fabric grows a tier and says so; with one it is refused.
TEST(Loader, DefaultFatTreeGrowsATierToHoldTheCluster) {
  const Scenario s = load("cluster: {node: hgx-h100, nodes: 288}\n");
  EXPECT_EQ(s.cluster.fabric.tiers, 3);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("2304 NIC ports outgrow a 2-tier fat-tree of radix 64 (2048 ports): built with 3 tiers"),
            std::string::npos)
      << s.notes[0];
  EXPECT_EQ(load("cluster: {node: hgx-h100, nodes: 256}\n").cluster.fabric.tiers, 2);
  EXPECT_NE(error_of("cluster: {node: hgx-h100, nodes: 288, fabric: {tiers: 2}}\n").find("holds at most 2048 NIC ports"),
            std::string::npos);
}

// A whole-graph YAML file says how many nodes there are; a scenario that says otherwise is refused.
TEST(Loader, WholeGraphTopologyFileAndScenarioMustAgreeOnTheNodes) {
  const auto dir = temp_dir("graph");
  write_file(dir / "two.yaml", R"(devices:
  - {name: n0/gpu0, kind: gpu, node: 0}
  - {name: n0/nic0, kind: nic, node: 0}
  - {name: n1/gpu0, kind: gpu, node: 1}
  - {name: n1/nic0, kind: nic, node: 1}
  - {name: sw0, kind: switch}
links:
  - {from: n0/gpu0, to: n0/nic0, bandwidth: 50GB/s, latency: 1us}
  - {from: n1/gpu0, to: n1/nic0, bandwidth: 50GB/s, latency: 1us}
  - {from: n0/nic0, to: sw0, bandwidth: 200Gbps, latency: 500ns}
  - {from: n1/nic0, to: sw0, bandwidth: 200Gbps, latency: 500ns}
)");
  const Scenario s = load_scenario_text("cluster: {topology_file: two.yaml}\n", (dir / "s.yaml").string());
  EXPECT_EQ(s.cluster.nodes, 2);
  EXPECT_EQ(s.cluster.gpus_per_node, 1);
  EXPECT_EQ(s.cluster.nic.bandwidth, Bandwidth::gbps(200));
  try {
    load_scenario_text("cluster: {nodes: 16, topology_file: two.yaml}\n", (dir / "s.yaml").string());
    FAIL() << "16 nodes over a file of 2 was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "cluster.nodes");
    EXPECT_NE(e.message().find("the scenario says 16 but the topology file"), std::string::npos) << e.what();
  }
}

TEST(Loader, TrainingModelPresetThenFieldOverrides) {
  Scenario s = load(R"(
cluster: {nodes: 8}
workload:
  kind: training
  model: {preset: llama3-8b, layers: 16}
  parallel: {tp: 8, pp: 2, dp: 4, ep: 1, cp: 1, vp: 1, sequence_parallel: false, zero: 3}
  batch: {global: 256, micro: 2}
  precision: fp8
  iterations: 3
)");
  const auto& t = s.workload.training;
  EXPECT_EQ(s.workload.kind, workloads::WorkloadKind::training);
  EXPECT_EQ(t.model.preset, "llama3-8b");
  EXPECT_EQ(t.model.layers, 16);
  EXPECT_EQ(t.model.hidden, workloads::find_model_preset("llama3-8b")->hidden);
  EXPECT_EQ(t.parallel.tp, 8);
  EXPECT_EQ(t.parallel.pp, 2);
  EXPECT_EQ(t.parallel.dp, 4);
  EXPECT_FALSE(t.parallel.sequence_parallel);
  EXPECT_EQ(t.parallel.zero, 3);
  EXPECT_EQ(t.batch.global, 256);
  EXPECT_EQ(t.batch.micro, 2);
  EXPECT_EQ(t.precision, topology::Dtype::fp8);
  EXPECT_EQ(t.iterations, 3);
}

TEST(Loader, DataParallelIsDerivedFromTheGpuCountWhenNotGiven) {
  Scenario s = load("cluster: {nodes: 8}\nworkload: {kind: training, model: llama3-8b, parallel: {tp: 8, pp: 2}}\n");
  EXPECT_EQ(s.workload.training.parallel.dp, 4);
}

TEST(Loader, ActivationRecomputeIsNoneSelectiveOrFullAndBooleansStillRead) {
  auto recompute = [](const std::string& value) {
    return load("workload: {kind: training, model: llama3-8b, activation_recompute: " + value + "}\n")
        .workload.training.activation_recompute;
  };
  EXPECT_EQ(recompute("selective"), workloads::Recompute::selective);
  EXPECT_EQ(recompute("full"), workloads::Recompute::full);
  EXPECT_EQ(recompute("none"), workloads::Recompute::none);
  EXPECT_EQ(recompute("true"), workloads::Recompute::full);
  EXPECT_EQ(recompute("false"), workloads::Recompute::none);
  EXPECT_EQ(recompute("op"), workloads::Recompute::every_other_matmul);
  try {
    recompute("selectve");
    ADD_FAILURE() << "a misspelt value was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("selective"), std::string::npos) << e.what();
  }
}

TEST(Loader, AttentionKernelAndFp8CastsRead) {
  auto load_training = [](const std::string& extra) {
    return load("workload: {kind: training, model: llama3-8b, " + extra + "}\n").workload.training;
  };
  EXPECT_EQ(load_training("precision: bf16").attention, workloads::Attention::flash3);  // the default
  EXPECT_EQ(load_training("attention: cudnn").attention, workloads::Attention::flash3);
  EXPECT_EQ(load_training("attention: flash2").attention, workloads::Attention::flash2);
  EXPECT_EQ(load_training("attention: triton").attention, workloads::Attention::flash1);
  EXPECT_EQ(load_training("attention: unfused").attention, workloads::Attention::unfused);
  EXPECT_TRUE(load_training("precision: fp8").fp8_fused_casts);
  EXPECT_FALSE(load_training("fp8_fused_casts: false").fp8_fused_casts);
  const std::string message = error_of("workload: {kind: training, model: llama3-8b, attention: flsh2}\n");
  EXPECT_NE(message.find("flash2"), std::string::npos) << message;
}

TEST(Loader, DcqcnSettingsAreReadAndChecked) {
  const Scenario s = load(
      "network:\n  packet:\n    dcqcn: {kmin: 10KB, kmax: 1MB, pmax: 0.2, byte_counter: 32KiB, fast_recovery: 1,\n"
      "            additive_increase: 5Mbps, increase_period: 300us}\n");
  const network::DcqcnOptions& d = s.network.packet.dcqcn;
  EXPECT_EQ(d.kmin, Bytes(10'000));
  EXPECT_EQ(d.kmax, Bytes(1'000'000));
  EXPECT_EQ(d.pmax, 0.2);
  EXPECT_EQ(d.byte_counter, Bytes::kib(32));
  EXPECT_EQ(d.fast_recovery, 1);
  EXPECT_EQ(d.additive_increase, Bandwidth::gbps(0.005));
  EXPECT_EQ(d.increase_period, Time::us(300));
  EXPECT_EQ(d.g, 1.0 / 256);  // untouched: the paper's
  EXPECT_NE(error_of("network: {packet: {dcqcn: {kmin: 300KB}}}\n").find("expected kmax above kmin"), std::string::npos);
  EXPECT_NE(error_of("network: {packet: {dcqcn: {pmax: 2}}}\n").find("network.packet.dcqcn.pmax"), std::string::npos);
  EXPECT_NE(error_of("network: {packet: {dcqcn: {alpha_period: 0us}}}\n").find("expected a positive period"),
            std::string::npos);
}

TEST(Loader, CpuOffloadLayersAreReadAndCheckedAgainstTheLayout) {
  const Scenario s = load(
      "cluster: {nodes: 1}\nworkload: {kind: training, model: llama3-8b, parallel: {pp: 1}, cpu_offload_layers: 16}\n");
  EXPECT_EQ(s.workload.training.cpu_offload_layers, 16);
  std::string e = error_of("workload: {kind: training, model: llama3-8b, parallel: {pp: 2}, cpu_offload_layers: 4}\n");
  EXPECT_NE(e.find("cpu_offload_layers needs pp 1"), std::string::npos) << e;
  e = error_of("workload: {kind: training, model: llama3-8b, parallel: {pp: 1}, cpu_offload_layers: 32}\n");
  EXPECT_NE(e.find("at most 31"), std::string::npos) << e;
  e = error_of("workload: {kind: training, model: llama3-8b, cpu_offload_layers: -1}\n");
  EXPECT_NE(e.find("workload.cpu_offload_layers"), std::string::npos) << e;
}

TEST(Loader, LayersPerBlockIsAnIntegerOrAuto) {
  EXPECT_EQ(load("workload: {kind: training, model: llama3-8b}\n").workload.layers_per_block, 1);  // exact
  EXPECT_EQ(load("workload: {kind: training, model: llama3-8b, layers_per_block: auto}\n").workload.layers_per_block, 0);
  EXPECT_EQ(load("workload: {kind: training, model: llama3-8b, layers_per_block: 4}\n").workload.layers_per_block, 4);
  for (const char* bad : {"0", "-2", "fast", "1.5"}) {
    const std::string e =
        error_of(std::string("workload: {kind: training, model: llama3-8b, layers_per_block: ") + bad + "}\n");
    EXPECT_NE(e.find("workload.layers_per_block: expected auto or an integer >= 1"), std::string::npos) << e;
  }
}

TEST(Loader, BackgroundReplicasNeedSharedLinksAndAJobSize) {
  const std::string job = "workload: {kind: training, model: llama3-8b, parallel: {tp: 8, dp: 1}}\n";
  EXPECT_EQ(load(job).network.background, Background::none);
  EXPECT_EQ(load("network: {model: flow, background: replicas}\n" + job).network.background, Background::replicas);
  EXPECT_EQ(load("network: {model: packet, background: replicas}\nworkload: {kind: collective-sweep, ranks: 8}\n")
                .network.background,
            Background::replicas);
  EXPECT_EQ(error_of("network: {model: flow, background: busy}\n" + job),
            "test/example.yaml:1:36: network.background: expected one of none or replicas, got \"busy\"");
  EXPECT_EQ(error_of("network: {background: replicas}\n" + job),
            "test/example.yaml:1:23: network.background: replicas needs network.model: flow or packet (the "
            "analytical model prices each collective alone, with no links to share)");
  const std::string e =
      error_of("network: {model: flow, background: replicas}\nworkload: {kind: trace, format: chakra, path: t/rank}\n");
  EXPECT_NE(e.find("network.background: replicas needs workload.kind: training or collective-sweep"), std::string::npos)
      << e;
}

TEST(Loader, ExecutionIsOnlineUnlessPricedPerCollectiveOnFlows) {
  const std::string job = "workload: {kind: training, model: llama3-8b}\n";
  EXPECT_EQ(load(job).network.execution, Execution::online);
  EXPECT_EQ(load("network: {model: flow, execution: per_collective}\n" + job).network.execution,
            Execution::per_collective);
  EXPECT_EQ(error_of("network: {model: flow, execution: batch}\n" + job),
            "test/example.yaml:1:35: network.execution: expected one of online or per_collective, got \"batch\"");
  EXPECT_NE(error_of("network: {model: packet, execution: per_collective}\n" + job)
                .find("network.execution: per_collective prices each collective alone on flows"),
            std::string::npos);
}

TEST(Loader, CustomModelWithoutPreset) {
  Scenario s = load("workload: {kind: training, model: {layers: 2, hidden: 512, heads: 8}}\n");
  EXPECT_TRUE(s.workload.training.model.preset.empty());
  EXPECT_EQ(s.workload.training.model.hidden, 512);
}

TEST(Loader, TraceWorkload) {
  Scenario s = load("workload: {kind: trace, format: chakra, path: traces/rank}\n");
  EXPECT_EQ(s.workload.kind, workloads::WorkloadKind::trace);
  EXPECT_EQ(s.workload.trace.path, "traces/rank");
}

TEST(Loader, OutputFormatsList) {
  Scenario s = load("output: {formats: [csv, json, trace, html]}\n");
  EXPECT_EQ(s.output.formats, (std::vector<std::string>{"csv", "json", "trace", "html"}));
}

TEST(Loader, ErrorNamesFileLineColumnKeyAndExpectation) {
  EXPECT_EQ(error_of("cluster:\n  nic:\n    bandwidth: 400\n"),
            "test/example.yaml:3:16: cluster.nic.bandwidth: expected a bandwidth with a unit (Mbps, Gbps, "
            "Tbps, MB/s, GB/s, TB/s), like 400Gbps, got \"400\"");
}

TEST(Loader, UnknownKeySuggestsTheClosestValidKey) {
  std::string e = error_of("cluster:\n  nic:\n    bandwith: 400Gbps\n");
  EXPECT_NE(e.find("test/example.yaml:3:5: cluster.nic.bandwith: unknown key; did you mean 'bandwidth'?"),
            std::string::npos)
      << e;
}

TEST(Loader, EnumErrorsListTheCanonicalNamesOnce) {
  std::string e = error_of("workload: {collective: allreduc}\n");
  EXPECT_NE(
      e.find(
          "expected one of all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, "
          "send_recv, gather, scatter or hypercube, got \"allreduc\""),
      std::string::npos)
      << e;
}

TEST(Loader, FabricRoutingReadsEachValueAndDefaultsToAuto) {
  auto routing = [](const std::string& value) {
    return load("cluster: {fabric: {routing: " + value + "}}\n").cluster.fabric.routing;
  };
  EXPECT_EQ(routing("ecmp"), topology::Routing::ecmp);
  EXPECT_EQ(routing("adaptive"), topology::Routing::adaptive);
  EXPECT_EQ(routing("auto"), topology::Routing::automatic);
  EXPECT_EQ(load("seed: 1\n").cluster.fabric.routing, topology::Routing::automatic);
  // auto sprays on EFA only.
  EXPECT_FALSE(load("seed: 1\n").cluster.adaptive_routing());
  EXPECT_TRUE(load("cluster: {nic: {kind: efa}}\n").cluster.adaptive_routing());
  EXPECT_FALSE(load("cluster: {nic: {kind: efa}, fabric: {routing: ecmp}}\n").cluster.adaptive_routing());
  EXPECT_TRUE(load("cluster: {nic: {kind: roce}, fabric: {routing: adaptive}}\n").cluster.adaptive_routing());
}

TEST(Loader, WrongFabricRoutingNamesTheKey) {
  EXPECT_EQ(error_of("cluster:\n  fabric:\n    routing: spray\n"),
            "test/example.yaml:3:14: cluster.fabric.routing: expected one of ecmp, adaptive or auto, got \"spray\"");
}

// V100 has no BF16 tensor cores: a BF16 run on it is refused at workload.precision, naming the
// GPU and the fix; FP16 loads.
TEST(Loader, Bf16OnAGpuWithoutBf16IsAnErrorNamingThePrecision) {
  const std::string v100 = "cluster: {node: dgx1-v100, nodes: 1}\n";
  const std::string message = error_of(
      v100 + "workload: {kind: training, model: llama3-8b, precision: bf16, parallel: {tp: 8}}\n");
  EXPECT_NE(message.find("workload.precision"), std::string::npos) << message;
  EXPECT_NE(message.find("v100-sxm-32g"), std::string::npos) << message;
  EXPECT_NE(message.find("use fp16"), std::string::npos) << message;
  EXPECT_EQ(
      load(v100 +
           "workload: {kind: training, model: llama3-8b, precision: fp16, parallel: {tp: 8}}\n")
          .workload.training.precision,
      topology::Dtype::fp16);
}

// The busiest of ep ranks gets at most every token: ep times the balanced share.
TEST(Loader, MoeImbalanceBeyondTheExpertGroupIsAnErrorNamingIt) {
  const std::string head =
      "cluster: {node: hgx-h100, nodes: 1}\nworkload: {kind: training, model: mixtral-8x7b, ";
  const std::string message = error_of(head + "parallel: {tp: 1, ep: 4}, moe_imbalance: 6}\n");
  EXPECT_NE(message.find("workload.moe_imbalance: 6 exceeds ep = 4"), std::string::npos) << message;
  EXPECT_NE(error_of(head + "moe_imbalance: 0.9}\n").find("workload.moe_imbalance"),
            std::string::npos);
  EXPECT_EQ(load(head + "parallel: {tp: 1, ep: 4}, moe_imbalance: 1.25}\n")
                .workload.training.moe_imbalance,
            1.25);
}

// nccl-tests -g N drives N GPUs of one host from one thread: no more than a node has.
TEST(Loader, GpusPerThreadBeyondTheNodeIsAnErrorNamingIt) {
  const std::string head =
      "cluster: {node: hgx-h100, nodes: 2}\nworkload: {kind: collective-sweep, ";
  const std::string message = error_of(head + "gpus_per_thread: 16}\n");
  EXPECT_NE(message.find("workload.gpus_per_thread"), std::string::npos) << message;
  EXPECT_NE(message.find("at most cluster.gpus_per_node (8), got 16"), std::string::npos)
      << message;
  EXPECT_NE(error_of(head + "gpus_per_thread: 0}\n").find("workload.gpus_per_thread"),
            std::string::npos);
  EXPECT_EQ(load(head + "gpus_per_thread: 8}\n").workload.sweep.gpus_per_thread, 8);
}

TEST(Loader, KeyWithoutValueIsAnError) {
  EXPECT_NE(error_of("cluster:\n  nodes:\n").find("cluster.nodes: expected a value"), std::string::npos);
}

TEST(Loader, InputErrorCarriesTheKeyAndPosition) {
  try {
    load("cluster:\n  nodes: -2\n");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "cluster.nodes");
    EXPECT_EQ(e.where().file, "test/example.yaml");
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.where().column, 10);
  }
}

TEST(Loader, MissingFileIsAnInputErrorNamingIt) {
  try {
    load_scenario("/nonexistent/dir/nothing.yaml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "/nonexistent/dir/nothing.yaml");
  }
}

TEST(Loader, EmptyTextIsAnInputError) {
  EXPECT_NE(error_of("").find("test/example.yaml:1:1: the scenario is empty"), std::string::npos);
}

TEST(Loader, TotalGpusBeyondTheSimulatorsRangeIsAnError) {
  EXPECT_NE(error_of("cluster: {nodes: 4000000, gpus_per_node: 8}\n").find("cluster.nodes"), std::string::npos);
}

}  // namespace
}  // namespace dtsim::config
