// HTML reports: one self-contained page (no scripts, fonts or stylesheets fetched from anywhere)
// with a run's summary, the time breakdown as a stacked bar, a link-utilisation heat map and a
// Perfetto-like timeline, all as inline SVG from svg_plot.h. Sweeps get their own page
// (sweep_html.h) built from the same pieces.
//   report::RunReport r{.name = s.name, .scenario = config::dump_scenario(s)};
//   r.summary = {{"iteration time", "8.1 s"}};  r.timeline = &timeline;
//   report::write_run_html(r, out);
#pragma once

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "report/timeline.h"

namespace dtsim::report {

inline constexpr int kHtmlSchemaVersion = 1;

// A page: a title, sections of HTML in order, and the scenario that produced it (shown folded).
// Carries the schema version in a <meta> tag so that tools can tell what they read.
class HtmlPage {
 public:
  explicit HtmlPage(std::string title) : title_(std::move(title)) {}
  void key_values(const std::string& heading,
                  const std::vector<std::pair<std::string, std::string>>& rows);
  void section(const std::string& heading, const std::string& html);
  // A table with a header row; every cell is escaped.
  void table(const std::string& heading, const std::vector<std::string>& columns,
             const std::vector<std::vector<std::string>>& rows);
  void scenario(const std::string& yaml) { scenario_ = yaml; }
  std::string render() const;

 private:
  std::string title_;
  std::string body_;
  std::string scenario_;
};

// One bar of a time breakdown: seconds per category (compute, exposed communication, host wait,
// bubble).
struct TimeBreakdown {
  std::string label;
  std::vector<std::pair<std::string, double>> parts;
};

// A table section of a run page, after the breakdown (e.g. the busiest ops).
struct TableSection {
  std::string heading;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

struct RunReport {
  std::string name;
  std::string scenario;  // the resolved scenario (YAML)
  std::vector<std::pair<std::string, std::string>> summary;
  std::vector<TimeBreakdown> breakdown;
  std::vector<TableSection> tables;
  const Timeline* timeline = nullptr;  // heat map and timeline view when set
};

void write_run_html(const RunReport& report, std::ostream& out);

// Link utilisation as a grid for the heat map: one row per track with "util" counter samples,
// `bins` columns over [start, end), each the time-weighted mean of the sampled value (a sample
// holds until the next one).
struct UtilisationGrid {
  std::vector<std::string> rows;
  std::vector<std::vector<double>> values;
  Time start;
  Time end;
};
UtilisationGrid link_utilisation(const Timeline& timeline, int bins);

}  // namespace dtsim::report
