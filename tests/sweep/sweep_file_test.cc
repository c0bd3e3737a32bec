#include <gtest/gtest.h>

#include "config/sweep.h"
#include "stand_in.h"

namespace dtsim::config {
namespace {

using dtsim::testing::stand_in_load;

Sweep parse(const std::string& yaml) {
  return read_sweep_text(yaml, "sweeps/test.yaml");
}

std::vector<std::vector<std::string>> values_of(const std::vector<SweepPoint>& points) {
  std::vector<std::vector<std::string>> out;
  for (const SweepPoint& p : points) out.push_back(p.values);
  return out;
}

TEST(SweepFile, ProductRunsTheFirstKeyOutermost) {
  const Sweep sw =
      parse("base: base.yaml\nvary:\n  cluster.nodes: [4, 8]\n  workload.parallel.tp: [2, 4, 8]\n");
  const auto points = expand_sweep(sw, stand_in_load);
  const std::vector<std::vector<std::string>> want = {{"4", "2"}, {"4", "4"}, {"4", "8"},
                                                      {"8", "2"}, {"8", "4"}, {"8", "8"}};
  EXPECT_EQ(values_of(points), want);
  for (std::size_t i = 0; i < points.size(); ++i) EXPECT_EQ(points[i].index, i);
}

TEST(SweepFile, PointsBecomeOverridesOfTheVariedKeys) {
  const Sweep sw = parse(
      "base: base.yaml\nvary:\n  cluster.nodes: [4]\n  cluster.fabric.kind: [rail-optimized]\n");
  const auto points = expand_sweep(sw, stand_in_load);
  ASSERT_EQ(points.size(), 1u);
  ASSERT_EQ(points[0].overrides.size(), 2u);
  EXPECT_EQ(points[0].overrides[1].key, "cluster.fabric.kind");
  EXPECT_EQ(points[0].overrides[1].value, "rail-optimized");
}

TEST(SweepFile, ZipGroupKeysAdvanceTogether) {
  const Sweep sw = parse(
      "base: base.yaml\nvary:\n  cluster.fabric.oversubscription: [1, 2]\n"
      "zip:\n  - {cluster.nodes: [4, 8], workload.parallel.dp: [4, 8]}\n");
  const std::vector<std::vector<std::string>> want = {
      {"1", "4", "4"}, {"1", "8", "8"}, {"2", "4", "4"}, {"2", "8", "8"}};
  EXPECT_EQ(values_of(expand_sweep(sw, stand_in_load)), want);
  EXPECT_EQ(sw.varied_keys(), (std::vector<std::string>{"cluster.fabric.oversubscription",
                                                        "cluster.nodes", "workload.parallel.dp"}));
}

TEST(SweepFile, ZipListsOfDifferentLengthsAreAnErrorAtTheirLine) {
  try {
    parse("base: base.yaml\nzip:\n  - cluster.nodes: [4, 8]\n    workload.parallel.dp: [4]\n");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "sweeps/test.yaml");
    EXPECT_EQ(e.where().line, 4);
    EXPECT_EQ(e.key(), "workload.parallel.dp");
  }
}

TEST(SweepFile, UnknownTopLevelKeyIsAnErrorNamingLineAndKey) {
  try {
    parse("base: base.yaml\nvary: {cluster.nodes: [1]}\nvarry: {}\n");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.key(), "varry");
  }
}

TEST(SweepFile, MissingBaseIsAnError) {
  EXPECT_THROW(parse("vary: {cluster.nodes: [1]}\n"), InputError);
}

TEST(SweepFile, KeyVariedTwiceIsAnError) {
  EXPECT_THROW(parse("base: b.yaml\nvary: {cluster.nodes: [1]}\nzip: [{cluster.nodes: [2]}]\n"),
               InputError);
}

TEST(SweepFile, BaseIsResolvedAgainstTheSweepFilesFolder) {
  EXPECT_EQ(parse("base: ../base.yaml\nvary: {cluster.nodes: [1]}\n").base, "base.yaml");
  EXPECT_EQ(parse("base: b.yaml\nvary: {cluster.nodes: [1]}\n").base, "sweeps/b.yaml");
}

TEST(SweepFile, GeometricRangeExpandsToPowers) {
  const Sweep sw = parse("base: b.yaml\nvary:\n  cluster.nodes: {from: 8, to: 64, factor: 2}\n");
  ASSERT_EQ(sw.axes.size(), 1u);
  EXPECT_EQ(sw.axes[0].values,
            (std::vector<std::vector<std::string>>{{"8"}, {"16"}, {"32"}, {"64"}}));
}

TEST(SweepFile, WhereDropsCombinationsThatDoNotFillTheGpus) {
  // The stand-in base has 4 nodes of 8 GPUs: 32 GPUs.
  const Sweep sw = parse(
      "base: b.yaml\nvary:\n  workload.parallel.tp: [4, 8]\n  workload.parallel.pp: [1, 2, 4]\n"
      "  workload.parallel.dp: [1, 2, 4, 8]\nwhere: tp*pp*dp == gpus\n");
  const std::vector<std::vector<std::string>> want = {{"4", "1", "8"}, {"4", "2", "4"},
                                                      {"4", "4", "2"}, {"8", "1", "4"},
                                                      {"8", "2", "2"}, {"8", "4", "1"}};
  const auto points = expand_sweep(sw, stand_in_load);
  EXPECT_EQ(values_of(points), want);
  EXPECT_EQ(points.back().index, 5u);
}

TEST(SweepFile, WhereSeesVariedNodesInDerivedGpus) {
  const Sweep sw = parse(
      "base: b.yaml\nvary:\n  cluster.nodes: [2, 4]\n  workload.parallel.dp: [2, 4]\n"
      "where: [\"8 * dp == gpus\", \"nodes >= 2\"]\n");
  const std::vector<std::vector<std::string>> want = {{"2", "2"}, {"4", "4"}};
  EXPECT_EQ(values_of(expand_sweep(sw, stand_in_load)), want);
}

TEST(SweepFile, WhereWithUnknownNameIsAnErrorAtItsLine) {
  const Sweep sw = parse("base: b.yaml\nvary: {cluster.nodes: [1]}\nwhere: tpp == 1\n");
  try {
    expand_sweep(sw, stand_in_load);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.key(), "where");
    EXPECT_NE(e.message().find("tpp"), std::string::npos);
  }
}

TEST(SweepFile, WhereSyntaxErrorIsReportedWhenReading) {
  EXPECT_THROW(parse("base: b.yaml\nvary: {cluster.nodes: [1]}\nwhere: \"tp * == 2\"\n"),
               InputError);
}

TEST(SweepFile, CostBlockSetsPricesAndWatts) {
  const Sweep sw = parse(
      "base: b.yaml\nvary: {cluster.nodes: [1]}\n"
      "cost: {gpu: 25000, switch: 30000, nic: 1000, link: 500, optics: 700, watts: {gpu: 1000}}\n");
  EXPECT_EQ(sw.cost.gpu_usd, 25000);
  EXPECT_EQ(sw.cost.switch_usd, 30000);
  EXPECT_EQ(sw.cost.nic_usd, 1000);
  EXPECT_EQ(sw.cost.link_usd, 500);
  EXPECT_EQ(sw.cost.optics_usd, 700);
  EXPECT_EQ(sw.cost.gpu_w, 1000);
}

TEST(SweepFile, NegativePriceIsAnErrorNamingTheKey) {
  try {
    parse("base: b.yaml\nvary: {cluster.nodes: [1]}\ncost:\n  gpu: -5\n");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "cost.gpu");
    EXPECT_EQ(e.where().line, 4);
  }
}

}  // namespace
}  // namespace dtsim::config
