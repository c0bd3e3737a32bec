#include "validation/nccl_tests_parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "sim/error.h"
#include "validation/measurement_reader.h"
#include "validation/nccl_tests_json.h"

namespace dtsim::validation {
namespace {

using collectives::CollectiveKind;

std::string data(const std::string& name) {
  return std::string(DTSIM_SOURCE_DIR) + "/tests/validation/data/" + name;
}

MeasurementSet read_one(const std::string& name) {
  std::vector<MeasurementSet> sets = read_measurements(data(name));
  EXPECT_EQ(sets.size(), 1u);
  return sets.at(0);
}

// The rows of a real log (tests/data/real/nccl_tests, AWS Batch on 8 A100s) pasted as a user
// pastes them into an issue: no preamble, no column header, each line behind "[0] ". The rows
// were taken for CSV and refused; now the columns are read off the rows.
TEST(NcclTestsOutput, RowsPastedWithoutTheirHeaderBehindRankPrefixes) {
  std::ifstream in(std::string(DTSIM_SOURCE_DIR) + "/tests/data/real/nccl_tests/aws_batch_8gpu_allreduce_mpiprefix_noranks.txt");
  std::string text, line;
  int rows = 0;
  while (std::getline(in, line)) {
    const std::string prefix = "[1,0]<stdout>:";
    if (line.rfind(prefix, 0) != 0) continue;
    std::string rest = line.substr(prefix.size());
    if (rest.find_first_not_of(' ') == std::string::npos || rest[rest.find_first_not_of(' ')] == '#') continue;
    text += "[0] " + rest + "\n";
    ++rows;
  }
  ASSERT_EQ(rows, 32);
  EXPECT_TRUE(looks_like_nccl_tests_output(text));
  NcclTestsParseOptions named;
  named.collective = CollectiveKind::all_reduce;
  const auto sets = parse_nccl_tests_output(text, "pasted.txt", named);
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].collective, CollectiveKind::all_reduce);
  ASSERT_EQ(sets[0].points.size(), 64u);  // out- and in-place halves
  EXPECT_EQ(sets[0].points.back().size_bytes, int64_t{17179869184});
  EXPECT_DOUBLE_EQ(sets[0].points.back().busbw_gbps, 483.35);  // in place; 483.05 out of place
  // With its thread line (8 ranks), its bus bandwidth, 7/4 of the algorithm bandwidth, is
  // all_reduce's: read as an all_gather it is refused.
  named.collective = CollectiveKind::all_gather;
  EXPECT_THROW(parse_nccl_tests_output("# nThread 1 nGpus 8 minBytes 8 maxBytes 17179869184\n" + text, "pasted.txt", named),
               InputError);
}

TEST(NcclTestsOutput, ReadsBothPlacementsOfEveryRowUnderMpirunPrefixes) {
  MeasurementSet s = read_one("allreduce_2node_mpirun.txt");
  EXPECT_EQ(s.collective, CollectiveKind::all_reduce);
  ASSERT_EQ(s.points.size(), 22u);
  EXPECT_EQ(s.points[0].size_bytes, 8);
  EXPECT_EQ(s.points[0].placement, Placement::out_of_place);
  EXPECT_DOUBLE_EQ(s.points[0].time_us, 36.47);
  EXPECT_EQ(s.points[1].placement, Placement::in_place);
  EXPECT_DOUBLE_EQ(s.points[1].time_us, 34.74);
  EXPECT_EQ(s.points.back().size_bytes, 8388608);
  EXPECT_DOUBLE_EQ(s.points.back().busbw_gbps, 24.06);
  EXPECT_EQ(s.points.back().count, 2097152);
}

TEST(NcclTestsOutput, CountsRanksFromTheUsingDevicesLines) {
  EXPECT_EQ(read_one("allreduce_2node_mpirun.txt").ranks, 8);
}

TEST(NcclTestsOutput, CountsNodesFromTheHostsOfTheRankLines) {
  EXPECT_EQ(read_one("allreduce_2node_mpirun.txt").nodes, 2);
  EXPECT_EQ(read_one("reduce_scatter_timestamp_column.txt").nodes, 1);
}

// One thread driving several GPUs (nccl-tests -g N) launches their kernels one after another,
// which adds latency to small sizes; the set says so and carries the count, which the prediction
// takes as its floor (8 x V100 with -g 8 in validation/extra: a 48 us floor against 15 predicted
// without it).
TEST(NcclTestsOutput, WarnsWhenOneThreadDroveSeveralGpus) {
  std::ifstream in(data("allreduce_2node_mpirun.txt"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  const MeasurementSet one = parse_nccl_tests_output(text, "one_gpu_a_thread.txt").at(0);
  EXPECT_TRUE(one.warnings.empty());
  EXPECT_EQ(one.gpus_per_thread, 1);
  const auto at = text.find("nGpus 1");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 7, "nGpus 4");
  const auto sets = parse_nccl_tests_output(text, "four_gpus_a_thread.txt");
  ASSERT_EQ(sets.size(), 1u);
  ASSERT_EQ(sets[0].warnings.size(), 1u);
  EXPECT_NE(sets[0].warnings[0].find("-g 4"), std::string::npos) << sets[0].warnings[0];
  EXPECT_EQ(sets[0].gpus_per_thread, 4);
}

// NCCL_DEBUG=INFO lines among the rows say which NCCL variables the run set.
TEST(NcclTestsOutput, KeepsTheNcclEnvironmentItsDebugLinesReport) {
  std::ifstream in(data("allreduce_2node_mpirun.txt"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  const auto at = text.find('\n', text.find("nGpus 1"));
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 1,
              "node1:4242:4242 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n"
              "node1:4242:4242 [0] NCCL INFO NCCL_PROTO set by environment to ^LL128\n");
  const auto sets = parse_nccl_tests_output(text, "env.txt");
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].nccl_env,
            (std::map<std::string, std::string>{{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "^LL128"}}));
  EXPECT_TRUE(parse_nccl_tests_output(buffer.str(), "plain.txt").at(0).nccl_env.empty());
}

TEST(NcclTestsOutput, KeepsTheAverageBusBandwidthTrailer) {
  MeasurementSet s = read_one("allreduce_2node_mpirun.txt");
  ASSERT_TRUE(s.avg_busbw_gbps.has_value());
  EXPECT_DOUBLE_EQ(*s.avg_busbw_gbps, 4.64336);
  EXPECT_TRUE(s.warnings.empty());
}

TEST(NcclTestsOutput, ReadsTheOldColumnSetWithErrorColumnsAndOneDecimalTimes) {
  MeasurementSet s = read_one("alltoall_old_format.txt");
  EXPECT_EQ(s.collective, CollectiveKind::all_to_all);  // from the pasted mpirun command
  EXPECT_EQ(s.ranks, 4);
  ASSERT_EQ(s.points.size(), 8u);
  EXPECT_DOUBLE_EQ(s.points[6].time_us, 2331.4);
  EXPECT_FALSE(s.points[6].wrong.has_value());  // old "error" is not a #wrong count
}

TEST(NcclTestsOutput, TellsBroadcastFromItsRootColumnWhenNoProgramIsNamed) {
  MeasurementSet s = read_one("broadcast_root_no_check.txt");
  EXPECT_EQ(s.collective, CollectiveKind::broadcast);
  EXPECT_EQ(s.points.size(), 8u);
}

// gather_perf and scatter_perf print broadcast's columns (redop none, a root); their busbw is
// (n-1)/n of algbw. Unnamed, such a table is not read as broadcast: the user is asked to name it.
TEST(NcclTestsOutput, UnnamedGatherOrScatterTableAsksForTheCollective) {
  try {
    read_measurements(data("rooted_table_unnamed.txt"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gather_perf or scatter_perf"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--collective"), std::string::npos) << e.what();
  }
  NcclTestsParseOptions named;
  named.collective = CollectiveKind::scatter;
  const auto sets = read_measurements(data("rooted_table_unnamed.txt"), named);
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].collective, CollectiveKind::scatter);
  // By its program name, as nccl-tests prints it.
  const std::string text =
      "# Collective test starting: gather_perf\n" +
      std::string(
          "#       size         count      type   redop    root     time   algbw   busbw "
          "#wrong\n") +
      "   268435456       4194304     float    none       0   3335.1   80.49   40.25      0\n";
  EXPECT_EQ(parse_nccl_tests_output(text, "x.txt").at(0).collective, CollectiveKind::gather);
}

// The old format's max-error column reads N/A when validation was off (-c 0): microsoft/
// superbenchmark's 8 x A100 broadcast was refused at its first row.
TEST(NcclTestsOutput, OldFormatWithValidationOffReads) {
  NcclTestsParseOptions named;
  named.collective = CollectiveKind::broadcast;
  const auto sets = read_measurements(data("broadcast_old_format_no_check.txt"), named);
  ASSERT_EQ(sets.size(), 1u);
  ASSERT_EQ(sets[0].points.size(), 4u);  // two sizes, out of place and in place
  EXPECT_DOUBLE_EQ(sets[0].points[0].time_us, 374.8);
  EXPECT_FALSE(sets[0].points[0].wrong.has_value());
  EXPECT_EQ(sets[0].ranks, 8);
}

// nccl-tests -d all / -o all print one size once per data type and reduction operator; the rows
// are averaged per size, and a note says so.
TEST(NcclTestsOutput, SeveralDataTypesAtOneSizeAreAveragedWithANote) {
  const MeasurementSet s = read_one("several_types.all_reduce_perf.txt");
  EXPECT_EQ(s.collective, CollectiveKind::all_reduce);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find(
                "3 data types (bfloat16, float, int8) and 2 reduction operators (max, sum)"),
            std::string::npos)
      << s.warnings[0];
  // One table with no such mix has no note.
  EXPECT_TRUE(read_one("allreduce_2node_mpirun.txt").warnings.empty());
}

TEST(NcclTestsOutput, NotApplicableWrongCountIsUnknownNotZero) {
  MeasurementSet s = read_one("broadcast_root_no_check.txt");
  EXPECT_FALSE(s.points[0].wrong.has_value());
  EXPECT_TRUE(s.wrong_points().empty());
}

TEST(NcclTestsOutput, TableWithoutPreambleOrTrailerIsReadWithAWarning) {
  MeasurementSet s = read_one("broadcast_root_no_check.txt");
  EXPECT_EQ(s.warnings.size(), 1u);
}

TEST(NcclTestsOutput, StripsSrunAndTimestampPrefixesAndSkipsInterleavedNcclLines) {
  MeasurementSet s = read_one("sendrecv_srun_timestamps.log");
  EXPECT_EQ(s.collective, CollectiveKind::send_recv);
  EXPECT_EQ(s.ranks, 2);
  ASSERT_EQ(s.points.size(), 8u);
  EXPECT_DOUBLE_EQ(s.points[0].time_us, 1211.20);
}

TEST(NcclTestsOutput, FlagsRowsWithNonzeroWrongCount) {
  MeasurementSet s = read_one("sendrecv_srun_timestamps.log");
  std::vector<const MeasuredPoint*> wrong = s.wrong_points();
  ASSERT_EQ(wrong.size(), 1u);
  EXPECT_EQ(wrong[0]->size_bytes, 536870912);
  EXPECT_EQ(wrong[0]->placement, Placement::out_of_place);
  EXPECT_EQ(*wrong[0]->wrong, 3);
}

TEST(NcclTestsOutput, ReadsRowsThatEndWithATimestampColumn) {
  MeasurementSet s = read_one("reduce_scatter_timestamp_column.txt");
  EXPECT_EQ(s.collective, CollectiveKind::reduce_scatter);
  ASSERT_EQ(s.points.size(), 6u);
  EXPECT_DOUBLE_EQ(s.points[5].busbw_gbps, 149.95);
}

TEST(NcclTestsOutput, RowCutOffMidwayIsAnInputErrorAtItsLine) {
  try {
    read_measurements(data("allreduce_truncated_midrow.txt"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 20);
    EXPECT_NE(std::string(e.what()).find("allreduce_truncated_midrow.txt:20"), std::string::npos);
  }
}

TEST(NcclTestsOutput, FullOutputWithoutTrailerIsReportedAsTruncated) {
  try {
    read_measurements(data("allreduce_truncated_no_trailer.txt"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos);
  }
}

TEST(NcclTestsOutput, GarbledNumberIsAnInputErrorNamingLineAndColumn) {
  try {
    read_measurements(data("allreduce_garbled.txt"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 23);
    EXPECT_EQ(e.key(), "time");
  }
}

TEST(NcclTestsOutput, ProseInsideTheTableIsAnInputError) {
  std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "        1024           256     float     sum      -1    10.00    0.10    0.18      0    "
      "10.00    0.10    0.18      0\n"
      "Segmentation fault (core dumped)\n";
  EXPECT_THROW(parse_nccl_tests_output(text, "x.txt"), InputError);
}

TEST(NcclTestsOutput, AmbiguousColumnsWithoutProgramNameAskForTheCollective) {
  std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "        1024           256     float    none      -1    10.00    0.10    0.09      0    "
      "10.00    0.10    0.09      0\n";
  EXPECT_THROW(parse_nccl_tests_output(text, "x.txt"), InputError);
  NcclTestsParseOptions options;
  options.collective = CollectiveKind::all_gather;
  EXPECT_EQ(parse_nccl_tests_output(text, "x.txt", options).at(0).collective,
            CollectiveKind::all_gather);
}

// A reduction without root fits all_reduce and reduce_scatter alike: a caller's fallback (validate
// passes the scenario's collective) comes before the column guess, and says so; a program the
// output names comes before the fallback.
TEST(NcclTestsOutput, FallbackCollectiveComesBeforeTheColumnGuessButAfterANamedProgram) {
  const std::string table =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "   134217728       4194304     float     sum      -1    377.2  355.81  311.34      0    "
      "371.9  360.91  315.80      0\n"
      "# Avg bus bandwidth    : 313.57\n";
  NcclTestsParseOptions options;
  options.collective = CollectiveKind::reduce_scatter;
  options.collective_from = "the scenario's workload.collective";
  const MeasurementSet guessed = parse_nccl_tests_output(table, "x.txt").at(0);
  EXPECT_EQ(guessed.collective, CollectiveKind::all_reduce);
  const MeasurementSet fallback = parse_nccl_tests_output(table, "x.txt", options).at(0);
  EXPECT_EQ(fallback.collective, CollectiveKind::reduce_scatter);
  ASSERT_EQ(fallback.warnings.size(), 1u);
  EXPECT_NE(
      fallback.warnings[0].find("read as reduce_scatter (the scenario's workload.collective)"),
      std::string::npos);
  const MeasurementSet named =
      parse_nccl_tests_output("# Collective test starting: all_reduce_perf\n" + table, "x.txt",
                              options)
          .at(0);
  EXPECT_EQ(named.collective, CollectiveKind::all_reduce);
  EXPECT_TRUE(named.warnings.empty());
}

TEST(NcclTestsOutput, TwoRunsInOneFileGiveTwoSets) {
  std::string one = read_text_file(data("reduce_scatter_timestamp_column.txt"));
  std::string two = read_text_file(data("allreduce_2node_mpirun.txt"));
  std::vector<MeasurementSet> sets = parse_nccl_tests_output(one + two, "both.txt");
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].collective, CollectiveKind::reduce_scatter);
  EXPECT_EQ(sets[1].collective, CollectiveKind::all_reduce);
  EXPECT_EQ(sets[0].ranks, 8);
}

TEST(NcclTestsJson, ReadsResultsRanksAndProgram) {
  MeasurementSet s = read_one("allgather_report.json");
  EXPECT_EQ(s.collective, CollectiveKind::all_gather);
  EXPECT_EQ(s.ranks, 8);
  ASSERT_EQ(s.points.size(), 6u);
  EXPECT_DOUBLE_EQ(s.points[3].time_us, 51.99);
  EXPECT_EQ(s.points[3].placement, Placement::in_place);
  EXPECT_EQ(*s.points[0].wrong, 0);
  EXPECT_FALSE(s.points[5].wrong.has_value());  // null nwrong: validation was off
  EXPECT_DOUBLE_EQ(*s.avg_busbw_gbps, 142.1);
  // Run with -g 8: one thread drove all eight GPUs.
  EXPECT_EQ(s.gpus_per_thread, 8);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0], one_thread_drove_gpus_note(8));
}

TEST(NcclTestsJson, TruncatedReportIsAnInputErrorWithItsPosition) {
  try {
    read_measurements(data("allgather_report_truncated.json"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_GT(e.where().line, 0);
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos);
  }
}

// A number too large for a double is an InputError, not nlohmann's out_of_range.
TEST(NcclTestsJson, ANumberTooLargeIsAnInputError) {
  EXPECT_THROW(parse_nccl_tests_json(R"({"results": [{"size": 1e99999}]})", "huge.json"), InputError);
}

// A negative time or bandwidth is refused at its key .
TEST(NcclTestsJson, ANegativeTimeIsAnInputError) {
  try {
    parse_nccl_tests_json(
        R"({"args": ["./all_reduce_perf"], "results": [{"size": 1024, "out_of_place": {"time": -2.64, "alg_bw": 1, "bus_bw": 1}}]})",
        "neg.json");
    FAIL() << "a negative time was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("out_of_place.time"), std::string::npos) << e.what();
  }
}

TEST(LauncherPrefix, RemovesOpenMpiSrunAndTimestampPrefixes) {
  EXPECT_EQ(strip_launcher_prefix("[1,0]<stdout>:# nThread 1"), "# nThread 1");
  EXPECT_EQ(strip_launcher_prefix("2025-03-14T09:12:01.118Z 0: # x"), "# x");
  EXPECT_EQ(strip_launcher_prefix("      1024   256  float"), "      1024   256  float");
}

}  // namespace
}  // namespace dtsim::validation
