#include "validation/calibration_fit.h"

#include <gtest/gtest.h>

#include <cmath>

namespace dtsim::validation {
namespace {

using collectives::CollectiveKind;

// time = latency + bytes / bandwidth, with latency in us and bandwidth in GB/s (1e3 bytes/us).
double alpha_beta(std::span<const double> v, const FitPoint& p) {
  return v[0] + static_cast<double>(p.bytes) / (v[1] * 1e3);
}

FitDataset synthetic_dataset(const std::string& name, double latency, double bandwidth) {
  FitDataset d;
  d.name = name;
  for (int64_t b = 1024; b <= (int64_t{1} << 30); b *= 4) {
    FitPoint p{CollectiveKind::all_reduce, b, 8, 0};
    std::vector<double> truth{latency, bandwidth};
    p.measured_us = alpha_beta(truth, p);
    d.points.push_back(p);
  }
  d.predict_us = [points = d.points](std::span<const double> v) {
    std::vector<double> out;
    for (const FitPoint& p : points) out.push_back(alpha_beta(v, p));
    return out;
  };
  return d;
}

std::vector<FitParameter> start() {
  return {{"latency_us", 10.0, 0.5, 200.0}, {"bandwidth_gbps", 20.0, 1.0, 1000.0}};
}

TEST(CalibrationFit, RecoversTheParametersThatGeneratedTheData) {
  std::vector<FitDataset> ds{synthetic_dataset("a", 35.0, 180.0)};
  FitOptions o;
  o.prior_weight = 0;
  FitResult r = fit_parameters(start(), ds, o);
  EXPECT_NEAR(r.values[0], 35.0, 0.05);
  EXPECT_NEAR(r.values[1], 180.0, 0.2);
  EXPECT_LT(r.final_cost, r.initial_cost);
}

TEST(CalibrationFit, KeepsValuesInsideTheirBounds) {
  std::vector<FitDataset> ds{synthetic_dataset("a", 35.0, 5000.0)};
  FitResult r = fit_parameters(start(), ds, {});
  EXPECT_LE(r.values[1], 1000.0);
  EXPECT_GE(r.values[1], 1.0);
}

TEST(CalibrationFit, OneOutlierBarelyMovesTheFit) {
  std::vector<FitDataset> ds{synthetic_dataset("a", 35.0, 180.0)};
  ds[0].points[3].measured_us *= 5;  // a size where the benchmark hiccupped
  FitOptions o;
  o.prior_weight = 0;
  FitResult r = fit_parameters(start(), ds, o);
  EXPECT_NEAR(r.values[1], 180.0, 180.0 * 0.05);
}

TEST(CalibrationFit, ParameterNoDatasetSeesStaysAtItsStart) {
  std::vector<FitParameter> ps = start();
  ps.push_back({"unused", 3.0, 1.0, 10.0});
  std::vector<FitDataset> ds{synthetic_dataset("a", 35.0, 180.0)};
  FitResult r = fit_parameters(ps, ds, {});
  EXPECT_NEAR(r.values[2], 3.0, 1e-9);
}

// The fit says how it ended: converged under the cap, stopped at the cap, or ended by a step too
// small to count, which is not taken.
TEST(CalibrationFit, SaysWhetherItConvergedOrStoppedAtTheCap) {
  std::vector<FitDataset> ds{synthetic_dataset("a", 35.0, 180.0)};
  FitOptions o;
  o.prior_weight = 0;
  const FitResult full = fit_parameters(start(), ds, o);
  EXPECT_TRUE(full.converged);
  EXPECT_LT(full.iterations, o.max_iterations);
  o.max_iterations = 2;
  const FitResult capped = fit_parameters(start(), ds, o);
  EXPECT_FALSE(capped.converged);
  EXPECT_EQ(capped.iterations, 2);
  EXPECT_GT(capped.final_cost, full.final_cost);
  o.max_iterations = 60;
  o.tolerance = 1;  // every step lowers the cost by less than all of it: the first one taken ends it
  const FitResult loose = fit_parameters(start(), ds, o);
  EXPECT_TRUE(loose.converged);
  EXPECT_EQ(loose.iterations, 1);
  EXPECT_LT(loose.final_cost, loose.initial_cost);
  o.tolerance = 1e-7;
  o.step_tolerance = 100;  // more than the box is wide in ln units: every step is negligible
  const FitResult still = fit_parameters(start(), ds, o);
  EXPECT_TRUE(still.converged);
  EXPECT_EQ(still.iterations, 1);
  EXPECT_DOUBLE_EQ(still.values[0], 10.0);
  EXPECT_DOUBLE_EQ(still.values[1], 20.0);
  EXPECT_EQ(still.final_cost, still.initial_cost);
}

TEST(CalibrationFit, ErrorIsMeanAbsolutePercent) {
  FitDataset d = synthetic_dataset("a", 35.0, 180.0);
  std::vector<double> truth{35.0, 180.0};
  EXPECT_NEAR(mean_abs_error_pct(d, truth), 0.0, 1e-9);
}

TEST(CrossValidation, LeaveOneOutPredictsADatasetFromTheOthers) {
  std::vector<FitDataset> ds{synthetic_dataset("a", 35.0, 180.0), synthetic_dataset("b", 35.0, 180.0),
                             synthetic_dataset("c", 35.0, 180.0)};
  CrossValidation cv = cross_validate(start(), ds, {});
  ASSERT_EQ(cv.rows.size(), 3u);
  for (const CrossValidationRow& row : cv.rows) {
    EXPECT_GT(row.initial_pct, 10.0);
    EXPECT_LT(row.in_sample_pct, 1.0);
    EXPECT_LT(row.leave_one_out_pct, 1.0);  // same physics everywhere: the others predict it
    EXPECT_TRUE(row.held_out.converged) << row.dataset;
    EXPECT_GT(row.held_out.iterations, 0) << row.dataset;
    EXPECT_LT(row.held_out.final_cost, row.held_out.initial_cost) << row.dataset;
  }
}

TEST(CrossValidation, ADatasetUnlikeTheOthersShowsALargerLeaveOneOutError) {
  std::vector<FitDataset> ds{synthetic_dataset("a", 35.0, 180.0), synthetic_dataset("b", 35.0, 180.0),
                             synthetic_dataset("odd", 35.0, 40.0)};
  CrossValidation cv = cross_validate(start(), ds, {});
  EXPECT_GT(cv.rows[2].leave_one_out_pct, cv.rows[2].in_sample_pct);
  EXPECT_GT(cv.rows[2].leave_one_out_pct, 25.0);
}

}  // namespace
}  // namespace dtsim::validation
