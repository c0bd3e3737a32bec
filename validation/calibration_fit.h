// Calibration fit: robust least squares on log time. Finds the parameter values that make the
// model's predicted times match measured times across one or several datasets, by
// Levenberg-Marquardt with a Huber loss on r = ln(predicted / measured) (so a few odd sizes do
// not drag the physics), a forward-difference Jacobian, log reparametrisation of positive
// parameters and clamping to bounds, and a weak pull towards the starting values so parameters
// a dataset cannot see stay where physics put them. Small enough to read in one sitting.
//   FitResult r = fit_parameters(parameters, datasets, {});
//   auto cv = cross_validate(parameters, datasets, {});   // in-sample vs leave-one-dataset-out
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "collectives/collective.h"

namespace dtsim::validation {

struct FitParameter {
  std::string name;
  double initial = 0;
  double lower = 0;
  double upper = 0;
};

struct FitPoint {
  collectives::CollectiveKind collective = collectives::CollectiveKind::all_reduce;
  int64_t bytes = 0;
  int ranks = 0;
  double measured_us = 0;
};

// One dataset: its measured points and how to predict all of them for a given parameter vector
// (the dataset's own scenario with those parameters; building the model once per vector, not
// once per point, is what keeps a fit fast).
struct FitDataset {
  std::string name;
  std::vector<FitPoint> points;
  std::function<std::vector<double>(std::span<const double> values)> predict_us;
};

struct FitOptions {
  double huber_delta = 0.15;    // in ln units: residuals beyond ~15% count linearly
  double prior_weight = 0.3;    // pull towards the initial values, per unit of log range
  int max_iterations = 60;
  double tolerance = 1e-7;      // relative cost decrease that counts as converged
  double step_tolerance = 0;    // a step no larger in any parameter (in ln units where positive) ends the fit
};

struct FitResult {
  std::vector<double> values;
  double initial_cost = 0;
  double final_cost = 0;
  int iterations = 0;
  bool converged = false;  // false: stopped at max_iterations
};

FitResult fit_parameters(std::span<const FitParameter> parameters,
                         std::span<const FitDataset> datasets, const FitOptions& options);

// Mean |predicted - measured| / measured over a dataset, in percent.
double mean_abs_error_pct(const FitDataset& dataset, std::span<const double> values);

struct CrossValidationRow {
  std::string dataset;
  size_t points = 0;
  double initial_pct = 0;        // with the starting values
  double in_sample_pct = 0;      // with the fit on every dataset
  double leave_one_out_pct = 0;  // with the fit on every dataset but this one
  FitResult held_out;            // that fit
};

struct CrossValidation {
  FitResult all;                       // the fit on every dataset
  std::vector<CrossValidationRow> rows;
};

// Fits on all datasets, then once per dataset with that dataset left out and predicted.
CrossValidation cross_validate(std::span<const FitParameter> parameters,
                               std::span<const FitDataset> datasets, const FitOptions& options);

}  // namespace dtsim::validation
