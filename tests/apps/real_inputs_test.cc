// Real input files from public sources (tests/data/real/; each file's source, commit and licence
// are in SOURCES.md and MANIFEST.csv), each loaded by the real binaries, the figures each run
// gives checked against what the file itself says: NCCL topology dumps and the topology files
// cloud vendors publish (GPUs, NICs and their speed, NVLink or PCIe), nccl-tests logs as they are
// pasted and kept (the collective, the ranks, the sizes and a measured bandwidth), and Chakra
// traces from MLCommons' and ASTRA-sim's repositories (ranks, what runs, what is refused).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "run_program.h"

namespace {

namespace fs = std::filesystem;

const fs::path kReal = fs::path(DTSIM_SOURCE_DIR) / "tests" / "data" / "real";

using dtsim::testing::RunResult;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(testing::TempDir()) / ("real_inputs_" + std::to_string(::getpid())) / name;
  fs::create_directories(dir);
  return dir;
}

RunResult run(const char* program, const std::vector<std::string>& args) { return dtsim::testing::run_program(program, args); }

fs::path write_scenario(const std::string& name, const std::string& text) {
  const fs::path path = scratch(name) / "scenario.yaml";
  std::ofstream(path) << text;
  return path;
}

// --- NCCL topology files --------------------------------------------------------------------

struct TopologyCase {
  const char* file;
  int gpus;             // GPUs the file holds
  int nics;             // NICs at the fastest port speed it gives (every NIC when it gives none)
  double nic_gbps;      // that speed; 0 where the file gives none (the preset's 400 Gb/s stands)
  const char* scale_up; // NVLinks as the file says (the preset's NVSwitch where it names GPUs by class only)
  double scale_up_gbytes;  // per GPU, per direction
};

// Read off each file: <gpu> and class 0x03 <pci> elements, distinct <net dev>s with their speed
// (Mb/s), and each GPU's <nvlink count> (25 GB/s a link before Blackwell, 50 on it) or, without
// NVLinks, its PCIe link (link_width 0 is x16, an unknown or empty link_speed Gen3, as NCCL reads
// them; 80% of the raw rate is usable, so a raw figure is the usable one over 0.8).
const TopologyCase kTopologies[] = {
    {"a100_pcie_2gpu_nvlink_bridge_dump.xml", 2, 2, 100, "nvlink-bridge", 300},     // 12 links each
    {"a100_pcie_2gpu_degraded_nvlink_topo.xml", 2, 1, 200, "nvlink-bridge", 300},   // 12 and 1: the pair's 12
    {"azure_ncv4_topo.xml", 4, 1, 100, "pcie", 8 * 16 * (128.0 / 130.0) / 8},      // width 0, speed "": Gen3 x16
    {"azure_ndv2_topo.xml", 8, 1, 0, "nvswitch", 450},
    {"azure_ndv4_topo.xml", 8, 8, 0, "nvswitch", 450},
    {"azure_ndv5_topo.xml", 8, 8, 0, "nvswitch", 450},
    {"modal_gvisor_b200_vm_8gpu_topo.xml", 8, 8, 400, "nvswitch", 900},             // 18 links at sm 100
    {"rtx3090_8gpu_pcie_switch_ib56g_dump.xml", 8, 1, 56, "pcie", 16 * 16 * (128.0 / 130.0) / 8},
    {"rtx4090_4gpu_many_virtual_nics_dump.xml", 4, 15, 10, "pcie", 16 * 16 * (128.0 / 130.0) / 8},
};

const char* kTwoNodes = "cluster: {node: hgx-h100, nodes: 2}\n"
                        "workload: {kind: collective-sweep, collective: all_reduce, min_bytes: 1GiB, max_bytes: 1GiB}\n";

TEST(RealTopologyFiles, DescribeReportsWhatEachFileSays) {
  const fs::path scenario = write_scenario("describe", kTwoNodes);
  for (const TopologyCase& c : kTopologies) {
    SCOPED_TRACE(c.file);
    const RunResult r = run(DTSIM_SIMULATE, {scenario.string(), "--set",
                                             "cluster.topology_file=" + (kReal / "nccl_topo" / c.file).string(),
                                             "--describe", "--format", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["gpus_per_node"], c.gpus);
    EXPECT_EQ(j["nics"], 2 * c.nics);
    EXPECT_DOUBLE_EQ(j["nic_Gbps"].get<double>(), c.nic_gbps > 0 ? c.nic_gbps : 400.0);
    EXPECT_EQ(j["scale_up"], c.scale_up);
    EXPECT_NEAR(j["scale_up_GBps"].get<double>(), c.scale_up_gbytes, 1e-6);
    // What the run took from the file, and what it could not, is said on stderr.
    if (c.nic_gbps == 0) {
      EXPECT_NE(r.err.find("the file gives no NIC speed"), std::string::npos) << r.err;
    }
  }
}

// The closed form prices the file's node, not the preset's: an all_reduce across two nodes runs
// at the file's NICs on the analytical model as on flows, which route over the file's graph.
TEST(RealTopologyFiles, AnalyticalModelPricesTheFilesNodeAsFlowsDo) {
  const fs::path scenario = write_scenario("models", kTwoNodes);
  for (const char* file : {"rtx3090_8gpu_pcie_switch_ib56g_dump.xml", "azure_ncv4_topo.xml",
                           "a100_pcie_2gpu_nvlink_bridge_dump.xml", "modal_gvisor_b200_vm_8gpu_topo.xml"}) {
    SCOPED_TRACE(file);
    double busbw[2] = {0, 0};
    int i = 0;
    for (const char* model : {"analytical", "flow"}) {
      const RunResult r = run(DTSIM_SIMULATE, {scenario.string(), "--set",
                                               "cluster.topology_file=" + (kReal / "nccl_topo" / file).string(),
                                               "--model", model, "--format", "csv", "-q"});
      ASSERT_EQ(r.status, 0) << r.err;
      std::istringstream rows(r.out);
      std::string header, row;
      std::getline(rows, header);
      std::getline(rows, row);
      // collective,size_bytes,time_us,algbw_GBps,busbw_GBps,...
      std::vector<std::string> cells;
      std::stringstream cs(row);
      for (std::string cell; std::getline(cs, cell, ',');) cells.push_back(cell);
      ASSERT_GE(cells.size(), 5u) << r.out;
      busbw[i++] = std::stod(cells[4]);
    }
    EXPECT_GT(busbw[0], 0);
    EXPECT_NEAR(busbw[0] / busbw[1], 1.0, 0.35) << "analytical " << busbw[0] << " GB/s, flows " << busbw[1];
  }
}

TEST(RealTopologyFiles, AnNcclGraphFileIsNamedAsOne) {
  const fs::path scenario = write_scenario("graph", kTwoNodes);
  const RunResult r = run(DTSIM_SIMULATE, {scenario.string(), "--set",
                                           "cluster.topology_file=" + (kReal / "nccl_topo" / "azure_ncv4_graph.xml").string(),
                                           "--describe"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("an NCCL graph file"), std::string::npos) << r.err;
}

// --- nccl-tests output ----------------------------------------------------------------------

struct LogCase {
  const char* file;
  const char* collective;  // what the file says it ran (program, columns, bus/alg factor)
  int ranks;
  int sizes;               // distinct non-zero sizes
  double last_busbw;       // the largest size's bus bandwidth, out- and in-place averaged
};

// Counted off each file (rows of size 0 measure nothing and are not kept).
const LogCase kLogs[] = {
    {"aws_eks_p4d_2node_efa_allreduce_mpiprefix_nccl2.9.9.txt", "all_reduce", 16, 30, 43.81},
    {"aws_batch_8gpu_allreduce_mpiprefix_noranks.txt", "all_reduce", 8, 32, 483.05},
    {"superbench_a100_8gpu_alltoall_old_format.txt", "all_to_all", 8, 29, 224.31},
    {"superbench_a100_8gpu_reducescatter_old_format.txt", "reduce_scatter", 8, 29, 231.52},
    {"superbench_a100_8gpu_allgather_old_format.txt", "all_gather", 8, 29, 223.39},
    {"rtx3090_4node_32gpu_allreduce_concat_single_size_runs.txt", "all_reduce", 32, 25, 4.03},
    {"rtx4090_2gpu_allgather_concat_no_redop_column.txt", "all_gather", 2, 27, 8.79},
    {"rtx4090_8gpu_reducescatter_concat_single_size_runs.txt", "reduce_scatter", 8, 27, 2.58},
    {"a100_pcie_2gpu_allreduce_degraded_nvlink_debug_split_rows.txt", "all_reduce", 2, 11, 28.55},
    {"a100_pcie_2gpu_allreduce_nvlink_debug_split_rows.txt", "all_reduce", 2, 11, 216.60},
};

TEST(RealNcclTestsLogs, ValidateReadsTheCollectiveRanksSizesAndBandwidth) {
  for (const LogCase& c : kLogs) {
    SCOPED_TRACE(c.file);
    // An all_reduce scenario with GPUs enough: the file's own collective must win.
    const int per_node = std::min(c.ranks, 8);
    const fs::path scenario = write_scenario(
        "log", "cluster: {node: hgx-a100, nodes: " + std::to_string((c.ranks + 7) / 8) +
                   ", gpus_per_node: " + std::to_string(per_node) +
                   "}\nworkload: {kind: collective-sweep, collective: all_reduce}\n");
    const RunResult r = run(DTSIM_VALIDATE, {"--scenario", scenario.string(), (kReal / "nccl_tests" / c.file).string()});
    ASSERT_EQ(r.status, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(: (\w+) on (\d+) ranks)"))) << r.out;
    EXPECT_EQ(m[1].str(), c.collective);
    EXPECT_EQ(std::stoi(m[2].str()), c.ranks);
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(over (\d+) sizes)"))) << r.out;
    EXPECT_EQ(std::stoi(m[1].str()), c.sizes);
    // The last row is the largest size: size measured predicted error meas_busbw ...
    std::istringstream lines(r.out);
    std::string line, last_row;
    for (std::string l; std::getline(lines, l);) {
      if (!l.empty() && l[0] != '#' && std::regex_search(l, std::regex(R"(^\s+\d)"))) last_row = l;
    }
    std::istringstream cells(last_row);
    std::string size;
    double measured = 0, predicted = 0, error = 0, busbw = 0;
    cells >> size >> measured >> predicted >> error >> busbw;
    EXPECT_NEAR(busbw, c.last_busbw, 0.02 * c.last_busbw + 0.01) << last_row;
  }
}

// A log that names no program and whose bus bandwidth factor contradicts the scenario's
// collective is refused, not scored as that collective.
TEST(RealNcclTestsLogs, AScenarioCollectiveTheFileContradictsIsRefused) {
  const fs::path dir = scratch("renamed");
  fs::copy_file(kReal / "nccl_tests" / "superbench_a100_8gpu_allgather_old_format.txt", dir / "results.txt",
                fs::copy_options::overwrite_existing);
  // Without its name the old all_gather columns still say all_gather.
  const fs::path scenario = write_scenario("renamed_s", "cluster: {node: hgx-a100, nodes: 1}\n"
                                                        "workload: {kind: collective-sweep, collective: all_reduce}\n");
  RunResult r = run(DTSIM_VALIDATE, {"--scenario", scenario.string(), (dir / "results.txt").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("all_gather on 8 ranks"), std::string::npos) << r.out;
  // A reduce_scatter table renamed: its sum column fits all_reduce and reduce_scatter alike, and
  // its bus bandwidth, 7/8 of the algorithm bandwidth on 8 ranks, is reduce_scatter's, not the
  // scenario's all_reduce (7/4): refused, naming both.
  fs::copy_file(kReal / "nccl_tests" / "superbench_a100_8gpu_reducescatter_old_format.txt", dir / "results.txt",
                fs::copy_options::overwrite_existing);
  r = run(DTSIM_VALIDATE, {"--scenario", scenario.string(), (dir / "results.txt").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("its bus bandwidth is 0.875 of the algorithm bandwidth, where all_reduce on 8 ranks has 1.750"),
            std::string::npos)
      << r.err;
  // Named, it is scored as what it is.
  r = run(DTSIM_VALIDATE, {"--scenario", scenario.string(), "--collective", "reduce_scatter", (dir / "results.txt").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("reduce_scatter on 8 ranks"), std::string::npos) << r.out;
}

// --- Chakra traces --------------------------------------------------------------------------

struct TraceCase {
  const char* folder;
  const char* prefix;
  int ranks;
};

const TraceCase kTraces[] = {
    {"astrasim_microbench_all_reduce_4npus_1mb", "all_reduce", 4},
    {"astrasim_microbench_all_reduce_16npus_1mb", "all_reduce", 16},
    {"astrasim_microbench_all_gather_8npus_1mb", "all_gather", 8},
    {"astrasim_microbench_all_to_all_8npus_1mb", "all_to_all", 8},
    {"astrasim_microbench_reduce_scatter_16npus_1mb", "reduce_scatter", 16},
    {"astrasim_custom_ring_allreduce_8npus_1mb", "custom_allreduce", 8},
    {"astrasim_h100_hgx_allreduce_8npus_1mb", "allreduce_1mb", 8},
    {"astrasim_resnet50_dataparallel_64npus", "resnet50_dataparallel", 64},
};

nlohmann::json run_trace(const std::string& prefix, int ranks, RunResult* result = nullptr) {
  const fs::path scenario = write_scenario(
      "trace", "cluster: {node: hgx-h100, nodes: " + std::to_string((ranks + 7) / 8) +
                   "}\nworkload: {kind: trace, format: chakra, path: " + prefix + "}\n");
  const RunResult r = run(DTSIM_SIMULATE, {scenario.string(), "--format", "json", "-q"});
  if (result) *result = r;
  if (r.status != 0) return nlohmann::json();
  return nlohmann::json::parse(r.out);
}

// Every trace set runs on its ranks; collectives of 1 MiB take the network time a 1 MiB
// collective takes (the same on this cluster whether read from the trace or swept).
TEST(RealChakraTraces, EachSetRunsOnItsRanks) {
  for (const TraceCase& c : kTraces) {
    SCOPED_TRACE(c.folder);
    RunResult r;
    const auto j = run_trace((kReal / "chakra" / c.folder / c.prefix).string(), c.ranks, &r);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(j["gpus"], c.ranks);
    EXPECT_GT(j["iteration_time_s"].get<double>(), 0);
  }
}

// Every trace set runs online too, on flows and on packets: every rank's traffic on one engine,
// every byte its schedules sent delivered (the run checks it), and the transfers it moves those it
// stated before it started. On one or two nodes, with nothing shared between collectives but what
// a lone collective shares, the iteration on flows is within a fifth of the closed form's, and on
// packets no faster than on flows (store and forward on top of the fluid model) and within a
// tenth of it. The custom ring sends from rank 7 to rank 0, against its pair's rank order: each
// direction runs from its own sender.
TEST(RealChakraTraces, EachSetRunsOnlineOnFlowsAndPackets) {
  for (const TraceCase& c : kTraces) {
    SCOPED_TRACE(c.folder);
    const fs::path scenario = write_scenario(
        "online", "cluster: {node: hgx-h100, nodes: " + std::to_string((c.ranks + 7) / 8) +
                      "}\nworkload: {kind: trace, format: chakra, path: " +
                      (kReal / "chakra" / c.folder / c.prefix).string() + "}\n");
    std::map<std::string, double> time;
    for (const char* model : {"analytical", "flow", "packet"}) {
      SCOPED_TRACE(model);
      const RunResult r = run(DTSIM_SIMULATE, {scenario.string(), "--model", model, "--format", "json", "--stats"});
      ASSERT_EQ(r.status, 0) << r.err;
      time[model] = nlohmann::json::parse(r.out)["iteration_time_s"].get<double>();
      if (std::string(model) == "analytical") continue;
      std::smatch stated, moved;
      ASSERT_TRUE(std::regex_search(r.err, stated, std::regex(R"(on one engine, ([0-9.e+]+) transfers)"))) << r.err;
      ASSERT_TRUE(std::regex_search(r.err, moved, std::regex(R"(engine events, ([0-9]+) transfers)"))) << r.err;
      EXPECT_NEAR(std::stod(stated[1].str()), std::stod(moved[1].str()), 0.005 * std::stod(moved[1].str())) << r.err;
    }
    EXPECT_NEAR(time["flow"], time["analytical"], 0.2 * time["analytical"]);
    EXPECT_GE(time["packet"], time["flow"]);
    EXPECT_LE(time["packet"], 1.1 * time["flow"]);
  }
}

// ASTRA-sim's custom ring all_reduce: 14 sends and 14 receives a rank, every message with the
// same tag, chained by data dependencies. Paired in order they run; 8 ranks pass 1 MiB around
// the ring in 14 steps of 128 KiB over NVLink, so the iteration takes at least 14 transfers.
TEST(RealChakraTraces, OneTagOnEveryMessagePairsInOrder) {
  RunResult r;
  const auto j = run_trace((kReal / "chakra" / "astrasim_custom_ring_allreduce_8npus_1mb" / "custom_allreduce").string(), 8, &r);
  ASSERT_EQ(r.status, 0) << r.err;
  const double step_s = 131072 / 450e9;  // 128 KiB at the H100's NVLink rate, no latency
  EXPECT_GT(j["iteration_time_s"].get<double>(), 14 * step_s);
}

// The 64-rank ResNet-50 trace (Chakra's first version: no GlobalMetadata, nodes ordered by
// ctrl_deps only): the first message is a node, and its 161 compute nodes run one after another.
TEST(RealChakraTraces, FirstVersionTraceKeepsItsFirstNodeAndItsOrder) {
  RunResult r;
  const auto j = run_trace((kReal / "chakra" / "astrasim_resnet50_dataparallel_64npus" / "resnet50_dataparallel").string(),
                           64, &r);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(j["gpus"], 64);
  // With the nodes chained, compute is the iteration's bulk; unchained they would overlap.
  EXPECT_GT(j["breakdown"]["compute_s"].get<double>(), 0.5 * j["iteration_time_s"].get<double>());
}

// JSON that is not a Chakra trace is named for what it is, in one line.
TEST(RealChakraTraces, OtherJsonIsNamed) {
  const fs::path dir = scratch("json");
  fs::copy_file(kReal / "chakra" / "chakra_pytorch_et_host_json" / "pytorch_et_1.0.2-chakra.0.0.4.json",
                dir / "host.0.json", fs::copy_options::overwrite_existing);
  fs::copy_file(kReal / "chakra" / "chakra_small_json_8gpus" / "small_chakra.0.json", dir / "small.0.json",
                fs::copy_options::overwrite_existing);
  RunResult r;
  run_trace((dir / "host").string(), 1, &r);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("a PyTorch execution trace"), std::string::npos) << r.err;
  run_trace((dir / "small").string(), 1, &r);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not Chakra's JSON form"), std::string::npos) << r.err;
}

}  // namespace
