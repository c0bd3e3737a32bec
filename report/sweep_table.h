// SweepTable: a sweep's results, one row per point, and their CSV form. The CSV opens with
// comment lines that say what produced it (schema version, sweep file, base scenario and the
// resolved base scenario), then a header and rows ordered by point index:
//   # schema_version: 1
//   point,cluster.fabric.oversubscription,iteration_time_s,...,capex_usd,power_w,pareto,error
// Reading it back is what makes a sweep resumable and lets shards be merged.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dtsim::report {

inline constexpr int kSweepSchemaVersion = 1;

struct SweepRow {
  std::size_t index = 0;
  std::vector<std::string> values;  // one per varied key
  std::vector<std::pair<std::string, double>> metrics;
  double capex_usd = 0;
  double power_w = 0;
  bool pareto = false;
  std::string error;  // empty when the point ran; else why it did not
};

struct SweepTable {
  std::string sweep_file;
  std::string base_file;
  std::string base_scenario;         // the resolved base scenario as YAML
  std::optional<std::string> shard;  // "I/N" for a shard's partial table
  std::vector<std::string> varied_keys;
  std::vector<SweepRow> rows;  // ascending index

  // Metric columns: every metric name in order of first appearance by point index, so that the
  // columns do not depend on which point finished first.
  std::vector<std::string> metric_names() const;
};

// The metric the Pareto front minimises with capex: the first whose name contains "time", else
// the first. nullopt when there are no metrics.
std::optional<std::string> time_metric(const std::vector<std::string>& metric_names);

// Sets every row's `pareto` flag: rows without an error, on the front of time_metric vs capex.
void mark_pareto(SweepTable& table);

void write_sweep_csv(const SweepTable& table, std::ostream& out);
// Writes to `path` through a temporary file renamed into place, so a reader (or a resumed run)
// never sees half a table.
void write_sweep_csv_file(const SweepTable& table, const std::string& path);

// Parses what write_sweep_csv wrote. Throws InputError naming `source` and the line when the
// text is not such a table.
SweepTable read_sweep_csv(std::istream& in, const std::string& source);
SweepTable read_sweep_csv_file(const std::string& path);

}  // namespace dtsim::report
