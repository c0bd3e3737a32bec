#include "topology/describe.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/error.h"
#include "spec_helpers.h"

namespace dtsim::topology {
namespace {

using testing::hgx;

TEST(Describe, JsonHasTheKeysScriptsReadAndTheirValues) {
  auto c = build_cluster(hgx(4, FabricKind::fat_tree, 16, 2));
  std::ostringstream out;
  describe(*c, DescribeFormat::json, out);
  auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["gpus"], 32);
  EXPECT_EQ(j["nodes"], 4);
  EXPECT_EQ(j["switches"], 4 + 8);  // 32 ports / 8 down = 4 leaves, 8 spines
  EXPECT_EQ(j["links"], summarize(*c).links);
  // 2 nodes x 8 NICs x 50 GB/s cross the cut.
  EXPECT_DOUBLE_EQ(j["bisection_bandwidth_GBps"].get<double>(), 800.0);
}

TEST(Describe, TextNamesFabricAndSwitchesPerTier) {
  auto c = build_cluster(hgx(4, FabricKind::fat_tree, 16, 2));
  std::ostringstream out;
  describe(*c, DescribeFormat::text, out);
  EXPECT_NE(out.str().find("fat-tree, 2 tiers, radix 16"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("12 (tier 0: 4, tier 1: 8)"), std::string::npos) << out.str();
}

// A torus's router links are where its traffic queues: describe says what a node can send in
// each pattern (2 x 4 torus: one 50 GB/s link between ring neighbours; fabric_load_test works
// the numbers out). A fat-tree's leaves are described by their oversubscription instead.
TEST(Describe, TorusSaysWhatItsRouterLinksLetANodeSend) {
  auto c = build_cluster(hgx(8, FabricKind::torus, 128));
  std::ostringstream text, json;
  describe(*c, DescribeFormat::text, text);
  EXPECT_NE(text.str().find("router links      a node sends 50GB/s on a ring, 80GB/s on a tree, 87.5GB/s to all "
                            "others (its NICs: 400GB/s)"),
            std::string::npos)
      << text.str();
  describe(*c, DescribeFormat::json, json);
  auto j = nlohmann::json::parse(json.str());
  EXPECT_DOUBLE_EQ(j["router_link_rates_GBps"]["ring"].get<double>(), 50.0);
  EXPECT_NEAR(j["router_link_rates_GBps"]["all_to_all"].get<double>(), 87.5, 1e-9);

  auto fat = build_cluster(hgx(8, FabricKind::fat_tree, 16, 2));
  std::ostringstream fat_text, fat_json;
  describe(*fat, DescribeFormat::text, fat_text);
  EXPECT_EQ(fat_text.str().find("router links"), std::string::npos) << fat_text.str();
  describe(*fat, DescribeFormat::json, fat_json);
  EXPECT_TRUE(nlohmann::json::parse(fat_json.str())["router_link_rates_GBps"].is_null());
}

// The routing mode with `auto` resolved: ECMP on InfiniBand, adaptive on EFA or when asked.
TEST(Describe, RoutingResolvesAutoByTheNicKind) {
  auto routing = [](ClusterSpec spec, DescribeFormat format) {
    std::ostringstream out;
    describe(*build_cluster(spec), format, out);
    return format == DescribeFormat::json ? nlohmann::json::parse(out.str())["routing"].get<std::string>() : out.str();
  };
  ClusterSpec spec = hgx(4, FabricKind::fat_tree, 16, 2);
  EXPECT_EQ(routing(spec, DescribeFormat::json), "ecmp");
  EXPECT_NE(routing(spec, DescribeFormat::text).find("routing           ecmp (one route by hash), auto\n"),
            std::string::npos);
  spec.nic.kind = NicKind::efa;
  EXPECT_EQ(routing(spec, DescribeFormat::json), "adaptive");
  EXPECT_NE(routing(spec, DescribeFormat::text).find("adaptive (sprayed over equal-cost routes), auto on efa"),
            std::string::npos);
  spec.fabric.routing = Routing::ecmp;
  EXPECT_EQ(routing(spec, DescribeFormat::json), "ecmp");
  spec.nic.kind = NicKind::infiniband;
  spec.fabric.routing = Routing::adaptive;
  EXPECT_EQ(routing(spec, DescribeFormat::json), "adaptive");
}

// An NVL72 rack written as what Slurm sees, 18 trays of 4 GPUs: the graph joins each rack's trays
// on one NVSwitch domain (graph_spec) and the summary still counts the scenario's nodes.
TEST(Describe, RackOfTraysIsOneNvlinkDomainCountedInTrays) {
  ClusterSpec spec = *find_node_preset("gb200-nvl72");
  spec.nodes = 36;
  spec.gpus_per_node = 4;
  spec.nic.count = 4;
  ASSERT_EQ(spec.nodes_per_domain(), 18);
  const ClusterSpec graph = graph_spec(spec);
  EXPECT_EQ(graph.nodes, 2);
  EXPECT_EQ(graph.gpus_per_node, 72);
  EXPECT_EQ(graph.nic.count, 72);
  auto c = build_cluster(spec);
  EXPECT_EQ(c->node_of(71), 0);
  EXPECT_EQ(c->node_of(72), 1);
  const ClusterSummary s = summarize(*c);
  EXPECT_EQ(s.nodes, 36);
  EXPECT_EQ(s.gpus_per_node, 4);
  EXPECT_EQ(s.domain_nodes, 18);
  EXPECT_EQ(s.nvswitches, 2);
  EXPECT_EQ(s.nics, 144);
  std::ostringstream out;
  describe(*c, DescribeFormat::text, out);
  EXPECT_NE(out.str().find("36 nodes x 4 GPUs = 144 GPUs"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("nvlink domain     72 GPUs: 18 nodes on one NVSwitch domain"), std::string::npos) << out.str();
  // A GPU reaches every GPU of its rack over NVLink alone, and the other rack through the NICs.
  for (LinkId l : c->route(0, 71, 0)) EXPECT_EQ(c->link(l).kind, LinkKind::nvlink);
  bool crosses_network = false;
  for (LinkId l : c->route(0, 72, 0)) crosses_network |= c->link(l).kind == LinkKind::network;
  EXPECT_TRUE(crosses_network);
}

// Domains that cannot be built are refused, naming the key: one smaller than the node (the
// analytical model would price the node as one domain, the graph as islands), one that is not a
// whole number of nodes, and racks the node count leaves partial. A partial single rack is a
// job on some of its trays, and builds.
TEST(Describe, NvlinkDomainsThatDoNotTileTheNodesAreRefused) {
  ClusterSpec spec = hgx(2, FabricKind::fat_tree);
  spec.scale_up.domain_gpus = 4;
  EXPECT_NE(domain_misfit(spec).find("an NVLink domain of 4 GPUs does not fit nodes of 8"), std::string::npos);
  EXPECT_THROW(build_cluster(spec), InputError);
  spec.scale_up.domain_gpus = 12;
  EXPECT_NE(domain_misfit(spec), "");
  ClusterSpec trays = *find_node_preset("gb200-nvl72");
  trays.gpus_per_node = 4;
  trays.nic.count = 4;
  trays.nodes = 20;
  EXPECT_EQ(domain_misfit(trays), "NVLink domains of 72 GPUs join 18 nodes of 4; 20 nodes leave the last one partial: use a multiple of 18");
  trays.nodes = 16;
  EXPECT_EQ(domain_misfit(trays), "");
  auto c = build_cluster(trays);
  EXPECT_EQ(summarize(*c).nvswitches, 1);
  for (LinkId l : c->route(0, 63, 0)) EXPECT_EQ(c->link(l).kind, LinkKind::nvlink);
  spec.scale_up.kind = ScaleUpKind::pcie;  // no NVSwitch: the domain figure is not used
  EXPECT_EQ(domain_misfit(spec), "");
}

// check_fabric() refuses exactly the specs whose build would, with the builder's own line.
TEST(Describe, FabricCheckRefusesWhatTheBuildersRefuse) {
  auto message = [](const auto& f) -> std::string {
    try {
      f();
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  int refused = 0;
  for (FabricKind kind : {FabricKind::single_switch, FabricKind::fat_tree, FabricKind::rail_optimized,
                          FabricKind::dragonfly, FabricKind::torus}) {
    for (int radix : {2, 4, 8, 12, 16, 64}) {
      for (int tiers : {1, 2, 3}) {
        for (int nodes : {2, 9, 64}) {
          ClusterSpec spec = hgx(nodes, kind, radix, tiers);
          const std::string checked = message([&] { check_fabric(spec); });
          EXPECT_EQ(checked, message([&] { build_cluster(spec); })) << name(kind) << " radix " << radix;
          refused += checked.empty() ? 0 : 1;
        }
      }
    }
  }
  EXPECT_GT(refused, 20);
}

TEST(Describe, DotDrawsEveryDeviceAndCable) {
  auto c = build_cluster(hgx(2, FabricKind::single_switch));
  std::ostringstream out;
  describe(*c, DescribeFormat::dot, out);
  const std::string dot = out.str();
  EXPECT_EQ(dot.rfind("graph cluster {", 0), 0u);
  EXPECT_NE(dot.find("label=\"node1/gpu7\""), std::string::npos);
  size_t edges = 0;
  for (size_t at = dot.find(" -- "); at != std::string::npos; at = dot.find(" -- ", at + 1))
    ++edges;
  EXPECT_EQ(edges, c->links().size() / 2);
}

TEST(Describe, DotRefusesLargeClusters) {
  auto c = build_cluster(hgx(64, FabricKind::fat_tree));
  std::ostringstream out;
  try {
    describe(*c, DescribeFormat::dot, out);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("at most 1000 devices"), std::string::npos) << e.what();
  }
}

TEST(Describe, PathDiversityCountsRoutesToTheLastNode) {
  auto c = build_cluster(hgx(4, FabricKind::fat_tree, 16, 2));
  EXPECT_EQ(summarize(*c).path_diversity, 8u);  // leaf 0 to leaf 3 over any of 8 spines
}

TEST(Describe, NodePathDiversityInAThreeTierFatTree) {
  // Radix 8: 4 NIC ports a leaf, 4 leaves (2 nodes) a pod.
  auto c = build_cluster(hgx(16, FabricKind::fat_tree, 8, 3));
  EXPECT_EQ(node_path_diversity(*c, 0, 1), 4u);    // same pod: any of its 4 aggregation switches
  EXPECT_EQ(node_path_diversity(*c, 0, 15), 16u);  // across pods: 4 aggregation x 4 core
}

}  // namespace
}  // namespace dtsim::topology
