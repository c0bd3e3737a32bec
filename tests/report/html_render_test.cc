// Renders the HTML reports in headless Chromium, as a person would open them, and checks the
// screenshot is a page with coloured plots on it and the DOM holds the SVG plots. Skips when
// Chromium is not installed (CI installs it through scripts/setup.sh).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "png_image.h"
#include "report/html_report.h"
#include "report/svg_plot.h"
#include "report/sweep_html.h"
#include "sample_reports.h"

namespace dtsim::report {
namespace {

namespace fs = std::filesystem;

std::string chromium() {
  if (const char* env = std::getenv("DTSIM_CHROMIUM")) return env;
  for (const char* p :
       {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
    if (fs::exists(p)) return p;
  }
  return {};
}

// One folder per test: ctest runs the tests as parallel processes, which must not share pages,
// screenshots or Chromium profiles.
fs::path work_dir() {
  const fs::path d = fs::path(DTSIM_BINARY_DIR) / "tests" / "report" / "render" /
                     ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::create_directories(d);
  return d;
}

// Runs Chromium headless with the flags a closed network needs (no background fetches), on a
// fresh profile. `mode` is "--screenshot=FILE" or "--dump-dom"; stdout goes to `out`.
void run_chromium(const fs::path& page, const std::string& mode, const fs::path& out) {
  const fs::path profile = work_dir() / ("profile-" + page.stem().string());
  fs::remove_all(profile);
  std::ostringstream cmd;
  cmd << "timeout 120 " << chromium()
      << " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
         " --disable-background-networking --disable-component-update --disable-sync"
         " --hide-scrollbars --user-data-dir="
      << profile << " --window-size=1200,1600 " << mode << " file://" << fs::absolute(page).string()
      << " > " << out << " 2> " << (out.string() + ".log");
  const int rc = std::system(cmd.str().c_str());
  ASSERT_EQ(rc, 0) << cmd.str() << "\n(see " << out << ".log)";
}

fs::path write_page(const std::string& name, const std::string& html) {
  const fs::path p = work_dir() / name;
  std::ofstream(p) << html;
  return p;
}

fs::path sweep_page() {
  std::ostringstream os;
  write_sweep_html(dtsim::testing::sample_sweep_table(), "llama3-70b-fabric (sample data)", os);
  return write_page("sweep.html", os.str());
}

fs::path run_page() {
  const Timeline t = dtsim::testing::sample_timeline();
  std::ostringstream os;
  write_run_html(dtsim::testing::sample_run_report(t), os);
  return write_page("run.html", os.str());
}

// The trace's own view: the timeline and link heat map alone, as docs/trace-view.png shows it.
fs::path trace_page() {
  const Timeline t = dtsim::testing::sample_timeline();
  HtmlPage page("Trace view: llama3-70b on 16 GPUs (sample)");
  page.section("Timeline", timeline_svg(t));
  const UtilisationGrid g = link_utilisation(t, 60);
  page.section("Link utilisation",
               heat_map_svg("Link utilisation over time", g.rows, g.values, "time"));
  return write_page("trace.html", page.render());
}

dtsim::testing::PngImage screenshot(const fs::path& page) {
  const fs::path png = work_dir() / (page.stem().string() + ".png");
  fs::remove(png);
  run_chromium(page, "--screenshot=" + png.string(),
               work_dir() / (page.stem().string() + ".screenshot.out"));
  return dtsim::testing::read_png(png);
}

std::string dom(const fs::path& page) {
  const fs::path out = work_dir() / (page.stem().string() + ".dom.html");
  run_chromium(page, "--dump-dom", out);
  std::ifstream in(out);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class HtmlRender : public ::testing::Test {
 protected:
  void SetUp() override {
    if (chromium().empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium)";
  }
};

// A blank page is one colour; text alone is greys. Plots in the palette give many chromatic
// pixels, so "not blank" is: a real share of non-white pixels, and thousands of coloured ones.
TEST_F(HtmlRender, SweepPageScreenshotShowsColouredPlots) {
  const auto img = screenshot(sweep_page());
  EXPECT_EQ(img.width, 1200);
  EXPECT_EQ(img.height, 1600);
  EXPECT_GT(img.non_white_pixels(), img.rgba.size() / 4 / 50);
  EXPECT_GT(img.chromatic_pixels(), 5000u);
  EXPECT_GT(img.distinct_colours(), 50u);
}

TEST_F(HtmlRender, SweepPageDomHoldsScalingAndParetoPlots) {
  const std::string d = dom(sweep_page());
  EXPECT_GE(count(d, "<svg"), 3u);
  EXPECT_GE(count(d, "<polyline"), 7u);
  EXPECT_NE(d.find("Pareto front"), std::string::npos);
}

TEST_F(HtmlRender, RunPageScreenshotShowsColouredPlots) {
  const auto img = screenshot(run_page());
  EXPECT_GT(img.non_white_pixels(), img.rgba.size() / 4 / 50);
  EXPECT_GT(img.chromatic_pixels(), 5000u);
}

TEST_F(HtmlRender, RunPageDomHoldsBreakdownHeatMapAndTimeline) {
  const std::string d = dom(run_page());
  EXPECT_EQ(count(d, "class=\"heatmap\""), 1u);
  EXPECT_EQ(count(d, "class=\"timeline\""), 1u);
  EXPECT_EQ(count(d, "class=\"bars\""), 1u);
}

TEST_F(HtmlRender, TraceViewScreenshotShowsSpans) {
  const auto img = screenshot(trace_page());
  EXPECT_GT(img.chromatic_pixels(), 5000u);
}

}  // namespace
}  // namespace dtsim::report
