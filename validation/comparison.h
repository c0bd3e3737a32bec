// Comparison: a measurement set lined up against the model's prediction for the same collective,
// sizes and rank count, one row per size, with the error statistics validate prints. The
// predictor is any function, so the comparison is tested without a cluster model and validate
// plugs in the scenario's analytical model.
//   Comparison c = compare(set, 16, [&](auto kind, int64_t bytes, int ranks) { ... });
//   fmt::print("{:.1f}% mean, {:.1f}% worst\n", c.summary.mean_abs_pct, c.summary.worst_abs_pct);
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "validation/measurement.h"

namespace dtsim::validation {

struct Prediction {
  double time_us = 0;
  std::string algorithm;  // what the model's tuner chose ("ring"), empty when it does not say
  std::string protocol;
  int channels = 0;
};

using Predictor =
    std::function<Prediction(collectives::CollectiveKind kind, int64_t bytes, int ranks)>;

struct ComparisonRow {
  int64_t size_bytes = 0;
  int samples = 0;            // measured rows merged into this one (out- and in-place)
  double measured_us = 0;     // mean over the merged rows
  double predicted_us = 0;
  double error_pct = 0;       // (predicted - measured) / measured * 100
  double measured_busbw_gbps = 0;
  double predicted_busbw_gbps = 0;
  std::string algorithm;
  std::string protocol;
  bool wrong = false;         // the benchmark flagged a wrong result: shown, not scored
};

struct ErrorSummary {
  size_t points = 0;
  double mean_abs_pct = 0;
  double worst_abs_pct = 0;
  int64_t worst_size = 0;
  double rms_log_error = 0;   // sqrt(mean(ln(pred/meas)^2)): what calibrate minimises
};

struct Comparison {
  std::string name;
  collectives::CollectiveKind collective = collectives::CollectiveKind::all_reduce;
  int ranks = 0;
  std::vector<ComparisonRow> rows;
  ErrorSummary summary;
  std::vector<std::string> notes;
};

// Merges out-of-place and in-place rows of a size (they measure the same transfer), skips rows
// with a zero time, and predicts each size once.
Comparison compare(const MeasurementSet& set, int ranks, const Predictor& predict);

ErrorSummary summarize(std::span<const ComparisonRow> rows);

// Over several comparisons: every scored row counts once.
ErrorSummary summarize(std::span<const Comparison> comparisons);

}  // namespace dtsim::validation
