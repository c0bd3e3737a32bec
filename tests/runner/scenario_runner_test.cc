// The runner behind `simulate` and `sweep`: each workload kind on each network model, the files
// it writes, and that a run is reproducible.
#include "runner/scenario_runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "collectives/model_parameters.h"
#include "collectives/analytical_model.h"
#include "config/loader.h"
#include "sim/error.h"
#include "workloads/compute_model.h"
#include "workloads/dlrm_generator.h"
#include "workloads/training.h"

namespace dtsim::runner {
namespace {

const std::string kScenarios = std::string(DTSIM_SOURCE_DIR) + "/scenarios/";

std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("dtsim_runner_test_" + name);
  std::filesystem::remove_all(dir);
  return dir;
}

// The rows of a CSV the runner writes, split into cells: one per size in a sweep's
// (collective,size_bytes,time_us,...), one per link and size in its link table.
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("collective,", 0) == 0) continue;
    std::vector<std::string> cells;
    std::istringstream cells_in(line);
    std::string cell;
    while (std::getline(cells_in, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string run(const config::Scenario& s, RunOptions options = {}) {
  std::ostringstream out;
  EXPECT_EQ(run_scenario(s, options, out), 0);
  return out.str();
}

TEST(ScenarioRunner, FlowRingAllReduceInOneNodeRunsAtNvlinkBandwidth) {
  // Eight GPUs on one NVSwitch, each link 450 GB/s per direction, of which NCCL's copies reach
  // nvlink_efficiency (as in the closed form): a ring all_reduce's bus bandwidth is that once the
  // message dwarfs the per-step latency (NVIDIA's figure for H100 is about 370 GB/s).
  auto s = config::load_scenario(kScenarios + "default.yaml",
                                 {{"cluster.nodes", "1"}, {"network.model", "flow"},
                                  {"collectives.algorithm", "ring"}, {"workload.min_bytes", "1GiB"},
                                  {"workload.max_bytes", "1GiB"}});
  RunOptions options;
  options.format = OutputFormat::csv;
  auto rows = csv_rows(run(s, options));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][5], "ring");
  const double link = 450.0 * collectives::ModelParameters{}.nvlink_efficiency;
  EXPECT_NEAR(std::stod(rows[0][4]), link, link * 0.03);
}

// The CSV row of default.yaml's one-size sweep on network model `model` with `sets` applied:
// collective, size_bytes, time_us, algbw_GBps, busbw_GBps, algorithm, protocol.
std::vector<std::string> sweep_row(std::vector<config::Override> sets, const char* model) {
  sets.emplace_back("network.model", model);
  RunOptions options;
  options.format = OutputFormat::csv;
  options.quiet = true;
  const auto rows =
      csv_rows(run(config::load_scenario(kScenarios + "default.yaml", sets), options));
  EXPECT_EQ(rows.size(), 1u);
  return rows.empty() ? std::vector<std::string>(7, "0") : rows[0];
}

double sweep_busbw(std::vector<config::Override> sets, const char* model) {
  return std::stod(sweep_row(std::move(sets), model)[4]);
}

double flow_busbw(std::vector<config::Override> sets) { return sweep_busbw(std::move(sets), "flow"); }

TEST(ScenarioRunner, FlowRingAcrossNodesIsBoundByTheNics) {
  // Two nodes of 8 GPUs, 8 x 400 Gb/s NICs each: each ring leaves a node once, through a
  // different GPU's NIC per rotation, so with the rings spread evenly over the rails the bus
  // bandwidth is the node's 8 x 50 GB/s at InfiniBand's efficiency. (Unevenly spread rings left
  // it at 372 of the line rate's 400.) 32 channels, so that their rate (channel_bandwidth each)
  // is not what binds.
  const double nics = 400.0 * collectives::ModelParameters{}.net_efficiency_infiniband;
  EXPECT_NEAR(flow_busbw({{"collectives.algorithm", "ring"},
                          {"collectives.channels", "32"},
                          {"workload.min_bytes", "2GiB"},
                          {"workload.max_bytes", "2GiB"}}),
              nics, nics * 0.03);
}

// A ring channel moves at most channel_bandwidth on flows too, as in the closed form: 4 channels
// of one H100 node reach 4 x 24 GB/s of bus bandwidth, not the 360 its NVLink gives; LL across
// nodes its network rate a channel. Without the cap both ran at the links' rate.
TEST(ScenarioRunner, FlowRingChannelsMoveAtMostTheirChannelRate) {
  const collectives::ModelParameters p;
  EXPECT_NEAR(flow_busbw({{"cluster.nodes", "1"},
                          {"collectives.algorithm", "ring"},
                          {"collectives.protocol", "simple"},
                          {"collectives.channels", "4"},
                          {"workload.min_bytes", "1GiB"},
                          {"workload.max_bytes", "1GiB"}}),
              4 * p.channel_bandwidth, 4 * p.channel_bandwidth * 0.03);
  EXPECT_NEAR(flow_busbw({{"collectives.algorithm", "ring"},
                          {"collectives.protocol", "ll"},
                          {"collectives.channels", "16"},
                          {"workload.min_bytes", "256MiB"},
                          {"workload.max_bytes", "256MiB"}}),
              16 * p.ll_net_channel_bandwidth, 16 * p.ll_net_channel_bandwidth * 0.05);
}

// nccl-tests -g 8 (workload.gpus_per_thread: 8): one thread launches on all eight GPUs, so every
// model holds a small size to eight host launches and leaves a large one, whose GPU work outlasts
// them, as it was.
TEST(ScenarioRunner, OneThreadDrivingEightGpusFloorsEveryModelAtEightLaunches) {
  const double floor_us = 8 * collectives::ModelParameters{}.host_launch_per_gpu_sm90;  // H100s
  for (const char* model : {"analytical", "flow", "packet"}) {
    auto time_us = [&](const char* bytes, const char* gpus_per_thread) {
      return std::stod(sweep_row({{"cluster.nodes", "1"},
                                  {"workload.min_bytes", bytes},
                                  {"workload.max_bytes", bytes},
                                  {"workload.gpus_per_thread", gpus_per_thread}},
                                 model)[2]);
    };
    EXPECT_LT(time_us("8", "1"), floor_us) << model;
    EXPECT_DOUBLE_EQ(time_us("8", "8"), floor_us) << model;
    EXPECT_DOUBLE_EQ(time_us("64MiB", "8"), time_us("64MiB", "1")) << model;
  }
}

// A send/recv pair is a copy kernel: on flows, as in the closed form, it moves at p2p_efficiency
// of the ring's NVLink rate (8 A100s, sendrecv_perf: 195 GB/s against a ring's 240). Without the
// cap flows ran it at the link's whole rate, 1/0.82 too fast.
TEST(ScenarioRunner, FlowSendRecvMovesAtTheCopyKernelsRate) {
  const collectives::ModelParameters p;
  const double pair = 450.0 * p.nvlink_efficiency * p.p2p_efficiency;
  EXPECT_NEAR(flow_busbw({{"cluster.nodes", "1"},
                          {"workload.collective", "send_recv"},
                          {"workload.min_bytes", "1GiB"},
                          {"workload.max_bytes", "1GiB"}}),
              pair, pair * 0.03);
}

// A send/recv ring shift between one-GPU hosts (issue 27): NCCL moves it in 128 KiB chunks
// through an 8-slot FIFO that the receiver drains slot by slot, so it runs at the NIC's rate after
// one chunk, and the closed form, flows and packets agree.
TEST(ScenarioRunner, SendRecvAcrossNodesCostsOneChunkMoreThanItsWireTime) {
  const std::vector<config::Override> sets = {{"cluster.nodes", "16"},
                                              {"cluster.gpus_per_node", "1"},
                                              {"cluster.nic.count", "1"},
                                              {"cluster.nic.bandwidth", "100Gbps"},
                                              {"cluster.fabric.link.bandwidth", "100Gbps"},
                                              {"workload.collective", "send_recv"},
                                              {"workload.min_bytes", "10MB"},
                                              {"workload.max_bytes", "10MB"}};
  const double closed = std::stod(sweep_row(sets, "analytical")[2]);
  const double flows = std::stod(sweep_row(sets, "flow")[2]);
  const double packets = std::stod(sweep_row(sets, "packet")[2]);
  EXPECT_NEAR(closed, flows, flows * 0.02);
  EXPECT_NEAR(packets, flows, flows * 0.02);
  // 10 MB on 12.5 GB/s is 800 us of wire time: the closed form stays within a chunk and the
  // latency of it, far from the 2x of a FIFO's fill.
  EXPECT_GT(closed, 800.0);
  EXPECT_LT(closed, 800.0 * 1.15);
}

// A broadcast or reduce chain streams on flows, every hop at once, as NCCL's fine pipelining does,
// with the closed form's fill: alone on its links it costs the closed form's time. Cut into
// store-and-forward slices (32 at most a channel) a chain of 8 took (7 + 31) / 32 of the bandwidth
// time: 8 x A100 broadcast on flows 202 GB/s against the closed form's 240 and the 233 measured.
TEST(ScenarioRunner, FlowBroadcastAndReduceChainsStreamAtTheClosedFormsRate) {
  for (const char* kind : {"broadcast", "reduce"}) {
    std::vector<config::Override> sets = {{"cluster.nodes", "1"},
                                          {"workload.collective", kind},
                                          {"workload.min_bytes", "1GiB"},
                                          {"workload.max_bytes", "1GiB"}};
    const double flows = flow_busbw(sets);
    const double closed = sweep_busbw(sets, "analytical");
    EXPECT_NEAR(flows, closed, closed * 0.01) << kind;
  }
}

// An AWS P5 node has four EFA NICs per GPU. NCCL pins each channel to one of them, so a ring
// all_reduce keeps all 32 NICs of a node equally busy; the flow lowering does the same (rings
// rounded up to 32, channel c on NIC slot c / 8 of its GPU). With every GPU on its first NIC
// only, it ran at a quarter of the node's network bandwidth (5.04 ms for 256 MiB).
// One size of a scenario's sweep on flows, its files written to `dir`: the CSV row's cells.
std::vector<std::string> flow_row(const config::Scenario& s, const std::filesystem::path& dir) {
  RunOptions options;
  options.out_dir = dir.string();
  options.format = OutputFormat::csv;
  auto rows = csv_rows(run(s, options));
  EXPECT_EQ(rows.size(), 1u);
  return rows.empty() ? std::vector<std::string>(7) : rows[0];
}

config::Scenario one_size_on_flows(const std::string& file, const std::string& size, const std::string& formats) {
  return config::load_scenario(kScenarios + file, {{"network.model", "flow"}, {"workload.min_bytes", size},
                                                   {"workload.max_bytes", size}, {"output.formats", formats}});
}

TEST(ScenarioRunner, FlowRingsOnP5UseEveryNicEqually) {
  auto dir = fresh_dir("p5");
  auto s = one_size_on_flows("validation_extra/aws_p5_2node_efa_allreduce.yaml", "256MiB", "[csv]");
  EXPECT_LT(std::stod(flow_row(s, dir)[2]), 2000.0);  // us
  std::set<std::string> bytes;
  int uplinks = 0;
  for (const auto& cells : csv_rows(slurp(dir / (s.name + ".links.csv")))) {
    if (cells.at(2).find("/nic") == std::string::npos || cells[2].find("->leaf") == std::string::npos) continue;
    ++uplinks;
    bytes.insert(cells.at(5));
  }
  EXPECT_EQ(uplinks, 64);       // 32 NICs on each of 2 nodes
  EXPECT_EQ(bytes.size(), 1u);  // all carrying the same bytes
}

// Without peer access copies inside a node go through host memory at a latency-bound rate; the
// flow sweep shares it per GPU pair as the closed form prices it (they were 5-20x apart).
TEST(ScenarioRunner, FlowSweepWithoutPeerAccessTakesTheHostStagedRate) {
  for (const char* file : {"validation/a40_4gpu_sys_p2p_disabled_allreduce.yaml",
                           "validation/dgxa100_4gpu_p2p_disabled_allreduce.yaml"}) {
    double time_us[2] = {0, 0};
    for (int flow = 0; flow < 2; ++flow) {
      auto s = config::load_scenario(kScenarios + file, {{"network.model", flow ? "flow" : "analytical"},
                                                         {"workload.min_bytes", "256MiB"},
                                                         {"workload.max_bytes", "256MiB"}});
      RunOptions options;
      options.format = OutputFormat::csv;
      options.quiet = true;
      auto rows = csv_rows(run(s, options));
      ASSERT_EQ(rows.size(), 1u);
      time_us[flow] = std::stod(rows[0][2]);
    }
    EXPECT_NEAR(time_us[1], time_us[0], 0.05 * time_us[0]) << file;
  }
}

// Broadcast and reduce run as a chain along each channel's ring, cut into slices that follow
// each other hop by hop. The flow lowering once let every slice start each hop at once, so the
// whole buffer was stored and forwarded at every rank: 19.5 GB/s on two nodes, 64 GB/s on one,
// against the closed form's 304 and 332. On flows they now come within 20% of it.
TEST(ScenarioRunner, FlowBroadcastAndReducePipelineAlongTheChain) {
  for (const char* kind : {"broadcast", "reduce"}) {
    for (const char* nodes : {"1", "2"}) {
      double busbw[2] = {0, 0};
      for (int flow = 0; flow < 2; ++flow) {
        auto s = config::load_scenario(kScenarios + "default.yaml",
                                       {{"workload.collective", kind}, {"cluster.nodes", nodes},
                                        {"network.model", flow ? "flow" : "analytical"},
                                        {"workload.min_bytes", "256MiB"}, {"workload.max_bytes", "256MiB"}});
        RunOptions options;
        options.format = OutputFormat::csv;
        auto rows = csv_rows(run(s, options));
        ASSERT_EQ(rows.size(), 1u);
        busbw[flow] = std::stod(rows[0][4]);
      }
      EXPECT_NEAR(busbw[1], busbw[0], 0.2 * busbw[0]) << kind << " on " << nodes << " node(s)";
    }
  }
}

// Two A100 nodes, 8 x 200 Gb/s RoCE: the tuner picks 10 channels, which the flow lowering
// spreads over 16 rings so all eight NICs carry the same bytes. The link table shows it: at
// 1 GiB every NIC uplink carries 1/8 of the buffer's 15/16 and is busy nearly all the time.
TEST(ScenarioRunner, FlowSweepWritesTheLinkTableAndEveryNicCarriesItsShare) {
  auto dir = fresh_dir("links");
  auto s = one_size_on_flows("a100-2node-roce.yaml", "1GiB", "[csv, json]");
  // 8 x 200 Gb/s RoCE a node at RoCE's efficiency; the link table's utilisation is of line rate.
  const double roce = collectives::ModelParameters{}.net_efficiency_roce;
  EXPECT_NEAR(std::stod(flow_row(s, dir)[4]), 200.0 * roce, 200.0 * roce * 0.03);
  const std::string links = slurp(dir / (s.name + ".links.csv"));
  EXPECT_EQ(links.rfind("collective,size_bytes,link,kind,bandwidth_GBps,bytes,utilisation\n", 0), 0u);
  EXPECT_EQ(slurp(dir / (s.name + ".links.json")).front(), '{');
  int uplinks = 0;
  for (const auto& cells : csv_rows(links)) {
    ASSERT_EQ(cells.size(), 7u);
    if (cells[2].find("/nic") == std::string::npos || cells[2].find("->switch") == std::string::npos) continue;
    ++uplinks;
    EXPECT_EQ(cells[3], "network");
    EXPECT_EQ(std::stoll(cells[5]), (int64_t{1} << 30) / 16 * 15 / 8) << cells[2];
    EXPECT_GT(std::stod(cells[6]), 0.9 * roce) << cells[2];
    EXPECT_LE(std::stod(cells[6]), roce + 1e-9) << cells[2];
  }
  EXPECT_EQ(uplinks, 16);  // 8 NICs on each of 2 nodes
  // The analytical model routes nothing, so it writes no link table.
  auto analytical = fresh_dir("links_analytical");
  s.network.model = config::NetworkModelKind::analytical;
  RunOptions options;
  options.out_dir = analytical.string();
  run(s, options);
  EXPECT_TRUE(std::filesystem::exists(analytical / (s.name + ".csv")));
  EXPECT_FALSE(std::filesystem::exists(analytical / (s.name + ".links.csv")));
}

TEST(ScenarioRunner, SameScenarioGivesTheSameFingerprint) {
  auto s = config::load_scenario(kScenarios + "default.yaml", {{"workload.max_bytes", "1MiB"}});
  RunOptions options;
  options.fingerprint = true;
  const std::string first = run(s, options);
  EXPECT_NE(first.find("fingerprint "), std::string::npos);
  EXPECT_EQ(run(s, options), first);
  auto longer = config::load_scenario(kScenarios + "default.yaml", {{"workload.max_bytes", "2MiB"}});
  EXPECT_NE(run(longer, options), first);
}

// What a sweep run leaves: stdout (its table and fingerprint), the rows as JSON and the link
// tables, each file read back whole.
struct SweepOutputs {
  std::string out;
  nlohmann::json rows;
  std::string rows_json;
  std::string links_csv;
  std::string links_json;
};

// The options of a run whose outputs are compared across thread counts: quiet, with the
// fingerprint, its files written to `dir`.
RunOptions compared_run(const std::filesystem::path& dir, int threads) {
  RunOptions options;
  options.out_dir = dir.string();
  options.quiet = true;
  options.fingerprint = true;
  options.threads = threads;
  return options;
}

SweepOutputs sweep_on(const std::string& model, int threads) {
  const auto dir = fresh_dir("threads_" + model + "_" + std::to_string(threads));
  auto s = config::load_scenario(kScenarios + "default.yaml", {{"network.model", model},
                                                               {"workload.max_bytes", "4MiB"},
                                                               {"output.formats", "[csv, json]"}});
  SweepOutputs o;
  o.out = run(s, compared_run(dir, threads));
  o.rows_json = slurp(dir / "default.json");
  o.rows = nlohmann::json::parse(o.rows_json).at("rows");
  o.links_csv = slurp(dir / "default.links.csv");
  o.links_json = slurp(dir / "default.links.json");
  return o;
}

// Each size of a sweep runs on its own engine and network model, so the rows, the per-link
// table (in row order) and the fingerprint (the rows' combined in row order) are the same
// whether the sizes run one after another or four at a time.
void expect_same_on_one_and_four_threads(const std::string& model) {
  const SweepOutputs one = sweep_on(model, 1);
  const SweepOutputs four = sweep_on(model, 4);
  ASSERT_EQ(one.rows.size(), 20u);  // 8 B .. 4 MiB in powers of two
  ASSERT_EQ(four.rows.size(), one.rows.size());
  for (size_t i = 0; i < one.rows.size(); ++i) {
    EXPECT_EQ(four.rows[i].at("time_us").get<double>(), one.rows[i].at("time_us").get<double>()) << i;
    EXPECT_EQ(four.rows[i].at("algorithm"), one.rows[i].at("algorithm")) << i;
  }
  EXPECT_GT(one.rows.back().at("time_us").get<double>(), 0);
  EXPECT_NE(one.out.find("fingerprint "), std::string::npos);
  EXPECT_EQ(four.out, one.out);
  EXPECT_TRUE(four.rows_json == one.rows_json) << "the rows' JSON differs";
  EXPECT_FALSE(one.links_csv.empty());
  EXPECT_TRUE(four.links_csv == one.links_csv) << "the link tables differ";
  EXPECT_TRUE(four.links_json == one.links_json) << "the link tables' JSON differs";
}

TEST(ScenarioRunner, FlowSweepIsTheSameOnOneAndFourThreads) { expect_same_on_one_and_four_threads("flow"); }

TEST(ScenarioRunner, PacketSweepIsTheSameOnOneAndFourThreads) { expect_same_on_one_and_four_threads("packet"); }

// What a training run on flows leaves: stdout (its summary and fingerprint), the summary as JSON,
// the per-op table and the per-link table, each file read back whole.
struct TrainingOutputs {
  std::string out;
  std::string summary_json;
  std::string ops_csv;
  std::string links_json;
};

TrainingOutputs training_on_flows(const std::string& routing, int threads) {
  const auto dir = fresh_dir("training_threads_" + routing + "_" + std::to_string(threads));
  auto s = config::load_scenario(kScenarios + "llama3-8b-64gpu.yaml",
                                 {{"workload.model.layers", "4"}, {"workload.batch.global", "64"},
                                  {"workload.parallel.pp", "2"}, {"cluster.fabric.kind", "fat-tree"},
                                  {"cluster.fabric.radix", "16"}, {"cluster.fabric.oversubscription", "4"},
                                  {"cluster.fabric.routing", routing}, {"network.model", "flow"},
                                  {"network.execution", "per_collective"}, {"output.formats", "[csv, json]"}});
  TrainingOutputs o;
  o.out = run(s, compared_run(dir, threads));
  o.summary_json = slurp(dir / (s.name + ".json"));
  o.ops_csv = slurp(dir / (s.name + ".ops.csv"));
  o.links_json = slurp(dir / (s.name + ".links.json"));
  return o;
}

// A training run on flows prices its distinct collectives (TP, DP and the pipeline's sends)
// several at a time, each on its own flow set and solver, sharing only the router's caches: the
// iteration, its fingerprint and every table are the same on one thread and on four, under ECMP
// and under adaptive routing (sprayed routes).
TEST(ScenarioRunner, TrainingOnFlowsIsTheSameOnOneAndFourThreads) {
  for (const std::string routing : {"ecmp", "adaptive"}) {
    SCOPED_TRACE(routing);
    const TrainingOutputs one = training_on_flows(routing, 1);
    const TrainingOutputs four = training_on_flows(routing, 4);
    EXPECT_NE(one.out.find("fingerprint "), std::string::npos);
    EXPECT_FALSE(one.links_json.empty());
    EXPECT_EQ(four.out, one.out);
    EXPECT_TRUE(four.summary_json == one.summary_json) << "the summaries' JSON differs";
    EXPECT_TRUE(four.ops_csv == one.ops_csv) << "the op tables differ";
    EXPECT_TRUE(four.links_json == one.links_json) << "the link tables differ";
  }
}

TEST(ScenarioRunner, CollectiveSweepWritesCsvAndHtmlFiles) {
  auto dir = fresh_dir("sweep");
  auto s = config::load_scenario(kScenarios + "default.yaml",
                                 {{"workload.max_bytes", "1MiB"}, {"output.formats", "[table, csv, html]"}});
  RunOptions options;
  options.out_dir = dir.string();
  run(s, options);
  std::ifstream csv(dir / "default.csv");
  std::stringstream csv_text;
  csv_text << csv.rdbuf();
  EXPECT_EQ(csv_rows(csv_text.str()).size(), 18u);  // 8 B .. 1 MiB by 2
  std::ifstream html(dir / "default.html");
  std::stringstream html_text;
  html_text << html.rdbuf();
  EXPECT_NE(html_text.str().find("<svg"), std::string::npos);
}

TEST(ScenarioRunner, TrainingWritesTraceAndHtml) {
  auto dir = fresh_dir("training");
  auto s = config::load_scenario(kScenarios + "llama3-8b-64gpu.yaml",
                                 {{"workload.model.layers", "2"}, {"workload.batch.global", "16"},
                                  {"output.formats", "[table, trace, html]"}});
  RunOptions options;
  options.out_dir = dir.string();
  run(s, options);
  ASSERT_TRUE(std::filesystem::exists(dir / (s.name + ".trace.json")));
  std::ifstream trace(dir / (s.name + ".trace.json"));
  std::stringstream text;
  text << trace.rdbuf();
  EXPECT_NE(text.str().find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(text.str().find("\"ph\":\"X\""), std::string::npos);
  // The page lists the busiest ops: the MLP GEMMs lead a Llama iteration.
  const std::string html = slurp(dir / (s.name + ".html"));
  EXPECT_NE(html.find("<h2>Busiest ops (per GPU)</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td>mlp.fc1.bwd</td>"), std::string::npos);
}

// A Chakra trace workload writes every file a generated one does; the trace and html were once
// skipped without a word. JSON files are plain JSON (no comment line before the object).
TEST(ScenarioRunner, TraceWorkloadWritesEveryOutputFile) {
  auto dir = fresh_dir("chakra");
  auto s = config::load_scenario(kScenarios + "chakra-ddp-4gpu.yaml",
                                 {{"output.formats", "[table, csv, json, trace, html]"}});
  RunOptions options;
  options.out_dir = dir.string();
  run(s, options);
  for (const char* suffix : {".csv", ".json", ".ops.csv", ".ops.json", ".trace.json", ".html"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / (s.name + suffix))) << suffix;
  }
  EXPECT_EQ(slurp(dir / (s.name + ".json")).front(), '{');
  EXPECT_EQ(slurp(dir / (s.name + ".ops.json")).front(), '{');
  EXPECT_NE(slurp(dir / (s.name + ".trace.json")).find("\"ph\":\"X\""), std::string::npos);
  // The per-op table: the converter's GEMM kernels on the compute stream, the gradient
  // all-reduces on the dp stream, the CPU operators on the host stream.
  const std::string ops = slurp(dir / (s.name + ".ops.csv"));
  EXPECT_EQ(ops.rfind("stage,stream,activity,op,count,busy_s,mean_us,share,critical_s\n", 0), 0u) << ops;
  EXPECT_NE(ops.find("\n0,dp,dp,ncclDevKernel_AllReduce"), std::string::npos) << ops;
  EXPECT_NE(ops.find("\n0,host,host,aten::linear,16,"), std::string::npos) << ops;
}

TEST(ScenarioRunner, TrainingHeadlineHasTheFourFiguresAndTheMemoryEstimate) {
  auto s = config::load_scenario(kScenarios + "llama3-8b-64gpu.yaml",
                                 {{"workload.model.layers", "2"}, {"workload.batch.global", "16"}});
  Headline h = evaluate_scenario(s);
  ASSERT_EQ(h.metrics.size(), 10u);
  EXPECT_EQ(h.metrics[0].first, "iteration_time_s");
  EXPECT_GT(h.metrics[0].second, 0);
  EXPECT_GT(h.metrics[2].second, 0);  // mfu
  EXPECT_LT(h.metrics[2].second, 1);
  EXPECT_EQ(h.metrics[4].first, "memory_gib");
  EXPECT_GT(h.metrics[4].second, 2);  // at least the runtime reserve
  EXPECT_EQ(h.metrics[5].first, "memory_fits");
  EXPECT_EQ(h.metrics[5].second, 1);
  // Then where the time goes: compute, exposed communication, host wait and bubble, which add
  // up to the iteration time.
  EXPECT_EQ(h.metrics[6].first, "compute_s");
  EXPECT_EQ(h.metrics[7].first, "exposed_comm_s");
  EXPECT_EQ(h.metrics[8].first, "host_wait_s");
  EXPECT_EQ(h.metrics[9].first, "bubble_s");
  EXPECT_GT(h.metrics[6].second, 0);
  EXPECT_NEAR(h.metrics[6].second + h.metrics[7].second + h.metrics[8].second + h.metrics[9].second,
              h.metrics[0].second, 1e-9 * h.metrics[0].second);
  // 2 layers of Llama 3 8B fit easily; a micro batch of 64 sequences of 65,536 tokens does not.
  s = config::load_scenario(kScenarios + "llama3-8b-64gpu.yaml", {{"workload.model.layers", "2"},
                                                                  {"workload.batch.global", "512"},
                                                                  {"workload.batch.micro", "64"},
                                                                  {"workload.model.seq_len", "65536"}});
  h = evaluate_scenario(s);
  EXPECT_EQ(h.metrics[5].second, 0);
}

TEST(ScenarioRunner, TrainingOnFlowsSeesAnOversubscribedFabric) {
  // Llama 3 8B on 8 nodes, TP 8 inside each node, its data-parallel groups (one GPU per node,
  // eight of them side by side) across a 2-tier fat-tree of radix 16: one node per leaf, so every
  // gradient crosses the spines. On flows, 4:1 leaves expose more DP time than 1:1, and the
  // closed form, which prices the leaves' links per traffic pattern, agrees (it had given the same
  // time for both).
  const std::vector<config::Override> base = {{"workload.model.layers", "4"},
                                              {"workload.batch.global", "64"},
                                              {"workload.overlap_grad_reduce", "false"},
                                              {"cluster.fabric.kind", "fat-tree"},
                                              {"cluster.fabric.radix", "16"}};
  auto run = [&](const char* model, const char* oversubscription, const char* execution) {
    auto o = base;
    o.emplace_back("network.model", model);
    o.emplace_back("network.execution", execution);
    o.emplace_back("cluster.fabric.oversubscription", oversubscription);
    const Headline h = evaluate_scenario(config::load_scenario(kScenarios + "llama3-8b-64gpu.yaml", o));
    return h.metrics[0].second;  // iteration_time_s
  };
  const double closed_full = run("analytical", "1", "online"), closed_thin = run("analytical", "4", "online");
  EXPECT_GT(closed_thin, closed_full * 1.02);
  // Each collective priced alone on flows, and every rank's traffic run online on flows.
  for (const char* execution : {"per_collective", "online"}) {
    SCOPED_TRACE(execution);
    const double flow_full = run("flow", "1", execution), flow_thin = run("flow", "4", execution);
    EXPECT_NEAR(flow_full / closed_full, 1.0, 0.05);
    EXPECT_GT(flow_thin, flow_full * 1.02);
    EXPECT_NEAR(flow_thin / closed_thin, 1.0, 0.05) << "flow " << flow_thin << " s, closed form " << closed_thin << " s";
  }
}

TEST(ScenarioRunner, TrainingOnFlowsBesideItsReplicasIsSlowerOnAnOversubscribedFabric) {
  // The same 8-node job on a 16-node cluster: with network.background: replicas a copy of it on
  // the other 8 nodes all-reduces its gradients at the same moments, and at 4:1 the leaves they
  // share carry both.
  const std::vector<config::Override> base = {{"workload.model.layers", "4"},
                                              {"workload.batch.global", "64"},
                                              {"workload.overlap_grad_reduce", "false"},
                                              {"workload.parallel.dp", "8"},
                                              {"cluster.nodes", "16"},
                                              {"cluster.fabric.kind", "fat-tree"},
                                              {"cluster.fabric.radix", "16"},
                                              {"cluster.fabric.oversubscription", "4"},
                                              {"network.model", "flow"}};
  // Priced per collective (the copy's flows beside each), and online (the copy's ranks run on the
  // same engine).
  for (const char* execution : {"per_collective", "online"}) {
    SCOPED_TRACE(execution);
    auto iteration = [&](const char* background) {
      auto o = base;
      o.emplace_back("network.background", background);
      o.emplace_back("network.execution", execution);
      return evaluate_scenario(config::load_scenario(kScenarios + "llama3-8b-64gpu.yaml", o)).metrics[0].second;
    };
    EXPECT_GT(iteration("replicas"), iteration("none") * 1.004);
  }
  // The table says the job had company.
  auto o = base;
  o.emplace_back("network.background", "replicas");
  EXPECT_NE(run(config::load_scenario(kScenarios + "llama3-8b-64gpu.yaml", o)).find("neighbours          1 copy of the job"),
            std::string::npos);
}

TEST(ScenarioRunner, CollectiveSweepBesideItsReplicasOnFlowsAndPackets) {
  // A 32-rank ring all_reduce (4 nodes) on 8 nodes of 4:1 radix-32 leaves (3 nodes a leaf): its
  // copy, on nodes 4-7, leaves the job's second leaf through the same uplinks. On flows (8
  // channels) and on packets (16) the shared uplinks make the row slower (1.39x and 1.46x); the
  // row times the job's own schedule. With 4 channels their rate (channel_bandwidth each) binds
  // before the uplinks do.
  auto time_us = [](const char* model, const char* background, const char* size) {
    const auto s =
        config::load_scenario(kScenarios + "default.yaml",
                              {{"network.model", model},
                               {"network.background", background},
                               {"cluster.nodes", "8"},
                               {"workload.ranks", "32"},
                               {"cluster.fabric.radix", "32"},
                               {"cluster.fabric.oversubscription", "4"},
                               {"collectives.algorithm", "ring"},
                               {"collectives.channels", std::string(model) == "flow" ? "8" : "16"},
                               {"workload.min_bytes", size},
                               {"workload.max_bytes", size}});
    return evaluate_scenario(s).metrics[1].second;  // time_us
  };
  EXPECT_GT(time_us("flow", "replicas", "64MiB"), 1.25 * time_us("flow", "none", "64MiB"));
  EXPECT_GT(time_us("packet", "replicas", "16MiB"), 1.25 * time_us("packet", "none", "16MiB"));
  // The table's header says the ranks had company.
  const auto s = config::load_scenario(kScenarios + "default.yaml",
                                       {{"network.model", "flow"}, {"network.background", "replicas"},
                                        {"cluster.nodes", "8"}, {"workload.ranks", "32"},
                                        {"workload.min_bytes", "1MiB"}, {"workload.max_bytes", "1MiB"}});
  EXPECT_EQ(run(s).rfind("# all_reduce on 32 ranks, beside 1 copy on the GPUs after them, in step\n", 0), 0u);
}

// The same job on flows with 4:1 leaves, asked for csv: the per-link table shows the leaf uplinks
// (leaf -> spine) the gradients cross, each at most fully busy while the all-reduces run, with
// more traffic than any NIC: a node's eight NICs share its leaf's four uplinks. The closed form
// routes nothing and writes no link table.
// Per collective, the links each distinct collective's flows cross, times its instances; online,
// the bytes every transfer put on each link and how long one was in flight there (LinkLedger).
void expect_training_link_table(const std::string& execution) {
  SCOPED_TRACE(execution);
  auto dir = fresh_dir("training_links_" + execution);
  auto s = config::load_scenario(kScenarios + "llama3-8b-64gpu.yaml",
                                 {{"workload.model.layers", "4"}, {"workload.batch.global", "64"},
                                  {"cluster.fabric.kind", "fat-tree"}, {"cluster.fabric.radix", "16"},
                                  {"cluster.fabric.oversubscription", "4"}, {"network.model", "flow"},
                                  {"network.execution", execution}, {"output.formats", "[csv, json, html]"}});
  RunOptions options;
  options.out_dir = dir.string();
  run(s, options);
  const std::string links = slurp(dir / (s.name + ".links.csv"));
  ASSERT_EQ(links.rfind("link,kind,bandwidth_GBps,bytes,busy_s,utilisation_busy,utilisation_iteration\n", 0), 0u)
      << links.substr(0, 200);
  EXPECT_EQ(slurp(dir / (s.name + ".links.json")).front(), '{');
  EXPECT_NE(slurp(dir / (s.name + ".html")).find("<h2>Busiest links (flows)</h2>"), std::string::npos);
  double uplink = 0, nic = 0;
  int rows = 0;
  std::istringstream in(links);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream cells_in(line);
    for (std::string cell; std::getline(cells_in, cell, ',');) cells.push_back(cell);
    ASSERT_EQ(cells.size(), 7u) << line;
    ++rows;
    EXPECT_LE(std::stod(cells[5]), 1.0 + 1e-9) << line;
    EXPECT_LE(std::stod(cells[6]), std::stod(cells[5]) + 1e-9) << line;
    if (cells[0].find("leaf") == 0 && cells[0].find("spine") != std::string::npos)
      uplink = std::max(uplink, std::stod(cells[3]));
    if (cells[0].find("/nic") != std::string::npos && cells[0].find("->leaf") != std::string::npos)
      nic = std::max(nic, std::stod(cells[3]));
  }
  EXPECT_GT(rows, 0);
  EXPECT_GT(nic, 0);
  EXPECT_GT(uplink, nic);
  auto closed = fresh_dir("training_links_closed_" + execution);
  s.network.model = config::NetworkModelKind::analytical;
  options.out_dir = closed.string();
  run(s, options);
  EXPECT_TRUE(std::filesystem::exists(closed / (s.name + ".ops.csv")));
  EXPECT_FALSE(std::filesystem::exists(closed / (s.name + ".links.csv")));
}

TEST(ScenarioRunner, TrainingOnFlowsWritesTheLinkTable) {
  expect_training_link_table("per_collective");
  expect_training_link_table("online");
}

// On flows the trace and the page show the busiest links over time: a track each (at most 32,
// under the process "links") with the operations that used it and a utilisation counter, which
// the page draws as its heat map. The closed form routes nothing and shows no link.
// Online, a generated job lists every GPU; its trace draws the first GPU of each pipeline stage
// (tp 8, pp 2 on 16 GPUs: GPUs 0 and 8), which stands for its stage's others.
TEST(ScenarioRunner, OnlineTraceDrawsTheFirstGpuOfEachStage) {
  auto dir = fresh_dir("online_trace");
  auto s = config::load_scenario(kScenarios + "llama3-8b-64gpu.yaml",
                                 {{"cluster.nodes", "2"}, {"workload.model.layers", "2"}, {"workload.batch.global", "8"},
                                  {"workload.parallel.pp", "2"}, {"network.model", "flow"},
                                  {"output.formats", "[trace]"}});
  RunOptions options;
  options.out_dir = dir.string();
  options.quiet = true;
  run(s, options);
  const nlohmann::json trace = nlohmann::json::parse(slurp(dir / (s.name + ".trace.json")));
  std::set<std::string> processes;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
  }
  EXPECT_EQ(processes, (std::set<std::string>{"gpu0/stage0", "gpu8/stage1"}));
}

TEST(ScenarioRunner, TrainingOnFlowsTracesItsBusiestLinks) {
  auto dir = fresh_dir("training_link_tracks");
  auto s = config::load_scenario(kScenarios + "llama3-8b-64gpu.yaml",
                                 {{"workload.model.layers", "4"}, {"workload.batch.global", "64"},
                                  {"network.model", "flow"}, {"network.execution", "per_collective"},
                                  {"output.formats", "[trace, html]"}});
  RunOptions options;
  options.out_dir = dir.string();
  run(s, options);
  const nlohmann::json trace = nlohmann::json::parse(slurp(dir / (s.name + ".trace.json")));
  int links_pid = -1;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "links") links_pid = e["pid"];
  }
  ASSERT_GE(links_pid, 0);
  std::set<std::string> tracks;
  int counters = 0, spans = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["pid"] != links_pid) continue;
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      const std::string name = e["args"]["name"];
      tracks.insert(name.substr(0, name.find(" (")));  // a link's extra lanes are "(2)", "(3)"...
    }
    if (e["ph"] == "C") {
      ++counters;
      EXPECT_GE(e["args"]["utilisation"].get<double>(), 0.0);
    }
    if (e["ph"] == "X") ++spans;
  }
  EXPECT_GE(tracks.size(), 1u);
  EXPECT_LE(tracks.size(), 32u);
  for (const std::string& t : tracks) EXPECT_NE(t.find("->"), std::string::npos) << t;
  EXPECT_GT(spans, 0);
  EXPECT_GT(counters, 0);
  EXPECT_NE(slurp(dir / (s.name + ".html")).find("<h2>Link utilisation</h2>"), std::string::npos);

  auto closed = fresh_dir("training_link_tracks_closed");
  s.network.model = config::NetworkModelKind::analytical;
  options.out_dir = closed.string();
  run(s, options);
  EXPECT_EQ(slurp(closed / (s.name + ".trace.json")).find("\"ph\":\"C\""), std::string::npos);
  EXPECT_EQ(slurp(closed / (s.name + ".html")).find("<h2>Link utilisation</h2>"), std::string::npos);
}

TEST(ScenarioRunner, EveryShippedScenarioRuns) {
  // scenarios/ is what users copy: each one loads and runs to a result.
  int ran = 0;
  for (const auto* sub : {"", "validation/"}) {
    for (const auto& entry : std::filesystem::directory_iterator(kScenarios + sub)) {
      if (entry.path().extension() != ".yaml") continue;
      SCOPED_TRACE(entry.path().string());
      auto s = config::load_scenario(entry.path().string());
      std::ostringstream out;
      RunOptions options;
      options.out_dir = fresh_dir("shipped").string();
      EXPECT_EQ(run_scenario(s, options, out), 0);
      EXPECT_FALSE(out.str().empty());
      ++ran;
    }
  }
  EXPECT_GE(ran, 18);
}

TEST(ScenarioRunner, DescribeWritesTheInventoryAsJsonAndDot) {
  auto s = config::load_scenario(kScenarios + "default.yaml");
  RunOptions options;
  options.describe = true;
  options.format = OutputFormat::json;
  const std::string json = run(s, options);
  for (const char* key : {"\"gpus\": 16", "\"nodes\": 2", "\"switches\"", "\"links\"",
                          "\"bisection_bandwidth_GBps\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
  options.format = OutputFormat::dot;
  EXPECT_EQ(run(s, options).rfind("graph cluster {", 0), 0u);
  options.describe = false;
  std::ostringstream out;
  EXPECT_THROW(run_scenario(s, options, out), InputError);  // dot without --describe
}

TEST(ScenarioRunner, PerCollectivePricingOnThePacketModelIsRefusedByName) {
  // The packet model runs a workload online (every rank's traffic on one engine); pricing each
  // collective alone is the flow model's, and asking the packet model for it names the key.
  try {
    config::load_scenario(kScenarios + "llama3-8b-64gpu.yaml",
                          {{"network.model", "packet"}, {"network.execution", "per_collective"}});
    FAIL() << "per_collective was accepted on the packet model";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "network.execution");
    EXPECT_NE(std::string(e.what()).find("network.model: flow"), std::string::npos) << e.what();
  }
}

TEST(ScenarioRunner, TraceOutputOfACollectiveSweepIsRefused) {
  auto s = config::load_scenario(kScenarios + "default.yaml",
                                 {{"workload.max_bytes", "1KiB"}, {"output.formats", "[trace]"}});
  RunOptions options;
  options.out_dir = fresh_dir("refused").string();
  std::ostringstream out;
  EXPECT_THROW(run_scenario(s, options, out), InputError);
  // Before anything is printed: the table never reaches the output.
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace dtsim::runner

namespace dtsim::runner {
namespace {

// workload.kind: dlrm runs the DLRM generator on the scenario's cluster and model: the headline
// equals the generator's graph run on the closed form directly, its keys reach the spec (a
// smaller batch a GPU as the generator gives it), and it runs on flows.
TEST(ScenarioRunner, DlrmScenarioRunsTheDlrmGenerator) {
  const config::Scenario s = config::load_scenario(kScenarios + "dlrm-64gpu.yaml");
  ASSERT_EQ(s.workload.kind, workloads::WorkloadKind::dlrm);
  const Headline h = evaluate_scenario(s);
  const collectives::AnalyticalCollectiveModel model(s.cluster, s.collectives, collectives::ModelParameters{});
  const workloads::ComputeModel compute(s.cluster.gpu, s.workload.training.attention);
  const workloads::TrainingResult direct = workloads::evaluate_workload(
      workloads::generate_dlrm(s.workload.dlrm, s.cluster), s.cluster, model, s.workload.dlrm.precision, compute);
  ASSERT_FALSE(h.metrics.empty());
  EXPECT_EQ(h.metrics[0].first, "iteration_time_s");
  EXPECT_DOUBLE_EQ(h.metrics[0].second, direct.iteration_time_s);

  const config::Scenario smaller = config::load_scenario(kScenarios + "dlrm-64gpu.yaml", {{"workload.dlrm.batch_per_gpu", "51"}});
  workloads::DlrmSpec spec = s.workload.dlrm;
  spec.batch_per_gpu = 51;
  const double direct_smaller = workloads::evaluate_workload(workloads::generate_dlrm(spec, s.cluster), s.cluster, model,
                                                             spec.precision, compute)
                                    .iteration_time_s;
  EXPECT_DOUBLE_EQ(evaluate_scenario(smaller).metrics[0].second, direct_smaller);
  EXPECT_LT(direct_smaller, h.metrics[0].second);

  const config::Scenario on_flows = config::load_scenario(kScenarios + "dlrm-64gpu.yaml", {{"network.model", "flow"}});
  EXPECT_GT(evaluate_scenario(on_flows).metrics[0].second, 0);
}

}  // namespace
}  // namespace dtsim::runner
