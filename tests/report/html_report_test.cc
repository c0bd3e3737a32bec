#include "report/html_report.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "report/svg_plot.h"
#include "report/sweep_html.h"
#include "report/sweep_table.h"
#include "sample_reports.h"

namespace dtsim::report {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string sweep_page() {
  std::ostringstream os;
  write_sweep_html(dtsim::testing::sample_sweep_table(), "llama3-70b-fabric", os);
  return os.str();
}

std::string run_page() {
  const Timeline t = dtsim::testing::sample_timeline();
  std::ostringstream os;
  write_run_html(dtsim::testing::sample_run_report(t), os);
  return os.str();
}

TEST(HtmlReport, PageFetchesNothingFromTheNetwork) {
  for (const std::string& page : {sweep_page(), run_page()}) {
    EXPECT_EQ(page.find("<script"), std::string::npos);
    EXPECT_EQ(page.find("<link"), std::string::npos);
    EXPECT_EQ(page.find("@import"), std::string::npos);
    EXPECT_EQ(page.find("url("), std::string::npos);
    // The only URL allowed is the SVG namespace, which is a name, not a fetch.
    std::string rest = page;
    for (std::size_t at; (at = rest.find("http")) != std::string::npos;) {
      EXPECT_EQ(rest.compare(at, 26, "http://www.w3.org/2000/svg"), 0) << rest.substr(at, 40);
      rest = rest.substr(at + 4);
    }
  }
}

TEST(HtmlReport, SweepPageLeavesPointsThatDoNotFitOutOfFastest) {
  report::SweepTable t = dtsim::testing::sample_sweep_table();
  // The fastest sample point (most nodes, 1:1 rail-optimized) is marked as over HBM.
  std::size_t fastest = 0;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (t.rows[i].metrics[0].second < t.rows[fastest].metrics[0].second) fastest = i;
  }
  for (auto& r : t.rows) r.metrics.emplace_back("memory_fits", &r == &t.rows[fastest] ? 0 : 1);
  mark_pareto(t);
  std::ostringstream os;
  write_sweep_html(t, "fabric", os);
  const std::string page = os.str();
  EXPECT_NE(page.find("points that do not fit in HBM</th><td>1<"), std::string::npos);
  // The summary names the fastest point by its varied keys: not the one over HBM.
  auto label = [&](const report::SweepRow& r) {
    return "kind=" + r.values[0] + ", oversubscription=" + r.values[1] + ", nodes=" + r.values[2];
  };
  const std::size_t at = page.find("fastest</th>");
  ASSERT_NE(at, std::string::npos);
  const std::string line = page.substr(at, page.find("</td>", at) - at);
  EXPECT_EQ(line.find(label(t.rows[fastest])), std::string::npos) << line;
  EXPECT_NE(line.find("kind="), std::string::npos) << line;
}

TEST(HtmlReport, PageCarriesSchemaVersionAndScenario) {
  const std::string page = run_page();
  EXPECT_NE(page.find("<meta name=\"dtsim-schema-version\" content=\"1\">"), std::string::npos);
  EXPECT_NE(page.find("node: hgx-h100"), std::string::npos);
}

TEST(HtmlReport, RunPageHasBreakdownHeatMapAndTimeline) {
  const std::string page = run_page();
  EXPECT_EQ(count(page, "class=\"segment\""), 3u);
  EXPECT_EQ(count(page, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"heatmap\""), 1u);
  EXPECT_EQ(count(page, "class=\"cell\""), 8u * 60u);
  EXPECT_GT(count(page, "class=\"span\""), 40u);
}

TEST(HtmlReport, SweepPageHasScalingCurvesAndParetoFront) {
  const std::string page = sweep_page();
  EXPECT_NE(page.find("Scaling: iteration_time_s against nodes"), std::string::npos);
  // One curve per (fabric kind, oversubscription) pair, and one Pareto line.
  EXPECT_EQ(count(page, "<polyline"), 6u + 1u);
  EXPECT_NE(page.find("Pareto front"), std::string::npos);
  EXPECT_GT(count(page, "<tr class=\"front\">"), 0u);
}

TEST(HtmlReport, SweepPageShowsTheFrontsTimeBreakdown) {
  const std::string page = sweep_page();
  EXPECT_NE(page.find("Time breakdown of the front"), std::string::npos);
  EXPECT_GT(count(page, "class=\"segment\""), 0u);
}

TEST(HtmlReport, TextIsEscaped) {
  HtmlPage p("a <b> & \"c\"");
  p.key_values("k", {{"<x>", "y & z"}});
  const std::string page = p.render();
  EXPECT_NE(page.find("a &lt;b&gt; &amp; &quot;c&quot;"), std::string::npos);
  EXPECT_EQ(page.find("<x>"), std::string::npos);
}

TEST(LinkUtilisation, BinsAreTimeWeightedMeansOfHeldSamples) {
  Timeline t;
  const auto link = t.track("links", "l0");
  t.counter(link, "utilisation", Time::us(0), 1.0);
  t.counter(link, "utilisation", Time::us(10), 0.0);
  t.span(link, "flow", Time::us(0), Time::us(20));
  const UtilisationGrid g = link_utilisation(t, 4);
  ASSERT_EQ(g.rows.size(), 1u);
  EXPECT_EQ(g.values[0], (std::vector<double>{1, 1, 0, 0}));
}

TEST(SvgPlot, LogAxisTicksArePowersOfTen) {
  SvgPlot p("t", "x", "y");
  p.log_x().line("s", {{1, 1}, {1000, 2}});
  const std::string svg = p.svg();
  for (const char* tick : {">1<", ">10<", ">100<", ">1000<"})
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
}

TEST(SvgPlot, LogAxisDropsPointsItCannotShow) {
  SvgPlot p("t", "x", "y");
  p.log_y().scatter("s", {{1, 0}, {2, 5}});
  EXPECT_EQ(count(p.svg(), "<circle"), 1u);
}

TEST(SvgPlot, LegendNamesEverySeries) {
  SvgPlot p("t", "x", "y");
  p.line("first", {{0, 0}, {1, 1}}).line("second", {{0, 1}, {1, 0}});
  const std::string svg = p.svg();
  EXPECT_EQ(count(svg, "class=\"legend\""), 2u);
  EXPECT_NE(svg.find(">first<"), std::string::npos);
  EXPECT_NE(svg.find(">second<"), std::string::npos);
}

TEST(SweepHtml, ScalingKeyPrefersNodes) {
  EXPECT_EQ(scaling_key(dtsim::testing::sample_sweep_table()), 2u);
}

}  // namespace
}  // namespace dtsim::report
