#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "topology/catalog.h"
#include "topology/cluster.h"
#include "topology/describe.h"

namespace dtsim::topology {
namespace {

class EveryNodePreset : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryNodePreset, BuildsAndDescribes) {
  ClusterSpec s = *find_node_preset(GetParam());
  s.nodes = 4;
  auto c = build_cluster(s);
  EXPECT_EQ(c->gpu_count(), 4 * s.gpus_per_node);
  ClusterSummary sum = summarize(*c);
  EXPECT_EQ(sum.nics, 4 * s.nic.count);
  EXPECT_GT(sum.bisection_bandwidth.gbytes_per_s(), 0);
  EXPECT_GE(sum.path_diversity, 1u);
  std::ostringstream json;
  describe(*c, DescribeFormat::json, json);
  auto j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["gpus"], c->gpu_count());
  std::ostringstream text;
  describe(*c, DescribeFormat::text, text);
  EXPECT_NE(text.str().find(GetParam()), std::string::npos);
}

std::vector<std::string> preset_names() {
  std::vector<std::string> out;
  for (auto n : node_preset_names()) out.emplace_back(n);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Catalog, EveryNodePreset, ::testing::ValuesIn(preset_names()),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (char& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

// Builds the preset twice, the second time with one field changed, and returns the pairs of
// links (same index) that differ.
std::vector<std::pair<Link, Link>> changed_links(const ClusterSpec& a, const ClusterSpec& b) {
  auto ca = build_cluster(a);
  auto cb = build_cluster(b);
  EXPECT_EQ(ca->devices().size(), cb->devices().size());
  EXPECT_EQ(ca->links().size(), cb->links().size());
  for (size_t d = 0; d < ca->devices().size() && d < cb->devices().size(); ++d) {
    EXPECT_EQ(ca->devices()[d].name, cb->devices()[d].name);
  }
  std::vector<std::pair<Link, Link>> out;
  for (size_t l = 0; l < ca->links().size() && l < cb->links().size(); ++l) {
    const Link& x = ca->links()[l];
    const Link& y = cb->links()[l];
    EXPECT_EQ(x.from, y.from);
    EXPECT_EQ(x.to, y.to);
    EXPECT_EQ(x.kind, y.kind);
    if (x.bandwidth != y.bandwidth || x.latency != y.latency) out.emplace_back(x, y);
  }
  return out;
}

// Meta's Grand Teton H100 (torchtitan's runs): 96 GB HBM2e at 2.4 TB/s and a 500 W limit, its
// tensor peak between the 400 W H100 NVL's (835.5 TFLOP/s BF16) and the 700 W SXM5's (989.4) on the
// power law through those two datasheet points; NVLink as the SXM5.
TEST(GpuPreset, TheGrandTetonH100PeaksBetweenTheNvlAndTheSxmAt500W) {
  const GpuSpec g = *find_gpu_preset("h100-sxm-96g-500w");
  const GpuSpec sxm = *find_gpu_preset("h100-sxm");
  const double k = std::log(835.5 / 989.4) / std::log(400.0 / 700.0);
  EXPECT_NEAR(g.peak_flops.at(Dtype::bf16) / sxm.peak_flops.at(Dtype::bf16), std::pow(500.0 / 700.0, k), 1e-3);
  EXPECT_NEAR(g.peak_flops.at(Dtype::fp8) / g.peak_flops.at(Dtype::bf16), 2.0, 1e-9);
  EXPECT_EQ(g.hbm_capacity.count(), int64_t{96} << 30);
  EXPECT_DOUBLE_EQ(g.hbm_bandwidth.gbytes_per_s(), 2400);
  EXPECT_EQ(g.nvlink_bandwidth, sxm.nvlink_bandwidth);
  EXPECT_EQ(g.compute_capability, 90);
}

TEST(PresetOverride, ScaleUpBandwidthChangesOnlyNvlinkBandwidth) {
  ClusterSpec a = *find_node_preset("hgx-h100");
  a.nodes = 4;
  ClusterSpec b = a;
  b.scale_up.bandwidth = Bandwidth::gbytes_per_s(300);
  auto diff = changed_links(a, b);
  EXPECT_EQ(diff.size(), 4u * 8 * 2);  // every GPU's NVLink, both directions
  for (const auto& [x, y] : diff) {
    EXPECT_EQ(x.kind, LinkKind::nvlink);
    EXPECT_EQ(x.latency, y.latency);
    EXPECT_EQ(y.bandwidth, Bandwidth::gbytes_per_s(300));
  }
}

TEST(PresetOverride, FabricLinkBandwidthChangesOnlyNetworkLinks) {
  ClusterSpec a = *find_node_preset("hgx-h100");
  a.nodes = 4;
  ClusterSpec b = a;
  b.fabric.link.bandwidth = Bandwidth::gbps(800);
  auto diff = changed_links(a, b);
  EXPECT_FALSE(diff.empty());
  for (const auto& [x, y] : diff) {
    EXPECT_EQ(x.kind, LinkKind::network);
    EXPECT_EQ(y.bandwidth, Bandwidth::gbps(800));
  }
}

TEST(PresetOverride, NicLatencyChangesOnlyTheNicPcieLinks) {
  ClusterSpec a = *find_node_preset("hgx-h100");
  a.nodes = 2;
  ClusterSpec b = a;
  b.nic.latency = Time::us(3);
  auto diff = changed_links(a, b);
  EXPECT_EQ(diff.size(), 2u * 8 * 2);
  auto c = build_cluster(b);
  for (const auto& [x, y] : diff) {
    EXPECT_EQ(y.latency, Time::us(1.5));
    EXPECT_TRUE(c->device(x.from).kind == DeviceKind::nic ||
                c->device(x.to).kind == DeviceKind::nic);
  }
}

}  // namespace
}  // namespace dtsim::topology
