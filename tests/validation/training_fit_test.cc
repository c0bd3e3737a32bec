// calibrate --training's fit, against tables the model itself generated with known efficiencies:
// the fit must find those efficiencies again and leave-one-table-out must predict each table
// exactly; and a training dataset must price its rows as run_training does.
#include "validation/training_fit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "collectives/analytical_model.h"
#include "sim/error.h"
#include "topology/catalog.h"
#include "workloads/training.h"

namespace dtsim::validation {
namespace {

// A small dense model on one node of `node`, large enough that its GEMMs are compute-bound.
PublishedRun synthetic_run(const char* node, int seq_len, int tp, int global) {
  PublishedRun r;
  r.id = std::string(node) + "_s" + std::to_string(seq_len) + "_tp" + std::to_string(tp);
  r.cluster = *topology::find_node_preset(node);
  r.cluster.nodes = 1;
  workloads::ModelSpec& m = r.spec.model;
  m.layers = 2;
  m.hidden = 4096;
  m.heads = 32;
  m.seq_len = seq_len;
  m.vocab = 32000;
  r.spec.parallel.tp = tp;
  r.spec.parallel.dp = 0;
  r.spec.batch.global = global;
  r.spec.batch.micro = 1;
  return r;
}

// Three tables, each with rows on all three generations, so a table left out still leaves every
// parameter seen by the others.
std::vector<TrainingTable> synthetic_tables() {
  std::vector<TrainingTable> tables;
  const int seqs[] = {2048, 4096, 1024};
  for (int t = 0; t < 3; ++t) {
    TrainingTable table{"synthetic_" + std::to_string(t), {}};
    for (const char* node : {"hgx-a100", "hgx-h100", "hgx-b200"})
      table.runs.push_back(synthetic_run(node, seqs[t], 1 + t % 2, 8 * (t + 1)));
    tables.push_back(std::move(table));
  }
  return tables;
}

// Sets every row's published time to the model's at `truth`.
void publish_at(std::vector<TrainingTable>& tables, std::span<const FitParameter> parameters,
                std::span<const double> truth) {
  for (TrainingTable& t : tables) {
    const FitDataset d = make_training_dataset(t, parameters);
    const std::vector<double> us = d.predict_us(truth);
    ASSERT_EQ(us.size(), t.runs.size());
    for (size_t i = 0; i < us.size(); ++i) t.runs[i].iteration_time_s = us[i] * 1e-6;
  }
}

TEST(TrainingFit, DatasetPricesRowsAsRunTrainingDoes) {
  std::vector<TrainingTable> tables = synthetic_tables();
  const std::vector<FitParameter> ps = training_fit_parameters({});
  // One row publishes a time, the other only TFLOP/s per GPU: both read as run_training's time.
  TrainingTable t{"pair", {tables[0].runs[1], tables[1].runs[2]}};
  std::vector<double> expected;
  for (PublishedRun& run : t.runs) {
    const collectives::AnalyticalCollectiveModel comm(run.cluster, collectives::CollectiveOptions{},
                                                      collectives::ModelParameters{});
    const workloads::TrainingResult r = workloads::run_training(run.spec, run.cluster, comm);
    expected.push_back(r.iteration_time_s * 1e6);
    run.iteration_time_s = 0;
    run.tflops_per_gpu = r.tflops_per_gpu;
  }
  t.runs[0].iteration_time_s = expected[0] * 1e-6;
  const FitDataset d = make_training_dataset(t, ps);
  std::vector<double> initial;
  for (const FitParameter& p : ps) initial.push_back(p.initial);
  const std::vector<double> us = d.predict_us(initial);
  ASSERT_EQ(us.size(), 2u);
  ASSERT_EQ(d.points.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_NEAR(us[i], expected[i], 1e-9 * expected[i]);
    EXPECT_NEAR(d.points[i].measured_us, expected[i], 1e-9 * expected[i]);
  }
  EXPECT_NEAR(mean_abs_error_pct(d, initial), 0, 1e-6);
}

// A dataset keeps every price it computed and re-prices on several threads: going back and forth
// between values, and moving one generation's parameter only, it answers what a dataset that never
// saw the other values answers on one thread, exactly.
TEST(TrainingFit, RepricingOnThreadsAtValuesSeenBeforeAnswersAsAFreshDataset) {
  const TrainingTable table{"mixed", {synthetic_tables()[0].runs[0], synthetic_tables()[0].runs[1],
                                      synthetic_tables()[1].runs[1], synthetic_tables()[2].runs[2]}};
  const std::vector<FitParameter> ps = training_fit_parameters({});
  const std::vector<std::vector<double>> visits{
      {0.75, 0.58, 0.65}, {0.60, 0.58, 0.65}, {0.60, 0.70, 0.65}, {0.75, 0.58, 0.65}, {0.60, 0.70, 0.80}, {0.60, 0.58, 0.65}};
  const FitDataset shared = make_training_dataset(table, ps, 2);
  for (const std::vector<double>& v : visits) {
    const std::vector<double> got = shared.predict_us(v);
    const std::vector<double> fresh = make_training_dataset(table, ps, 1).predict_us(v);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got, fresh) << v[0] << " " << v[1] << " " << v[2];
  }
  // The visits moved each generation's rows: the prices differ between them.
  EXPECT_NE(shared.predict_us(visits[0])[0], shared.predict_us(visits[1])[0]);  // A100
  EXPECT_NE(shared.predict_us(visits[1])[1], shared.predict_us(visits[2])[1]);  // H100
  EXPECT_EQ(shared.predict_us(visits[1])[0], shared.predict_us(visits[2])[0]);  // A100 untouched
}

TEST(TrainingFit, ParametersApplyToTheirGenerationOnly) {
  const std::vector<std::string> names{"hopper.gemm_efficiency", "hopper.attention_scale"};
  const std::vector<FitParameter> ps = training_fit_parameters(names);
  const std::vector<double> v{0.5, 1.5};
  const topology::GpuSpec h100 = topology::find_node_preset("hgx-h100")->gpu;
  const topology::GpuSpec a100 = topology::find_node_preset("hgx-a100")->gpu;
  const auto base = workloads::ComputeModelParams::for_gpu(h100, workloads::Attention::flash3);
  const auto h = training_compute_params(h100, workloads::Attention::flash3, ps, v);
  EXPECT_DOUBLE_EQ(h.gemm_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(h.attention_fwd_efficiency, 1.5 * base.attention_fwd_efficiency);
  EXPECT_DOUBLE_EQ(h.attention_bwd_efficiency, 1.5 * base.attention_bwd_efficiency);
  const auto a = training_compute_params(a100, workloads::Attention::flash3, ps, v);
  EXPECT_DOUBLE_EQ(a.gemm_efficiency, workloads::ComputeModelParams::for_gpu(a100).gemm_efficiency);
  EXPECT_EQ(training_fit_parameters({}).size(), 3u);
  EXPECT_THROW(training_fit_parameters(std::vector<std::string>{"hopper.gemm"}), InputError);
}

// Tables generated at known GEMM efficiencies: the fit from the hand-set values finds them, and
// each table left out is predicted exactly by the fit on the other two.
TEST(TrainingFit, RecoversKnownEfficienciesAndPredictsLeftOutTablesExactly) {
  std::vector<TrainingTable> tables = synthetic_tables();
  const std::vector<FitParameter> ps = training_fit_parameters({});
  const std::vector<double> truth{0.68, 0.66, 0.74};  // ampere, hopper, blackwell
  publish_at(tables, ps, truth);
  std::vector<FitDataset> ds;
  for (const TrainingTable& t : tables) ds.push_back(make_training_dataset(t, ps));
  FitOptions o;
  o.prior_weight = 0;
  o.max_iterations = 30;
  const CrossValidation cv = cross_validate(ps, ds, o);
  ASSERT_EQ(cv.all.values.size(), 3u);
  for (size_t j = 0; j < 3; ++j) EXPECT_NEAR(cv.all.values[j], truth[j], 0.005 * truth[j]) << ps[j].name;
  for (const CrossValidationRow& r : cv.rows) {
    EXPECT_GT(r.initial_pct, 2) << r.dataset;  // the hand-set values miss the synthetic truth
    EXPECT_LT(r.in_sample_pct, 0.2) << r.dataset;
    EXPECT_LT(r.leave_one_out_pct, 0.2) << r.dataset;
  }
}

}  // namespace
}  // namespace dtsim::validation
