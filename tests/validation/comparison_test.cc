#include "validation/comparison.h"

#include <gtest/gtest.h>

#include <sstream>

#include "validation/comparison_report.h"
#include "validation/html_report.h"

namespace dtsim::validation {
namespace {

using collectives::CollectiveKind;

MeasurementSet two_sizes() {
  MeasurementSet s;
  s.source = "runs/ar.csv";
  s.collective = CollectiveKind::all_reduce;
  s.points = {
      {1024, 0, 10.0, 0.1, 0.18, Placement::out_of_place, 0, 1},
      {1024, 0, 12.0, 0.1, 0.18, Placement::in_place, 0, 2},
      {1048576, 0, 100.0, 10.5, 18.4, Placement::out_of_place, 0, 3},
  };
  return s;
}

// Latency 5 us plus 1 us per 10 KiB: a stand-in for the cluster model.
Prediction synthetic(CollectiveKind, int64_t bytes, int) {
  return Prediction{5.0 + static_cast<double>(bytes) / 10240.0, "ring", "simple", 4};
}

TEST(Compare, MergesPlacementsOfOneSizeIntoOneRow) {
  Comparison c = compare(two_sizes(), 8, synthetic);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].samples, 2);
  EXPECT_DOUBLE_EQ(c.rows[0].measured_us, 11.0);
}

TEST(Compare, ErrorIsSignedRelativeToMeasured) {
  Comparison c = compare(two_sizes(), 8, synthetic);
  EXPECT_NEAR(c.rows[0].predicted_us, 5.1, 1e-12);
  EXPECT_NEAR(c.rows[0].error_pct, (5.1 - 11.0) / 11.0 * 100, 1e-9);
  EXPECT_NEAR(c.rows[1].error_pct, (107.4 - 100.0), 1e-9);
}

TEST(Compare, PredictedBusBandwidthUsesTheCollectivesFactor) {
  Comparison c = compare(two_sizes(), 8, synthetic);
  double algbw = 1048576.0 / 107.4 / 1e3;
  EXPECT_NEAR(c.rows[1].predicted_busbw_gbps, algbw * 2 * 7 / 8, 1e-9);
}

TEST(Compare, SummaryHasMeanAndWorstAbsoluteError) {
  Comparison c = compare(two_sizes(), 8, synthetic);
  double e0 = (11.0 - 5.1) / 11.0 * 100, e1 = 7.4;
  EXPECT_NEAR(c.summary.mean_abs_pct, (e0 + e1) / 2, 1e-9);
  EXPECT_NEAR(c.summary.worst_abs_pct, e0, 1e-9);
  EXPECT_EQ(c.summary.worst_size, 1024);
}

TEST(Compare, RowsFlaggedWrongAreShownButNotScored) {
  MeasurementSet s = two_sizes();
  s.points[2].wrong = 5;
  Comparison c = compare(s, 8, synthetic);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_TRUE(c.rows[1].wrong);
  EXPECT_EQ(c.summary.points, 1u);
  EXPECT_FALSE(c.notes.empty());
}

TEST(ComparisonReport, CsvHasOneLinePerSizePlusHeader) {
  std::vector<Comparison> cs{compare(two_sizes(), 8, synthetic)};
  std::ostringstream out;
  write_comparison(out, cs, ComparisonFormat::csv);
  std::string s = out.str();
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 3);
  EXPECT_EQ(s.rfind("dataset,collective,ranks,size_bytes,measured_us,predicted_us,error_pct", 0), 0u);
}

TEST(ComparisonReport, JsonCarriesSchemaVersionAndSummary) {
  std::vector<Comparison> cs{compare(two_sizes(), 8, synthetic)};
  std::ostringstream out;
  write_comparison(out, cs, ComparisonFormat::json);
  EXPECT_NE(out.str().find("\"schema_version\": 1"), std::string::npos);
  EXPECT_NE(out.str().find("\"worst_abs_error_pct\""), std::string::npos);
}

TEST(ComparisonReport, TableEndsWithMeanAndWorst) {
  std::vector<Comparison> cs{compare(two_sizes(), 8, synthetic)};
  std::ostringstream out;
  write_comparison(out, cs, ComparisonFormat::table);
  EXPECT_NE(out.str().find("# mean |error|"), std::string::npos);
  EXPECT_NE(out.str().find("1MiB"), std::string::npos);
}

TEST(HtmlReport, IsSelfContainedWithTwoCurvesPerSet) {
  std::vector<Comparison> cs{compare(two_sizes(), 8, synthetic)};
  std::ostringstream out;
  write_html_report(out, cs, "test <page>");
  std::string s = out.str();
  EXPECT_NE(s.find("<svg"), std::string::npos);
  EXPECT_EQ(std::count(s.begin(), s.end(), 'p') > 0, true);
  size_t polylines = 0;
  for (size_t pos = s.find("<polyline"); pos != std::string::npos; pos = s.find("<polyline", pos + 1))
    ++polylines;
  EXPECT_EQ(polylines, 2u);
  EXPECT_EQ(s.find("<script"), std::string::npos);
  EXPECT_EQ(s.find("http://", s.find("</svg>")), std::string::npos);  // nothing fetched
  EXPECT_NE(s.find("test &lt;page&gt;"), std::string::npos);
}

}  // namespace
}  // namespace dtsim::validation
