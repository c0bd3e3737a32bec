// SVG plotting: small, dependency-free charts as inline SVG text for the HTML reports: an x-y
// plot with linear or log axes, lines, points and a legend; stacked bars; a heat map; and a
// timeline (one row per track, one bar per span), the view the trace gives in Perfetto.
//   report::SvgPlot p("Scaling", "GPUs", "iteration time (s)");
//   p.log_x().log_y().line("tp=8", {{64, 9.1}, {128, 4.8}});
//   std::string svg = p.svg();
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/timeline.h"

namespace dtsim::report {

// Escapes text for XML content and attribute values.
std::string xml_escape(std::string_view s);

class SvgPlot {
 public:
  SvgPlot(std::string title, std::string x_label, std::string y_label, int width = 640,
          int height = 400);

  SvgPlot& log_x(bool on = true);
  SvgPlot& log_y(bool on = true);
  // A series drawn as a polyline through its points (sorted by x) with a marker on each.
  SvgPlot& line(std::string name, std::vector<std::pair<double, double>> points);
  // A series drawn as markers only; `emphasis` draws them larger and filled.
  SvgPlot& scatter(std::string name, std::vector<std::pair<double, double>> points,
                   bool emphasis = false);

  // The plot as one <svg> element. Points that a log axis cannot show (<= 0) are left out.
  std::string svg() const;

 private:
  struct Series {
    std::string name;
    std::vector<std::pair<double, double>> points;
    bool lines = true;
    bool emphasis = false;
  };
  std::string title_, x_label_, y_label_;
  int width_, height_;
  bool log_x_ = false, log_y_ = false;
  std::vector<Series> series_;
};

// One bar per entry of `bars`; `segments[k].second[i]` is segment k's height in bar i.
std::string stacked_bars_svg(
    const std::string& title, const std::string& y_label, const std::vector<std::string>& bars,
    const std::vector<std::pair<std::string, std::vector<double>>>& segments, int width = 640,
    int height = 360);

// Rows of cells coloured from white (0) to dark red (1); values are clamped to [0, 1].
std::string heat_map_svg(const std::string& title, const std::vector<std::string>& rows,
                         const std::vector<std::vector<double>>& values, const std::string& x_label,
                         int width = 900);

// A Perfetto-like view of a timeline: one row per track with spans, bars coloured by category,
// a time axis in microseconds.
std::string timeline_svg(const Timeline& timeline, int width = 1100);

}  // namespace dtsim::report
