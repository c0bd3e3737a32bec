#include "collectives/hardware_view.h"

#include <gtest/gtest.h>

#include "topology/catalog.h"

namespace dtsim::collectives {
namespace {

topology::ClusterSpec preset(std::string_view name, int nodes) {
  auto s = *topology::find_node_preset(name);
  s.nodes = nodes;
  return s;
}

TEST(HardwareView, NodeNetworkRateIsEveryNicAtItsKindsEfficiency) {
  const ModelParameters p;
  const HardwareView hw(preset("hgx-h100", 2), p);
  EXPECT_NEAR(hw.node_net_bw, 8 * 50 * p.net_efficiency_infiniband, 1e-9);
  EXPECT_NEAR(hw.gpu_net_bw, 50 * p.net_efficiency_infiniband, 1e-9);
}

TEST(HardwareView, NvswitchRateIsTheScaleUpBandwidthAtNvlinkEfficiency) {
  const ModelParameters p;
  const HardwareView hw(preset("hgx-a100", 1), p);
  EXPECT_NEAR(hw.intra_bw, 300 * p.nvlink_efficiency, 1e-9);
  EXPECT_EQ(hw.intra_class, LinkClass::nvlink);
}

TEST(HardwareView, HostStagedPathIsBoundByBytesInFlightOverRoundTrip) {
  auto s = preset("hgx-a100", 1);
  s.scale_up.kind = topology::ScaleUpKind::none;
  s.scale_up.latency = Time::us(2);
  ModelParameters p;
  p.host_inflight_bytes = 8000;
  const HardwareView hw(s, p);
  EXPECT_NEAR(hw.intra_bw, 4.0, 1e-9);  // 8000 B / 2 us = 4 GB/s
  EXPECT_TRUE(hw.host_staged_intra);
}

TEST(HardwareView, BridgedGpusBeyondAPairRingOverPcie) {
  auto s = preset("pcie-server", 1);
  s.gpu = *topology::find_gpu_preset("a40");
  s.scale_up.kind = topology::ScaleUpKind::nvlink_bridge;
  s.scale_up.bandwidth = Bandwidth::gbytes_per_s(56.25);
  s.gpus_per_node = 4;
  const HardwareView hw(s, {});
  EXPECT_EQ(hw.intra_class, LinkClass::pcie);
  EXPECT_LT(hw.intra_bw, hw.intra_pair_bw);
}

TEST(HardwareView, Nvl72TraysFormOneDomain) {
  auto s = preset("gb200-nvl72", 1);
  s.gpus_per_node = 4;
  s.nodes = 18;
  const HardwareView hw(s, {});
  Communicator all;
  for (int i = 0; i < 72; ++i) all.ranks.push_back(i);
  const CommShape shape = hw.shape_of(all);
  EXPECT_EQ(shape.nodes, 1);
  EXPECT_EQ(shape.ranks_per_node, 72);
}

TEST(HardwareView, ShapeCountsNodesAndTheFullestNode) {
  const HardwareView hw(preset("hgx-h100", 4), {});
  const CommShape a = hw.shape_of(Communicator{{6, 7, 8, 9, 10}});
  EXPECT_EQ(a.nodes, 2);
  EXPECT_EQ(a.ranks_per_node, 3);
  const CommShape b = hw.shape_of(Communicator{{0, 9, 18, 27}});
  EXPECT_EQ(b.nodes, 4);
  EXPECT_EQ(b.ranks_per_node, 1);
}

TEST(HardwareView, SocketTransportCapsTcpOnPcieNodes) {
  auto s = preset("pcie-server", 2);
  s.gpus_per_node = 1;
  s.nic = {topology::NicKind::tcp, 1, Bandwidth::gbps(400), Time::us(2), Time::ns(500)};
  const ModelParameters p;
  const HardwareView hw(s, p);
  EXPECT_NEAR(hw.node_net_bw, p.socket_bandwidth, 1e-9);
}

}  // namespace
}  // namespace dtsim::collectives
