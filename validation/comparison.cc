#include "validation/comparison.h"

#include <cmath>
#include <map>

namespace dtsim::validation {

Comparison compare(const MeasurementSet& set, int ranks, const Predictor& predict) {
  Comparison c;
  c.name = set.display_name();
  c.collective = set.collective;
  c.ranks = ranks;
  c.notes = set.warnings;

  struct Acc {
    double time = 0, busbw = 0;
    int n = 0;
    bool wrong = false;
  };
  std::map<int64_t, Acc> by_size;
  for (const MeasuredPoint& p : set.points) {
    Acc& a = by_size[p.size_bytes];
    if (p.wrong && *p.wrong != 0) a.wrong = true;
    if (p.time_us <= 0) continue;
    a.time += p.time_us;
    a.busbw += p.busbw_gbps;
    ++a.n;
  }
  const double factor = collectives::busbw_factor(set.collective, ranks);
  for (const auto& [size, a] : by_size) {
    if (a.n == 0) continue;
    ComparisonRow row;
    row.size_bytes = size;
    row.samples = a.n;
    row.measured_us = a.time / a.n;
    row.measured_busbw_gbps = a.busbw / a.n;
    Prediction p = predict(set.collective, size, ranks);
    row.predicted_us = p.time_us;
    row.algorithm = p.algorithm;
    row.protocol = p.protocol;
    row.error_pct = (p.time_us - row.measured_us) / row.measured_us * 100.0;
    // bytes per microsecond are MB/s; /1e3 gives GB/s.
    row.predicted_busbw_gbps = p.time_us > 0 ? static_cast<double>(size) / p.time_us / 1e3 * factor : 0;
    row.wrong = a.wrong;
    if (a.wrong) c.notes.push_back("size " + std::to_string(size) +
                                   ": the benchmark reported wrong results; not scored");
    c.rows.push_back(std::move(row));
  }
  c.summary = summarize(c.rows);
  return c;
}

ErrorSummary summarize(std::span<const ComparisonRow> rows) {
  ErrorSummary s;
  double sum_abs = 0, sum_log2 = 0;
  for (const ComparisonRow& r : rows) {
    if (r.wrong || r.measured_us <= 0 || r.predicted_us <= 0) continue;
    double e = std::abs(r.error_pct);
    sum_abs += e;
    double l = std::log(r.predicted_us / r.measured_us);
    sum_log2 += l * l;
    if (s.points == 0 || e > s.worst_abs_pct) {
      s.worst_abs_pct = e;
      s.worst_size = r.size_bytes;
    }
    ++s.points;
  }
  if (s.points > 0) {
    s.mean_abs_pct = sum_abs / static_cast<double>(s.points);
    s.rms_log_error = std::sqrt(sum_log2 / static_cast<double>(s.points));
  }
  return s;
}

ErrorSummary summarize(std::span<const Comparison> comparisons) {
  std::vector<ComparisonRow> all;
  for (const Comparison& c : comparisons) all.insert(all.end(), c.rows.begin(), c.rows.end());
  return summarize(all);
}

}  // namespace dtsim::validation
