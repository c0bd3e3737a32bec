#include "report/sweep_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <ostream>
#include <set>

#include "report/html_report.h"
#include "report/svg_plot.h"

namespace dtsim::report {
namespace {

std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return d;
}

std::string short_key(const std::string& k) {
  const std::size_t dot = k.rfind('.');
  return dot == std::string::npos ? k : k.substr(dot + 1);
}

std::optional<double> metric(const SweepRow& r, const std::string& name) {
  for (const auto& [n, v] : r.metrics) {
    if (n == name) return v;
  }
  return std::nullopt;
}

bool wide(const std::vector<double>& v) {
  if (v.empty()) return false;
  const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  return *mn > 0 && *mx / *mn >= 4;
}

std::string label_of(const SweepTable& t, const SweepRow& r, std::optional<std::size_t> skip) {
  std::string s;
  for (std::size_t k = 0; k < t.varied_keys.size(); ++k) {
    if (skip && k == *skip) continue;
    if (!s.empty()) s += ", ";
    s += short_key(t.varied_keys[k]) + "=" + r.values[k];
  }
  return s.empty() ? "all" : s;
}

}  // namespace

std::optional<std::size_t> scaling_key(const SweepTable& table) {
  std::optional<std::size_t> best;
  for (std::size_t k = 0; k < table.varied_keys.size(); ++k) {
    std::set<double> distinct;
    bool numeric = true;
    for (const SweepRow& r : table.rows) {
      const auto v = number(r.values[k]);
      if (!v) {
        numeric = false;
        break;
      }
      distinct.insert(*v);
    }
    if (!numeric || distinct.size() < 2) continue;
    const std::string s = short_key(table.varied_keys[k]);
    if (s.find("nodes") != std::string::npos || s.find("gpus") != std::string::npos) return k;
    if (!best) best = k;
  }
  return best;
}

void write_sweep_html(const SweepTable& table, const std::string& name, std::ostream& out) {
  const std::vector<std::string> metrics = table.metric_names();
  const std::optional<std::string> tm = time_metric(metrics);
  std::size_t errors = 0, front = 0, over_memory = 0;
  const SweepRow* fastest = nullptr;
  const SweepRow* cheapest = nullptr;
  for (const SweepRow& r : table.rows) {
    if (!r.error.empty()) {
      ++errors;
      continue;
    }
    // A training point whose memory estimate exceeds HBM is no candidate (pareto.h).
    if (const auto fits = metric(r, "memory_fits"); fits && *fits == 0) {
      ++over_memory;
      continue;
    }
    front += r.pareto ? 1 : 0;
    const auto t = tm ? metric(r, *tm) : std::nullopt;
    if (t && (!fastest || *t < *metric(*fastest, *tm))) fastest = &r;
    if (!cheapest || r.capex_usd < cheapest->capex_usd) cheapest = &r;
  }

  HtmlPage page("Sweep: " + name);
  std::vector<std::pair<std::string, std::string>> summary = {
      {"sweep file", table.sweep_file},
      {"base scenario", table.base_file},
      {"points", std::to_string(table.rows.size())},
      {"points that failed", std::to_string(errors)},
      {"points that do not fit in HBM", std::to_string(over_memory)},
      {"points on the Pareto front", std::to_string(front)},
  };
  if (fastest && tm) {
    summary.push_back(
        {"fastest", fmt::format("{} = {:.4g} ({}; ${:.4g}M)", *tm, *metric(*fastest, *tm),
                                label_of(table, *fastest, {}), fastest->capex_usd / 1e6)});
  }
  if (cheapest) {
    summary.push_back({"cheapest", fmt::format("${:.4g}M ({})", cheapest->capex_usd / 1e6,
                                               label_of(table, *cheapest, {}))});
  }
  if (table.shard) summary.push_back({"shard", *table.shard});
  page.key_values("Summary", summary);

  const std::optional<std::size_t> xk = scaling_key(table);
  if (tm && xk) {
    std::map<std::string, std::vector<std::pair<double, double>>> curves;
    std::vector<std::string> order;
    std::vector<double> xs, ys;
    for (const SweepRow& r : table.rows) {
      const auto t = metric(r, *tm);
      const auto x = number(r.values[*xk]);
      if (!r.error.empty() || !t || !x) continue;
      const std::string series = label_of(table, r, xk);
      if (!curves.count(series)) order.push_back(series);
      curves[series].push_back({*x, *t});
      xs.push_back(*x);
      ys.push_back(*t);
    }
    SvgPlot plot("Scaling: " + *tm + " against " + short_key(table.varied_keys[*xk]),
                 table.varied_keys[*xk], *tm, 900, 440);
    plot.log_x(wide(xs)).log_y(wide(ys));
    constexpr std::size_t kMaxCurves = 12;  // beyond this a legend stops being readable
    for (std::size_t i = 0; i < order.size() && i < kMaxCurves; ++i)
      plot.line(order[i], curves[order[i]]);
    std::string note;
    if (order.size() > kMaxCurves)
      note = fmt::format("<p>{} of {} curves shown.</p>\n", kMaxCurves, order.size());
    page.section("Scaling curves", plot.svg() + note);
  }

  if (tm) {
    std::vector<std::pair<double, double>> all, best;
    for (const SweepRow& r : table.rows) {
      const auto t = metric(r, *tm);
      if (!r.error.empty() || !t) continue;
      (r.pareto ? best : all).push_back({r.capex_usd / 1e6, *t});
    }
    std::vector<double> ys;
    ys.reserve(all.size() + best.size());
    for (const auto& p : all) ys.push_back(p.second);
    for (const auto& p : best) ys.push_back(p.second);
    SvgPlot plot("Pareto front: " + *tm + " against capex", "capex (million USD)", *tm, 900, 440);
    plot.log_y(wide(ys));
    plot.scatter("dominated points", all);
    plot.line("Pareto front", best);
    std::string rows = "<table class=\"front\">\n<tr>";
    for (const std::string& k : table.varied_keys) rows += "<th>" + xml_escape(k) + "</th>";
    for (const std::string& m : metrics) rows += "<th>" + xml_escape(m) + "</th>";
    rows += "<th>capex (USD)</th><th>power (kW)</th></tr>\n";
    for (const SweepRow& r : table.rows) {
      if (!r.pareto) continue;
      rows += "<tr class=\"front\">";
      for (const std::string& v : r.values) rows += "<td>" + xml_escape(v) + "</td>";
      for (const std::string& m : metrics) {
        const auto v = metric(r, m);
        rows += "<td>" + (v ? fmt::format("{:.4g}", *v) : std::string()) + "</td>";
      }
      rows += fmt::format("<td>{:.0f}</td><td>{:.1f}</td></tr>\n", r.capex_usd, r.power_w / 1e3);
    }
    page.section("Pareto front", plot.svg() + rows + "</table>\n");
  }

  // Where the front's time goes, when the evaluation reports shares of it.
  std::vector<std::string> shares;
  for (const std::string& m : metrics) {
    if (m.size() > 6 && m.compare(m.size() - 6, 6, "_share") == 0) shares.push_back(m);
  }
  if (tm && !shares.empty()) {
    std::vector<std::string> bars;
    std::vector<std::pair<std::string, std::vector<double>>> segments;
    segments.reserve(shares.size());
    for (const std::string& s : shares) segments.push_back({s.substr(0, s.size() - 6), {}});
    for (const SweepRow& r : table.rows) {
      const auto t = metric(r, *tm);
      if (!r.pareto || !t) continue;
      bars.push_back(label_of(table, r, {}));
      for (std::size_t i = 0; i < shares.size(); ++i)
        segments[i].second.push_back(*t * metric(r, shares[i]).value_or(0));
    }
    page.section("Time breakdown of the front",
                 stacked_bars_svg("Where the time goes", *tm, bars, segments, 900, 380));
  }
  if (errors > 0) {
    std::string t = "<table>\n<tr><th>point</th><th>error</th></tr>\n";
    for (const SweepRow& r : table.rows) {
      if (!r.error.empty())
        t += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", r.index, xml_escape(r.error));
    }
    page.section("Points that failed", t + "</table>\n");
  }
  page.scenario(table.base_scenario);
  out << page.render();
}

}  // namespace dtsim::report
