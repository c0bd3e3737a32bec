#include "validation/scenario_predictor.h"

#include <gtest/gtest.h>

#include "sim/error.h"

namespace dtsim::validation {
namespace {

using collectives::CollectiveKind;

config::Scenario two_nodes() {
  return config::load_scenario_text(
      "cluster: {node: hgx-h100, nodes: 2, gpus_per_node: 8}\n"
      "workload: {kind: collective-sweep, collective: all_reduce}\n",
      "two_nodes.yaml");
}

MeasurementSet measured(int ranks) {
  MeasurementSet s;
  s.collective = CollectiveKind::all_reduce;
  s.ranks = ranks;
  s.points = {{1 << 20, 0, 60.0, 0, 0, Placement::out_of_place, 0, 1},
              {1 << 20, 0, 58.0, 0, 0, Placement::in_place, 0, 2},
              {1 << 26, 0, 900.0, 0, 0, Placement::out_of_place, 0, 3},
              {1 << 27, 0, 1800.0, 0, 0, Placement::out_of_place, 7, 4}};
  return s;
}

TEST(ScenarioPredictor, RankCountComesFromTheFileElseTheCluster) {
  config::Scenario s = two_nodes();
  EXPECT_EQ(ranks_for(measured(8), s), 8);
  EXPECT_EQ(ranks_for(measured(0), s), 16);
  EXPECT_THROW(ranks_for(measured(32), s), InputError);
}

TEST(ScenarioPredictor, OutputsThatDoNotNameTheirCollectiveReadAsTheScenarios) {
  const NcclTestsParseOptions sweep = scenario_parse_options(
      config::load_scenario_text("cluster: {node: hgx-h100, nodes: 1}\nworkload: {kind: "
                                 "collective-sweep, collective: reduce_scatter}\n",
                                 "rs.yaml"));
  ASSERT_TRUE(sweep.collective.has_value());
  EXPECT_EQ(*sweep.collective, CollectiveKind::reduce_scatter);
  const NcclTestsParseOptions training = scenario_parse_options(config::load_scenario_text(
      "cluster: {node: hgx-h100, nodes: 1}\nworkload: {kind: training, model: llama3-8b, "
      "parallel: {tp: 8}, batch: {global: 8, micro: 1}}\n",
      "train.yaml"));
  EXPECT_FALSE(training.collective.has_value());
}

TEST(ScenarioPredictor, PredictsLongerTimesForLargerMessagesAndNamesTheChoice) {
  config::Scenario s = two_nodes();
  Predictor p = make_predictor(s, collectives::ModelParameters{});
  Prediction small = p(CollectiveKind::all_reduce, 1 << 10, 16);
  Prediction large = p(CollectiveKind::all_reduce, int64_t{1} << 30, 16);
  EXPECT_GT(large.time_us, small.time_us);
  EXPECT_FALSE(large.algorithm.empty());
  EXPECT_FALSE(large.protocol.empty());
}

TEST(ScenarioPredictor, FitDatasetMergesPlacementsDropsWrongRowsAndMatchesThePredictor) {
  config::Scenario s = two_nodes();
  collectives::ModelParameters base;
  std::vector<FitParameter> fitted = fit_parameters_of(base, {"nvlink_efficiency"});
  ASSERT_EQ(fitted.size(), 1u);
  FitDataset d = make_fit_dataset("two", measured(16), s, base, fitted);
  ASSERT_EQ(d.points.size(), 2u);
  EXPECT_DOUBLE_EQ(d.points[0].measured_us, 59.0);
  std::vector<double> values{fitted[0].initial};
  std::vector<double> pred = d.predict_us(values);
  Predictor p = make_predictor(s, base);
  EXPECT_DOUBLE_EQ(pred[1], p(CollectiveKind::all_reduce, 1 << 26, 16).time_us);
}

TEST(ScenarioPredictor, FittedValuesChangeThePrediction) {
  config::Scenario s = two_nodes();
  collectives::ModelParameters base;
  // 1 MiB on two H100 nodes runs as NVLS-tree (Simple): its latency is the NVLS round's.
  std::vector<FitParameter> fitted = fit_parameters_of(base, {"base_latency_ll", "nvls_latency"});
  FitDataset d = make_fit_dataset("two", measured(16), s, base, fitted);
  std::vector<double> low{fitted[0].lower, fitted[1].lower}, high{fitted[0].upper, fitted[1].upper};
  EXPECT_LT(d.predict_us(low)[0], d.predict_us(high)[0]);
}

// A measurement taken with nccl-tests -g 8 (nGpus 8) is predicted with its eight host launches
// as a floor, in validate and in calibrate's fit alike; one taken with -g 1 is not.
TEST(ScenarioPredictor, OneThreadDrivingEightGpusFloorsThePredictionAndTheFit) {
  config::Scenario s = two_nodes();
  collectives::ModelParameters base;
  const double floor_us = 8 * base.host_launch_per_gpu_sm90;  // H100s
  const double alone = make_predictor(s, base)(CollectiveKind::all_reduce, 8, 8).time_us;
  ASSERT_LT(alone, floor_us);
  EXPECT_DOUBLE_EQ(make_predictor(s, base, 0, 8)(CollectiveKind::all_reduce, 8, 8).time_us,
                   floor_us);
  const int64_t large = int64_t{1} << 30;
  EXPECT_DOUBLE_EQ(make_predictor(s, base, 0, 8)(CollectiveKind::all_reduce, large, 8).time_us,
                   make_predictor(s, base)(CollectiveKind::all_reduce, large, 8).time_us);

  MeasurementSet g8 = measured(8);
  g8.points = {{8, 0, 45.0, 0, 0, Placement::out_of_place, 0, 1}};
  g8.gpus_per_thread = 8;
  std::vector<FitParameter> fitted = fit_parameters_of(base, {"host_launch_per_gpu_sm90"});
  FitDataset d = make_fit_dataset("g8", g8, s, base, fitted);
  EXPECT_DOUBLE_EQ(d.predict_us(std::vector<double>{6.0})[0], 48.0);

  // A set that does not say (a CSV) takes the scenario's workload.gpus_per_thread.
  config::Scenario g4 = s;
  g4.workload.sweep.gpus_per_thread = 4;
  EXPECT_DOUBLE_EQ(make_predictor(g4, base)(CollectiveKind::all_reduce, 8, 8).time_us,
                   4 * base.host_launch_per_gpu_sm90);
  // Hosts before Hopper launch slower.
  config::Scenario a100 = config::load_scenario_text(
      "cluster: {node: hgx-a100, nodes: 1}\nworkload: {kind: collective-sweep, gpus_per_thread: "
      "8}\n",
      "a100.yaml");
  EXPECT_DOUBLE_EQ(make_predictor(a100, base)(CollectiveKind::all_reduce, 8, 8).time_us,
                   8 * base.host_launch_per_gpu);
  EXPECT_GT(base.host_launch_per_gpu, base.host_launch_per_gpu_sm90);
  g8.gpus_per_thread = 0;
  EXPECT_DOUBLE_EQ(
      make_fit_dataset("g4", g8, g4, base, fitted).predict_us(std::vector<double>{6.0})[0], 24.0);
}

// A run's NCCL environment becomes scenario overrides where the scenario leaves the tuner free.
TEST(ScenarioPredictor, TheRunsNcclEnvironmentOverridesOnlyWhatTheScenarioLeavesToTheTuner) {
  config::Scenario s = two_nodes();
  MeasurementSet set = measured(16);
  set.collective = CollectiveKind::all_gather;
  set.nccl_env = {{"NCCL_ALGO", "allreduce:tree;allgather:ring"}, {"NCCL_PROTO", "Simple"}};
  auto o = nccl_env_overrides(set, s);
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].key, "collectives.algorithm");
  EXPECT_EQ(o[0].value, "\"ring\"");
  EXPECT_EQ(o[1].key, "collectives.protocol");
  EXPECT_EQ(o[1].value, "\"Simple\"");
  // Applied, the overrides load: the run's tuner is pinned to ring/Simple.
  config::Scenario pinned = config::load_scenario_text(
      "cluster: {node: hgx-h100, nodes: 2, gpus_per_node: 8}\n"
      "workload: {kind: collective-sweep, collective: all_gather}\n",
      "two_nodes.yaml", o);
  EXPECT_EQ(pinned.collectives.algorithm, collectives::Algorithm::ring);
  EXPECT_EQ(pinned.collectives.protocol, collectives::Protocol::simple);
  // A value for other functions only, or a scenario that chose already, leaves it alone.
  set.nccl_env = {{"NCCL_ALGO", "allreduce:tree"}};
  EXPECT_TRUE(nccl_env_overrides(set, s).empty());
  set.nccl_env = {{"NCCL_NVLS_ENABLE", "0"}};
  o = nccl_env_overrides(set, s);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].value, "\"^nvls,nvls_tree\"");
  s.collectives.algorithm = collectives::Algorithm::tree;
  EXPECT_TRUE(nccl_env_overrides(set, s).empty());
}

TEST(ScenarioPredictor, RanksOnSeveralHostsAreSpreadOverThatManyNodes) {
  config::Scenario s = two_nodes();
  EXPECT_EQ(placement_of(s.cluster, 8, 2).ranks, (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(placement_of(s.cluster, 8, 0).ranks, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(ScenarioPredictor, UnknownParameterNameIsAnInputError) {
  EXPECT_THROW(fit_parameters_of(collectives::ModelParameters{}, {"warp_speed"}), InputError);
}

}  // namespace
}  // namespace dtsim::validation
