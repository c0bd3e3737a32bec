// The validate and calibrate commands end to end: their exit-status contract and outputs.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

namespace {

std::string src(const std::string& p) { return std::string(DTSIM_SOURCE_DIR) + "/" + p; }
std::string app(const std::string& name) { return std::string(DTSIM_BINARY_DIR) + "/apps/" + name; }

int run(const std::string& command) {
  int status = std::system((command + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string measured(const std::string& file) { return std::string(DTSIM_MEASURED_DIR) + "/" + file; }

class ValidateCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(measured("oci_a100_2node_roce_allreduce.csv")))
      GTEST_SKIP() << "no measured data";
  }
  std::string base() const {
    return app("validate") + " --scenario " + src("scenarios/validation/oci_a100_2node_roce_allreduce.yaml") +
           " " + measured("oci_a100_2node_roce_allreduce.csv");
  }
};

TEST_F(ValidateCommand, ExitsZeroWhateverTheError) { EXPECT_EQ(run(base()), 0); }

// --set takes one KEY=VALUE per use, so a measured file after it stays a measured file.
TEST_F(ValidateCommand, ASetBeforeTheMeasuredFileLeavesItMeasured) {
  EXPECT_EQ(run(app("validate") + " --scenario " + src("scenarios/validation/oci_a100_2node_roce_allreduce.yaml") +
                " --set collectives.channels=8 " + measured("oci_a100_2node_roce_allreduce.csv")),
            0);
}

TEST_F(ValidateCommand, ExitsThreeWhenMaxErrorIsExceeded) {
  EXPECT_EQ(run(base() + " --max-error 0.001"), 3);
  EXPECT_EQ(run(base() + " --max-error 1000"), 0);
}

TEST_F(ValidateCommand, ExitsTwoOnAGarbledMeasurement) {
  EXPECT_EQ(run(app("validate") + " --scenario " +
                src("scenarios/validation/oci_a100_2node_roce_allreduce.yaml") + " " +
                src("tests/validation/data/allreduce_garbled.txt")),
            2);
}

TEST_F(ValidateCommand, WritesAnHtmlPageWithInlineSvg) {
  std::string html = (std::filesystem::temp_directory_path() / "dtsim_validate_test.html").string();
  ASSERT_EQ(run(base() + " --html " + html), 0);
  std::ifstream in(html);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("<svg"), std::string::npos);
  std::filesystem::remove(html);
}

TEST_F(ValidateCommand, CalibrateWritesALoadableCalibrationThatValidateAccepts) {
  std::string out = (std::filesystem::temp_directory_path() / "dtsim_calibrate_test.yaml").string();
  ASSERT_EQ(run(app("calibrate") + " --no-cross-validation --iterations 3 --scenario " +
                src("scenarios/validation/oci_a100_2node_roce_allreduce.yaml") + " " +
                measured("oci_a100_2node_roce_allreduce.csv") + " -o " + out),
            0);
  EXPECT_EQ(run(base() + " --calibration " + out), 0);
  std::filesystem::remove(out);
}

// The output of a command (stdout and stderr) and its exit status.
// The log file is the process's own: ctest runs these tests as processes side by side.
std::pair<int, std::string> capture(const std::string& command) {
  static int calls = 0;
  const std::string log = (std::filesystem::temp_directory_path() /
                           ("dtsim_validate_capture_" + std::to_string(getpid()) + "_" +
                            std::to_string(++calls) + ".log"))
                              .string();
  const int status = std::system((command + " >" + log + " 2>&1").c_str());
  std::stringstream ss;
  ss << std::ifstream(log).rdbuf();
  std::filesystem::remove(log);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ss.str()};
}

// On network.model: flow, validate predicts each measured size as simulate runs it on flows.
TEST(ValidateOnFlows, PredictsWhatSimulatePrintsOnFlows) {
  const std::string scenario = src("scenarios/validation_extra/h100_4gpu_alltoall.yaml");
  const auto [rc, out] = capture(app("validate") + " --scenario " + scenario + " " +
                                 src("validation/extra/h100_4gpu_alltoall.txt") +
                                 " --set network.model=flow --format csv");
  ASSERT_EQ(rc, 0) << out;
  const auto [src_rc, flow] =
      capture(app("simulate") + " " + scenario + " --model flow --format csv -q");
  ASSERT_EQ(src_rc, 0) << flow;
  // simulate's row: collective,size_bytes,time_us,...; validate's:
  // dataset,collective,ranks,size,measured,predicted,...
  const std::string sim_row = flow.substr(flow.rfind("all_to_all,"));
  const std::string sim_us = sim_row.substr(sim_row.find(',', sim_row.find(',') + 1) + 1);
  const std::string val_row = out.substr(out.find("h100_4gpu_alltoall,all_to_all,4,524288000,"));
  std::stringstream cells(val_row);
  std::string cell;
  for (int i = 0; i < 6; ++i) std::getline(cells, cell, ',');
  EXPECT_NEAR(std::stod(cell), std::stod(sim_us.substr(0, sim_us.find(','))), 0.01) << out << flow;
  const auto [closed_rc, closed] =
      capture(app("validate") + " --scenario " + scenario + " " +
              src("validation/extra/h100_4gpu_alltoall.txt") + " --format csv");
  EXPECT_NE(closed, out);  // the closed form prices it otherwise
}

// Flows run a sweep's ranks on the first GPUs; a measurement spread 4 + 4 over two 8-GPU nodes is
// refused in one line that says what to change.
TEST(ValidateOnFlows, ARunSpreadOverPartNodesIsRefusedNamingTheFix) {
  const std::string yaml =
      (std::filesystem::temp_directory_path() / "dtsim_validate_flow.yaml").string();
  std::ofstream(yaml) << "cluster: {node: hgx-a100, nodes: 2}\nnetwork: {model: flow}\n"
                         "workload: {kind: collective-sweep, collective: all_reduce}\n";
  const auto [rc, out] = capture(app("validate") + " --scenario " + yaml + " " +
                                 src("tests/validation/data/allreduce_2node_mpirun.txt"));
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("spreads 8 ranks over 2 nodes, 4 a node"), std::string::npos) << out;
  EXPECT_NE(out.find("gpus_per_node: 4"), std::string::npos) << out;
  std::ofstream(yaml)
      << "cluster: {node: hgx-a100, nodes: 2, gpus_per_node: 4}\nnetwork: {model: flow}\n"
         "workload: {kind: collective-sweep, collective: all_reduce}\n";
  EXPECT_EQ(capture(app("validate") + " --scenario " + yaml + " " +
                    src("tests/validation/data/allreduce_2node_mpirun.txt"))
                .first,
            0);
  std::filesystem::remove(yaml);
}

// A pairs file names one pair a line; a malformed line is reported with the file and its line.
TEST_F(ValidateCommand, CalibrateReadsAPairsFileAndNamesItsBadLine) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string pairs = (dir / "dtsim_calibrate_pairs.txt").string();
  const std::string out = (dir / "dtsim_calibrate_pairs.yaml").string();
  const std::string pair = src("scenarios/validation/oci_a100_2node_roce_allreduce.yaml") + " " +
                           measured("oci_a100_2node_roce_allreduce.csv");
  std::ofstream(pairs) << "# scenario measured\n" << pair << "\n";
  const std::string cmd =
      app("calibrate") +
      " --no-cross-validation --iterations 2 --parameters ll_channel_bandwidth --pairs " + pairs +
      " -o " + out;
  EXPECT_EQ(run(cmd), 0);
  EXPECT_TRUE(std::filesystem::exists(out));
  std::ofstream(pairs) << pair << "\n"
                       << "only-one-field\n";
  const std::string log = (dir / "dtsim_calibrate_pairs.log").string();
  EXPECT_EQ(std::system((cmd + " >" + log + " 2>&1").c_str()) == 0, false);
  std::stringstream ss;
  ss << std::ifstream(log).rdbuf();
  EXPECT_NE(ss.str().find(pairs + ":2:1: pair: expected SCENARIO MEASURED"), std::string::npos)
      << ss.str();
  for (const auto& f : {pairs, out, log}) std::filesystem::remove(f);
}

// calibrate --training fits the training tables a file names and scores each left out; it takes
// no collective inputs beside them.
TEST(CalibrateTraining, FitsTheNamedTablesAndRefusesCollectiveInputs) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string tables = (dir / ("dtsim_calibrate_training_" + std::to_string(getpid()) + ".txt")).string();
  std::ofstream(tables) << "# the smallest table\n" << src("tests/workloads/data/training_runs_torchtitan.csv") << " dense\n";
  const std::string cmd = app("calibrate") + " --iterations 1 --parameters hopper.gemm_efficiency --training " + tables;
  const auto [rc, out] = capture(cmd);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("training_runs_torchtitan"), std::string::npos) << out;
  EXPECT_NE(out.find("hopper.gemm_efficiency"), std::string::npos) << out;
  EXPECT_NE(out.find("at most 1 iterations"), std::string::npos) << out;  // the cap, stated
  EXPECT_EQ(capture(cmd + " -o " + (dir / "x.yaml").string()).first, 2);
  std::ofstream(tables) << src("tests/workloads/data/training_runs_torchtitan.csv") << " dense-ish\n";
  const auto [bad_rc, bad] = capture(cmd);
  EXPECT_EQ(bad_rc, 2);
  EXPECT_NE(bad.find(tables + ":1:1: training table: expected CSV dense|moe"), std::string::npos) << bad;
  std::filesystem::remove(tables);
}

// GPUDirect-TCPX on flows: the schedule's time is floored by the sends' bound at 8 per completion
// (NetworkPlan::floor), and both A3 High runs stay within 10% of their measurements there.
TEST(ValidateOnFlows, TcpxRunsStayWithinTenPercentOfTheirMeasurements) {
  for (const auto& [stem, ext] : {std::pair{"gcp_a3high_2node_tcpx_allgather", "txt"},
                                  std::pair{"gcp_a3high_2node_tcpx_allreduce", "csv"}}) {
    const std::string set = stem;
    const auto [rc, out] = capture(app("validate") + " --scenario " +
                                   src("scenarios/validation_extra/" + set + ".yaml") + " " +
                                   src("validation/extra/" + set + "." + ext) +
                                   " --set network.model=flow --max-error 10");
    EXPECT_EQ(rc, 0) << out;
  }
}

}  // namespace
