// dump_scenario: the resolved scenario as YAML that loads back to the same values, for every
// scenario a user can copy from scenarios/.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/loader.h"

namespace dtsim::config {
namespace {

std::vector<std::filesystem::path> example_scenarios() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(DTSIM_SOURCE_DIR) / "scenarios")) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Dump, ThereAreExampleScenarios) {
  EXPECT_GE(example_scenarios().size(), 4u);
}

TEST(Dump, EveryExampleScenarioLoads) {
  for (const auto& path : example_scenarios()) {
    EXPECT_NO_THROW(load_scenario(path.string())) << path;
  }
}

TEST(Dump, EveryExampleScenarioRoundTripsThroughDump) {
  for (const auto& path : example_scenarios()) {
    Scenario s = load_scenario(path.string());
    std::string dumped = dump_scenario(s);
    Scenario again = load_scenario_text(dumped, "dumped.yaml");
    EXPECT_EQ(dump_scenario(again), dumped) << path;
    EXPECT_EQ(again.name, s.name);
    EXPECT_EQ(again.output.dir, s.output.dir);
    EXPECT_EQ(again.cluster.nic.bandwidth, s.cluster.nic.bandwidth) << path;
    EXPECT_EQ(again.cluster.scale_up.bandwidth, s.cluster.scale_up.bandwidth) << path;
    EXPECT_EQ(again.cluster.gpu.peak_flops, s.cluster.gpu.peak_flops) << path;
    EXPECT_EQ(again.cluster.gpu.hbm_bandwidth, s.cluster.gpu.hbm_bandwidth) << path;
    EXPECT_EQ(again.workload.sweep.max_bytes, s.workload.sweep.max_bytes) << path;
    EXPECT_EQ(again.workload.training.parallel.dp, s.workload.training.parallel.dp) << path;
  }
}

TEST(Dump, UnusualValuesRoundTrip) {
  // The topology file is read at load: it must be there (any node file will do).
  const auto dir = std::filesystem::temp_directory_path() / ("dtsim_dump_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "dir with spaces");
  std::ofstream(dir / "dir with spaces" / "topo.xml")
      << R"(<system version="1"><cpu numaid="0"><pci busid="0000:01:00.0" class="0x030200"/><pci busid="0000:02:00.0" class="0x020700"/></cpu></system>)";
  const std::string odd = (dir / "odd.yaml").string();
  Scenario s = load_scenario_text(R"(
name: "yes"
cluster:
  node: pcie-server
  nic: {bandwidth: 12.5Gbps, latency: 1.234567us}
  fabric: {oversubscription: 1.5, link: {bandwidth: 3.3TB/s}, routing: adaptive}
  topology_file: "dir with spaces/topo.xml"
workload: {min_bytes: 3, max_bytes: 1000001, dtype: bf16, layers_per_block: auto}
calibration: "cal: #1.yaml"
)", odd);
  std::string dumped = dump_scenario(s);
  Scenario again = load_scenario_text(dumped, odd);
  EXPECT_EQ(dump_scenario(again), dumped);
  EXPECT_EQ(again.name, "yes");
  EXPECT_EQ(again.cluster.nic.bandwidth, Bandwidth::gbps(12.5));
  EXPECT_EQ(again.cluster.nic.latency, Time::ps(1'234'567));
  EXPECT_EQ(again.cluster.topology_file, (dir / "dir with spaces" / "topo.xml").string());
  EXPECT_EQ(again.cluster.fabric.routing, topology::Routing::adaptive);
  EXPECT_EQ(again.calibration, "cal: #1.yaml");
  EXPECT_EQ(again.workload.sweep.max_bytes, Bytes(1'000'001));
  EXPECT_EQ(again.workload.layers_per_block, 0);  // auto
}

TEST(Dump, BackgroundReplicasRoundTrip) {
  const Scenario s = load_scenario_text(
      "network: {model: flow, background: replicas, execution: per_collective}\n"
      "workload: {kind: training, model: llama3-8b, parallel: {tp: 8, dp: 1}}\n",
      "neighbours.yaml");
  const std::string dumped = dump_scenario(s);
  EXPECT_NE(dumped.find("  background: replicas\n"), std::string::npos) << dumped;
  EXPECT_NE(dumped.find("  execution: per_collective\n"), std::string::npos) << dumped;
  const Scenario again = load_scenario_text(dumped, "neighbours.yaml");
  EXPECT_EQ(again.network.background, Background::replicas);
  EXPECT_EQ(again.network.execution, Execution::per_collective);
}

TEST(Dump, SharedSwitchBufferRoundTripsAndDedicatedIsNotWritten) {
  EXPECT_EQ(dump_scenario(load_scenario_text("network: {model: packet}\n", "d.yaml")).find("switch_buffer"),
            std::string::npos);
  const Scenario s = load_scenario_text(
      "network: {model: packet, packet: {switch_buffer: shared, shared_buffer: 8MiB, dt_alpha: 2}}\n", "s.yaml");
  const Scenario again = load_scenario_text(dump_scenario(s), "s.yaml");
  EXPECT_EQ(again.network.packet.switch_buffer, network::SwitchBuffer::shared);
  EXPECT_EQ(again.network.packet.shared_buffer, Bytes::mib(8));
  EXPECT_EQ(again.network.packet.dt_alpha, 2.0);
}

TEST(Dump, PfcFlowControlRoundTrips) {
  const Scenario s = load_scenario_text("network: {model: packet, packet: {flow_control: pfc}}\n", "pfc.yaml");
  const std::string dumped = dump_scenario(s);
  EXPECT_NE(dumped.find("    flow_control: pfc\n"), std::string::npos) << dumped;
  EXPECT_NE(dumped.find("    retransmit_timeout: 100us\n"), std::string::npos) << dumped;
  EXPECT_NE(dumped.find("    sample_interval: 0"), std::string::npos) << dumped;
  EXPECT_EQ(load_scenario_text(dumped, "pfc.yaml").network.packet.flow_control, network::FlowControl::pfc);
}

TEST(Dump, ListsEveryTopLevelSection) {
  std::string d = dump_scenario(load_scenario_text("name: x\n", "x.yaml"));
  for (const char* key : {"\nseed:", "\ncluster:", "\nnetwork:", "\ncollectives:", "\ncalibration:",
                          "\nworkload:", "\noutput:"}) {
    EXPECT_NE(d.find(key), std::string::npos) << key;
  }
}

}  // namespace
}  // namespace dtsim::config
