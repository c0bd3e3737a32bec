#include "report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>

#include "report/svg_plot.h"

namespace dtsim::report {

void HtmlPage::key_values(const std::string& heading,
                          const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string t = "<table class=\"kv\">\n";
  for (const auto& [k, v] : rows)
    t += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", xml_escape(k), xml_escape(v));
  section(heading, t + "</table>\n");
}

void HtmlPage::table(const std::string& heading, const std::vector<std::string>& columns,
                     const std::vector<std::vector<std::string>>& rows) {
  std::string t = "<table>\n<tr>";
  for (const std::string& c : columns) t += "<th>" + xml_escape(c) + "</th>";
  t += "</tr>\n";
  for (const auto& row : rows) {
    t += "<tr>";
    for (const std::string& cell : row) t += "<td>" + xml_escape(cell) + "</td>";
    t += "</tr>\n";
  }
  section(heading, t + "</table>\n");
}

void HtmlPage::section(const std::string& heading, const std::string& html) {
  body_ += fmt::format("<section>\n<h2>{}</h2>\n{}</section>\n", xml_escape(heading), html);
}

std::string HtmlPage::render() const {
  // Inline style only: the page must open from a file with no network.
  std::string o = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"generator\" content=\"dtsim\">\n<meta name=\"dtsim-schema-version\" "
      "content=\"{}\">\n"
      "<title>{}</title>\n<style>\n"
      "body{{font-family:sans-serif;margin:24px;color:#222;background:#fff}}\n"
      "h1{{font-size:22px}} h2{{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}}\n"
      "table{{border-collapse:collapse;font-size:13px}} th,td{{border:1px solid #ddd;padding:3px "
      "8px;text-align:left}}\n"
      "th{{background:#f4f4f4}} tr.front td{{background:#eef7ee;font-weight:bold}}\n"
      "pre{{background:#f7f7f7;padding:8px;font-size:12px;overflow:auto}} "
      "svg{{display:block;margin:8px 0}}\n"
      "</style>\n</head>\n<body>\n<h1>{}</h1>\n",
      kHtmlSchemaVersion, xml_escape(title_), xml_escape(title_));
  o += body_;
  if (!scenario_.empty()) {
    o += fmt::format(
        "<section>\n<h2>Scenario</h2>\n<details><summary>resolved scenario</summary>\n"
        "<pre class=\"scenario\">{}</pre></details>\n</section>\n",
        xml_escape(scenario_));
  }
  return o + "</body>\n</html>\n";
}

UtilisationGrid link_utilisation(const Timeline& timeline, int bins) {
  UtilisationGrid g;
  const auto& tracks = timeline.tracks();
  std::map<uint32_t, std::vector<const CounterSample*>> by_track;
  for (const CounterSample& c : timeline.counters()) {
    if (c.track < tracks.size() && c.name.find("util") != std::string::npos)
      by_track[c.track].push_back(&c);
  }
  if (by_track.empty() || bins <= 0) return g;
  g.start = Time::max();
  g.end = Time::zero();
  for (const auto& [track, samples] : by_track) {
    for (const CounterSample* c : samples) {
      g.start = std::min(g.start, c->at);
      g.end = std::max(g.end, c->at);
    }
  }
  for (const Span& s : timeline.spans()) g.end = std::max(g.end, s.end);
  if (g.end <= g.start) g.end = g.start + Time::ps(1);
  const double span_ps = static_cast<double>((g.end - g.start).ps());
  for (auto& [track, samples] : by_track) {
    std::stable_sort(samples.begin(), samples.end(),
                     [](const CounterSample* a, const CounterSample* b) { return a->at < b->at; });
    std::vector<double> row(static_cast<std::size_t>(bins), 0);
    for (std::size_t i = 0; i < samples.size(); ++i) {
      // The sample holds over [at, next at) (or to the end).
      const double a = static_cast<double>((samples[i]->at - g.start).ps());
      const double b = i + 1 < samples.size()
                           ? static_cast<double>((samples[i + 1]->at - g.start).ps())
                           : span_ps;
      for (int k = 0; k < bins; ++k) {
        const double lo = span_ps * k / bins, hi = span_ps * (k + 1) / bins;
        const double overlap = std::min(b, hi) - std::max(a, lo);
        if (overlap > 0)
          row[static_cast<std::size_t>(k)] += samples[i]->value * overlap / (hi - lo);
      }
    }
    g.rows.push_back(tracks[track].thread);
    g.values.push_back(std::move(row));
  }
  return g;
}

void write_run_html(const RunReport& report, std::ostream& out) {
  HtmlPage page(report.name);
  page.key_values("Summary", report.summary);
  if (!report.breakdown.empty()) {
    std::vector<std::string> bars;
    std::vector<std::pair<std::string, std::vector<double>>> segments;
    for (const TimeBreakdown& b : report.breakdown) {
      bars.push_back(b.label);
      for (const auto& [part, seconds] : b.parts) {
        auto it = std::find_if(segments.begin(), segments.end(),
                               [&part = part](const auto& s) { return s.first == part; });
        if (it == segments.end()) {
          segments.push_back({part, std::vector<double>(report.breakdown.size(), 0)});
          it = segments.end() - 1;
        }
        it->second[bars.size() - 1] = seconds;
      }
    }
    page.section("Time breakdown",
                 stacked_bars_svg("Where the time goes", "seconds", bars, segments));
  }
  for (const TableSection& t : report.tables) page.table(t.heading, t.columns, t.rows);
  if (report.timeline) {
    const UtilisationGrid g = link_utilisation(*report.timeline, 60);
    if (!g.rows.empty()) {
      page.section("Link utilisation", heat_map_svg("Link utilisation over time", g.rows, g.values,
                                                    fmt::format("time: {:.4g} us to {:.4g} us",
                                                                g.start.us(), g.end.us())));
    }
    if (!report.timeline->spans().empty()) page.section("Timeline", timeline_svg(*report.timeline));
  }
  page.scenario(report.scenario);
  out << page.render();
}

}  // namespace dtsim::report
