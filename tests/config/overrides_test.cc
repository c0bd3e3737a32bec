// --set overrides: applied to the YAML tree before typed conversion, so they change exactly the
// key they name and their mistakes are reported with the flag as the source.
#include "config/overrides.h"

#include <gtest/gtest.h>

#include "config/loader.h"
#include "sim/error.h"

namespace dtsim::config {
namespace {

constexpr std::string_view kBase = R"(
name: base
cluster:
  node: hgx-h100
  nodes: 2
  fabric: {kind: fat-tree, oversubscription: 1}
workload: {kind: collective-sweep, max_bytes: 1GiB}
)";

Scenario with(const std::vector<Override>& overrides) {
  return load_scenario_text(kBase, "base.yaml", overrides);
}

std::string error_of(const std::vector<Override>& overrides) {
  try {
    with(overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Overrides, ParseSplitsAtTheFirstEquals) {
  Override o = parse_override("output.dir=a=b");
  EXPECT_EQ(o.key, "output.dir");
  EXPECT_EQ(o.value, "a=b");
}

TEST(Overrides, ParseRejectsTextWithoutEquals) {
  EXPECT_THROW(parse_override("cluster.nodes"), InputError);
}

TEST(Overrides, ChangeExactlyTheFieldTheyName) {
  Scenario base = with({});
  Scenario changed = with({{"cluster.nodes", "64"}});
  EXPECT_EQ(changed.cluster.nodes, 64);
  changed.cluster.nodes = base.cluster.nodes;
  EXPECT_EQ(dump_scenario(changed), dump_scenario(base));
}

TEST(Overrides, ReplaceAValueTheFileGave) {
  EXPECT_DOUBLE_EQ(with({{"cluster.fabric.oversubscription", "2"}}).cluster.fabric.oversubscription, 2);
}

TEST(Overrides, CreateMissingSections) {
  Scenario s = with({{"network.packet.mtu", "9000"}});
  EXPECT_EQ(s.network.packet.mtu, Bytes(9000));
}

TEST(Overrides, AcceptFlowSequences) {
  EXPECT_EQ(with({{"output.formats", "[table, csv]"}}).output.formats, (std::vector<std::string>{"table", "csv"}));
}

TEST(Overrides, LaterOverridesWin) {
  EXPECT_EQ(with({{"cluster.nodes", "4"}, {"cluster.nodes", "8"}}).cluster.nodes, 8);
}

TEST(Overrides, RefineAPresetNamedByAScalar) {
  Scenario s = load_scenario_text("cluster: {gpu: h100-sxm}\n", "x.yaml", {{"cluster.gpu.hbm_capacity", "96GB"}});
  EXPECT_EQ(s.cluster.gpu.name, "h100-sxm");
  EXPECT_EQ(s.cluster.gpu.hbm_capacity, Bytes(96'000'000'000));
}

TEST(Overrides, UnknownPathGetsDidYouMeanAndNamesTheFlag) {
  EXPECT_EQ(error_of({{"cluster.nodez", "4"}}).rfind("--set cluster.nodez=4: cluster.nodez: unknown key; did you mean 'nodes'?", 0), 0u)
      << error_of({{"cluster.nodez", "4"}});
}

TEST(Overrides, BadValueNamesTheFlagAndTheKey) {
  EXPECT_EQ(error_of({{"cluster.nic.bandwidth", "fast"}})
                .rfind("--set cluster.nic.bandwidth=fast: cluster.nic.bandwidth: expected a bandwidth", 0),
            0u);
}

TEST(Overrides, PathThroughAScalarIsAnError) {
  EXPECT_NE(error_of({{"name.first", "x"}}).find("--set name.first=x"), std::string::npos);
}

TEST(Overrides, EmptyPathSegmentIsAnError) {
  EXPECT_NE(error_of({{"cluster..nodes", "2"}}).find("expected a dotted key"), std::string::npos);
}

TEST(Overrides, YamlSyntaxErrorInTheValueNamesTheFlag) {
  EXPECT_NE(error_of({{"output.formats", "[table"}}).find("--set output.formats=[table"), std::string::npos);
}

}  // namespace
}  // namespace dtsim::config
