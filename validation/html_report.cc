#include "validation/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "validation/comparison_report.h"

namespace dtsim::validation {
namespace {

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A "nice" upper bound for the y axis: 1, 2 or 5 times a power of ten.
double nice_ceiling(double v) {
  if (v <= 0) return 1;
  double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= v) return m * p;
  return 10 * p;
}

void write_plot(std::ostream& out, const Comparison& c) {
  constexpr double W = 720, H = 360, L = 64, R = 20, T = 20, B = 48;
  if (c.rows.empty()) return;
  double lo = std::log2(static_cast<double>(c.rows.front().size_bytes));
  double hi = std::log2(static_cast<double>(c.rows.back().size_bytes));
  if (hi <= lo) hi = lo + 1;
  double ymax = 0;
  for (const ComparisonRow& r : c.rows)
    ymax = std::max({ymax, r.measured_busbw_gbps, r.predicted_busbw_gbps});
  ymax = nice_ceiling(ymax);
  auto x = [&](int64_t size) {
    return L + (std::log2(static_cast<double>(size)) - lo) / (hi - lo) * (W - L - R);
  };
  auto y = [&](double v) { return T + (1 - v / ymax) * (H - T - B); };

  out << fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" )"
                     R"(viewBox="0 0 {} {}" font-family="sans-serif" font-size="11">)",
                     W, H, W, H)
      << '\n';
  out << fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)",
                     L, T, W - L - R, H - T - B)
      << '\n';
  for (int i = 0; i <= 5; ++i) {
    double v = ymax * i / 5;
    out << fmt::format(R"(<line x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}" stroke="#eee"/>)"
                       R"(<text x="{}" y="{:.1f}" text-anchor="end">{:g}</text>)",
                       L, W - R, y(v), y(v), L - 6, y(v) + 4, v)
        << '\n';
  }
  // One tick per power of 4 keeps labels from overlapping on an 8 B - 8 GiB sweep.
  int step = (hi - lo) > 16 ? 4 : (hi - lo) > 8 ? 2 : 1;
  for (int e = static_cast<int>(std::ceil(lo)); e <= static_cast<int>(std::floor(hi)); e += step) {
    int64_t size = int64_t{1} << e;
    out << fmt::format(R"(<line x1="{:.1f}" x2="{:.1f}" y1="{}" y2="{}" stroke="#eee"/>)"
                       R"(<text x="{:.1f}" y="{}" text-anchor="middle">{}</text>)",
                       x(size), x(size), T, H - B, x(size), H - B + 16, format_size(size))
        << '\n';
  }
  out << fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">message size (log scale)</text>)",
                     (L + W - R) / 2, H - 8)
      << '\n';
  out << fmt::format(R"~(<text transform="translate(14,{}) rotate(-90)" text-anchor="middle">)~"
                     R"(bus bandwidth (GB/s)</text>)",
                     (T + H - B) / 2)
      << '\n';
  auto curve = [&](auto value, const char* color, const char* dash) {
    std::string pts;
    for (const ComparisonRow& r : c.rows)
      pts += fmt::format("{:.1f},{:.1f} ", x(r.size_bytes), y(value(r)));
    out << fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2" )"
                       R"(stroke-dasharray="{}"/>)",
                       pts, color, dash)
        << '\n';
    for (const ComparisonRow& r : c.rows)
      out << fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"/>)", x(r.size_bytes),
                         y(value(r)), color);
    out << '\n';
  };
  curve([](const ComparisonRow& r) { return r.measured_busbw_gbps; }, "#1f77b4", "none");
  curve([](const ComparisonRow& r) { return r.predicted_busbw_gbps; }, "#d62728", "6,4");
  out << fmt::format(R"~(<g transform="translate({},{})"><line x1="0" x2="24" y1="0" y2="0" )~"
                     R"(stroke="#1f77b4" stroke-width="2"/><text x="30" y="4">measured</text>)"
                     R"(<line x1="0" x2="24" y1="16" y2="16" stroke="#d62728" stroke-width="2" )"
                     R"(stroke-dasharray="6,4"/><text x="30" y="20">predicted</text></g>)",
                     L + 12, T + 14)
      << "\n</svg>\n";
}

}  // namespace

void write_html_report(std::ostream& out, std::span<const Comparison> comparisons,
                       const std::string& title) {
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << escape(title)
      << "</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:60em}"
         "table{border-collapse:collapse;font-size:13px}td,th{padding:2px 8px;text-align:right;"
         "border-bottom:1px solid #ddd}.bad{color:#b00}</style></head><body>\n";
  out << "<h1>" << escape(title) << "</h1>\n";
  ErrorSummary all = summarize(comparisons);
  out << fmt::format("<p>{} measurement sets, {} sizes: mean |error| {:.1f}%, worst {:.1f}%.</p>\n",
                     comparisons.size(), all.points, all.mean_abs_pct, all.worst_abs_pct);
  for (const Comparison& c : comparisons) {
    out << fmt::format("<h2>{}</h2>\n<p>{} on {} ranks: mean |error| {:.1f}%, worst {:.1f}% at "
                       "{}.</p>\n",
                       escape(c.name), collectives::name(c.collective), c.ranks,
                       c.summary.mean_abs_pct, c.summary.worst_abs_pct,
                       format_size(c.summary.worst_size));
    write_plot(out, c);
    out << "<table><tr><th>size</th><th>measured us</th><th>predicted us</th><th>error %</th>"
           "<th>measured busbw</th><th>predicted busbw</th><th>algorithm</th></tr>\n";
    for (const ComparisonRow& r : c.rows)
      out << fmt::format("<tr{}><td>{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:+.1f}</td>"
                         "<td>{:.2f}</td><td>{:.2f}</td><td>{}</td></tr>\n",
                         std::abs(r.error_pct) > 25 || r.wrong ? " class=\"bad\"" : "",
                         format_size(r.size_bytes), r.measured_us, r.predicted_us, r.error_pct,
                         r.measured_busbw_gbps, r.predicted_busbw_gbps,
                         escape(r.algorithm.empty() ? "" : r.algorithm + "/" + r.protocol));
    out << "</table>\n";
    for (const std::string& n : c.notes) out << "<p><i>note: " << escape(n) << "</i></p>\n";
  }
  out << "</body></html>\n";
}

}  // namespace dtsim::validation
