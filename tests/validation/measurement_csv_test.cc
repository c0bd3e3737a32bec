#include "validation/measurement_csv.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "sim/error.h"
#include "validation/measurement_reader.h"

namespace dtsim::validation {
namespace {

using collectives::CollectiveKind;

TEST(MeasurementCsv, ReadsHeaderRowsAndStatedRankCount) {
  std::string text =
      "# Hardware: 2 nodes\n# Ranks: 16. all_reduce_perf\n"
      "collective,size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n"
      "all_reduce,8,36.47,0.00,0.00,out\nall_reduce,8,34.74,0.00,0.00,in\n";
  std::vector<MeasurementSet> sets = read_measurement_csv(text, "m.csv");
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].ranks, 16);
  EXPECT_EQ(sets[0].header.size(), 2u);
  ASSERT_EQ(sets[0].points.size(), 2u);
  EXPECT_EQ(sets[0].points[1].placement, Placement::in_place);
}

TEST(MeasurementCsv, SplitsLabelledBlocksIntoSets) {
  std::string text =
      "collective,size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n"
      "all_reduce:A,1024,10,0.1,0.1,out\nall_reduce:B,1024,20,0.05,0.05,out\n"
      "all_reduce:A,2048,11,0.2,0.2,out\n";
  std::vector<MeasurementSet> sets = read_measurement_csv(text, "m.csv");
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].label, "A");
  EXPECT_EQ(sets[0].points.size(), 2u);
  EXPECT_EQ(sets[1].display_name(), "m:B");
}

TEST(MeasurementCsv, BadNumberIsAnInputErrorAtLineAndColumn) {
  std::string text =
      "collective,size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n"
      "all_reduce,1024,fast,0.1,0.1,out\n";
  try {
    read_measurement_csv(text, "m.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.where().column, 17);
    EXPECT_EQ(e.key(), "time_us");
  }
}

TEST(MeasurementCsv, ShortRowIsAnInputError) {
  std::string text =
      "collective,size_bytes,time_us,algbw_GBps,busbw_GBps,placement\nall_reduce,1024,10\n";
  EXPECT_THROW(read_measurement_csv(text, "m.csv"), InputError);
}

TEST(MeasurementCsv, UnknownCollectiveIsAnInputError) {
  std::string text =
      "collective,size_bytes,time_us,algbw_GBps,busbw_GBps,placement\nalltoallv,1024,10,1,1,out\n";
  EXPECT_THROW(read_measurement_csv(text, "m.csv"), InputError);
}

TEST(MeasurementCsv, WrittenFileReadsBackTheSameRows) {
  MeasurementSet s;
  s.collective = CollectiveKind::all_gather;
  s.header = {"Ranks: 8", "written by a test"};
  s.points.push_back(MeasuredPoint{1048576, 0, 20.5, 51.15, 44.76, Placement::out_of_place, 0, 0});
  s.points.push_back(MeasuredPoint{1048576, 0, 20.25, 51.78, 45.31, Placement::in_place, 0, 0});
  std::ostringstream out;
  write_measurement_csv(out, s);
  std::vector<MeasurementSet> back = read_measurement_csv(out.str(), "back.csv");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].collective, CollectiveKind::all_gather);
  EXPECT_EQ(back[0].ranks, 8);
  ASSERT_EQ(back[0].points.size(), 2u);
  EXPECT_DOUBLE_EQ(back[0].points[1].time_us, 20.25);
  EXPECT_EQ(back[0].points[1].placement, Placement::in_place);
}

TEST(MeasurementCsv, EveryPublishedMeasurementFileParses) {
  std::filesystem::path dir(DTSIM_MEASURED_DIR);
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no measured data at " << dir;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".csv") continue;
    if (entry.path().filename() == "reference_points_from_issues.csv") continue;  // not curves
    std::vector<MeasurementSet> sets = read_measurements(entry.path().string());
    EXPECT_FALSE(sets.empty()) << entry.path();
    for (const MeasurementSet& s : sets) EXPECT_FALSE(s.points.empty()) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 9);
}

TEST(CollectiveName, AcceptsNcclTestsNcclAndDtsimSpellings) {
  EXPECT_EQ(parse_collective_name("all_reduce_perf"), CollectiveKind::all_reduce);
  EXPECT_EQ(parse_collective_name("AllReduce"), CollectiveKind::all_reduce);
  EXPECT_EQ(parse_collective_name("sendrecv"), CollectiveKind::send_recv);
  EXPECT_EQ(parse_collective_name("all_to_all"), CollectiveKind::all_to_all);
  EXPECT_EQ(parse_collective_name("ReduceScatter"), CollectiveKind::reduce_scatter);
  // Every nccl-tests program (gather_perf, scatter_perf and hypercube_perf included).
  EXPECT_EQ(parse_collective_name("gather_perf"), CollectiveKind::gather);
  EXPECT_EQ(parse_collective_name("scatter_perf"), CollectiveKind::scatter);
  EXPECT_EQ(parse_collective_name("hypercube_perf"), CollectiveKind::hypercube);
  EXPECT_FALSE(parse_collective_name("alltoallv").has_value());
}

}  // namespace
}  // namespace dtsim::validation
