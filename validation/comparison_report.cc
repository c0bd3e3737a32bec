#include "validation/comparison_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

namespace dtsim::validation {
namespace {

void write_table(std::ostream& out, std::span<const Comparison> comparisons) {
  for (const Comparison& c : comparisons) {
    out << fmt::format("# {}: {} on {} ranks\n", c.name, collectives::name(c.collective), c.ranks);
    out << fmt::format("{:>10}  {:>12}  {:>12}  {:>8}  {:>11}  {:>11}  {}\n", "size",
                       "measured_us", "predicted_us", "error_%", "meas_busbw", "pred_busbw",
                       "algorithm/protocol");
    for (const ComparisonRow& r : c.rows) {
      std::string choice = r.algorithm.empty() ? "" : r.algorithm + "/" + r.protocol;
      if (r.wrong) choice += " (wrong results, not scored)";
      out << fmt::format("{:>10}  {:>12.2f}  {:>12.2f}  {:>+8.1f}  {:>11.2f}  {:>11.2f}  {}\n",
                         format_size(r.size_bytes), r.measured_us, r.predicted_us, r.error_pct,
                         r.measured_busbw_gbps, r.predicted_busbw_gbps, choice);
    }
    out << fmt::format("# mean |error| {:.1f}%, worst {:.1f}% at {}, over {} sizes\n",
                       c.summary.mean_abs_pct, c.summary.worst_abs_pct,
                       format_size(c.summary.worst_size), c.summary.points);
    for (const std::string& n : c.notes) out << "# note: " << n << '\n';
    out << '\n';
  }
  if (comparisons.size() > 1) {
    ErrorSummary all = summarize(comparisons);
    out << fmt::format("# all: mean |error| {:.1f}%, worst {:.1f}%, over {} sizes in {} sets\n",
                       all.mean_abs_pct, all.worst_abs_pct, all.points, comparisons.size());
  }
}

void write_csv(std::ostream& out, std::span<const Comparison> comparisons) {
  out << "dataset,collective,ranks,size_bytes,measured_us,predicted_us,error_pct,"
         "measured_busbw_GBps,predicted_busbw_GBps,algorithm,protocol,scored\n";
  for (const Comparison& c : comparisons)
    for (const ComparisonRow& r : c.rows)
      out << fmt::format("{},{},{},{},{:.3f},{:.3f},{:.2f},{:.3f},{:.3f},{},{},{}\n", c.name,
                         collectives::name(c.collective), c.ranks, r.size_bytes, r.measured_us,
                         r.predicted_us, r.error_pct, r.measured_busbw_gbps,
                         r.predicted_busbw_gbps, r.algorithm, r.protocol, r.wrong ? 0 : 1);
}

nlohmann::json summary_json(const ErrorSummary& s) {
  return {{"points", s.points},
          {"mean_abs_error_pct", s.mean_abs_pct},
          {"worst_abs_error_pct", s.worst_abs_pct},
          {"worst_size_bytes", s.worst_size},
          {"rms_log_error", s.rms_log_error}};
}

void write_json(std::ostream& out, std::span<const Comparison> comparisons) {
  nlohmann::json doc;
  doc["schema_version"] = 1;
  doc["datasets"] = nlohmann::json::array();
  for (const Comparison& c : comparisons) {
    nlohmann::json rows = nlohmann::json::array();
    for (const ComparisonRow& r : c.rows)
      rows.push_back({{"size_bytes", r.size_bytes},
                      {"measured_us", r.measured_us},
                      {"predicted_us", r.predicted_us},
                      {"error_pct", r.error_pct},
                      {"measured_busbw_GBps", r.measured_busbw_gbps},
                      {"predicted_busbw_GBps", r.predicted_busbw_gbps},
                      {"algorithm", r.algorithm},
                      {"protocol", r.protocol},
                      {"scored", !r.wrong}});
    doc["datasets"].push_back({{"name", c.name},
                               {"collective", collectives::name(c.collective)},
                               {"ranks", c.ranks},
                               {"rows", rows},
                               {"summary", summary_json(c.summary)},
                               {"notes", c.notes}});
  }
  doc["summary"] = summary_json(summarize(comparisons));
  out << doc.dump(2) << '\n';
}

}  // namespace

std::string format_size(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  int64_t v = bytes;
  while (u < 4 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{}{}", v, kUnits[u]);
}

void write_comparison(std::ostream& out, std::span<const Comparison> comparisons,
                      ComparisonFormat format) {
  switch (format) {
    case ComparisonFormat::table: write_table(out, comparisons); break;
    case ComparisonFormat::csv: write_csv(out, comparisons); break;
    case ComparisonFormat::json: write_json(out, comparisons); break;
  }
}

}  // namespace dtsim::validation
