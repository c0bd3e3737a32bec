// The `simulate` command as a user meets it: every malformed scenario under
// tests/config/malformed/ exits with status 2 and exactly one line on stderr naming the place
// (file:line, or the --set flag) and the key. Each file states what its message must contain in
// trailing comments: `# expect: TEXT` (any number) and optionally `# args: EXTRA ARGS`.
#include <gtest/gtest.h>

#include "run_program.h"

#include <gnu/libc-version.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

using dtsim::testing::RunResult;
using dtsim::testing::slurp;

RunResult run_simulate(const std::vector<std::string>& args) { return dtsim::testing::run_program(DTSIM_SIMULATE, args); }

// `args` with `extra` after them.
std::vector<std::string> plus(std::vector<std::string> args, const std::vector<std::string>& extra) {
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> malformed_files() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(DTSIM_SOURCE_DIR) / "tests/config/malformed")) {
    if (e.path().extension() == ".yaml") out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class MalformedScenario : public testing::TestWithParam<std::string> {};

TEST_P(MalformedScenario, ExitsTwoWithOneLineNamingPlaceAndKey) {
  const std::string rel = "tests/config/malformed/" + GetParam();
  std::vector<std::string> args = {rel};
  std::vector<std::string> expects;
  std::istringstream text(slurp(fs::path(DTSIM_SOURCE_DIR) / rel));
  for (std::string line; std::getline(text, line);) {
    if (line.rfind("# args:", 0) == 0) {
      for (auto& w : words(line.substr(7))) args.push_back(w);
    } else if (line.rfind("# expect:", 0) == 0) {
      expects.push_back(line.substr(line.find_first_not_of(' ', 9)));
    }
  }
  ASSERT_GE(expects.size(), 2u) << rel << " must say what its message names (# expect: lines)";

  RunResult r = run_simulate(args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("simulate: error: ", 0), 0u) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  const bool from_flag = args.size() > 1;
  const std::string place = from_flag ? "--set " : rel + ":";
  EXPECT_NE(r.err.find(place), std::string::npos) << "the message must name " << place << ": " << r.err;
  for (const auto& e : expects) EXPECT_NE(r.err.find(e), std::string::npos) << "missing \"" << e << "\" in " << r.err;
}

INSTANTIATE_TEST_SUITE_P(Files, MalformedScenario, testing::ValuesIn(malformed_files()),
                         [](const testing::TestParamInfo<std::string>& param_info) {
                           std::string name = param_info.param.substr(0, param_info.param.size() - 5);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(Simulate, ThereAreAtLeastThirtyMalformedScenarios) {
  EXPECT_GE(malformed_files().size(), 30u);
}

TEST(Simulate, MissingFileExitsTwoNamingTheFile) {
  RunResult r = run_simulate({"scenarios/does-not-exist.yaml"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("scenarios/does-not-exist.yaml"), std::string::npos) << r.err;
}

TEST(Simulate, EmptyFileExitsTwoNamingLineOne) {
  const fs::path empty = fs::path(testing::TempDir()) / "simulate_empty.yaml";
  std::ofstream(empty).close();
  RunResult r = run_simulate({empty.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(empty.string() + ":1:1: the scenario is empty"), std::string::npos) << r.err;
  fs::remove(empty);
}

TEST(Simulate, DirectoryInsteadOfAFileExitsTwo) {
  RunResult r = run_simulate({"scenarios"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

TEST(Simulate, UnknownFlagExitsTwoWithOneLine) {
  RunResult r = run_simulate({"scenarios/default.yaml", "--bogus"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

TEST(Simulate, BadFormatValueExitsTwo) {
  RunResult r = run_simulate({"scenarios/default.yaml", "--format", "xml"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

TEST(Simulate, DryRunPrintsTheResolvedScenario) {
  RunResult r = run_simulate({"scenarios/default.yaml", "--dry-run", "--set", "cluster.nodes=4"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\n  nodes: 4\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("name: default\n"), std::string::npos) << r.out;
}

TEST(Simulate, ModelFlagSetsTheNetworkModel) {
  RunResult r = run_simulate({"scenarios/default.yaml", "--dry-run", "--model", "packet"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("network:\n  model: packet\n"), std::string::npos) << r.out;
}

TEST(Simulate, OutFlagSetsTheOutputDir) {
  RunResult r = run_simulate({"scenarios/default.yaml", "--dry-run", "--out", "results/x"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  dir: results/x\n"), std::string::npos) << r.out;
}

TEST(Simulate, RepeatedSetFlagsAllApply) {
  RunResult r = run_simulate({"--set", "cluster.nodes=4", "scenarios/default.yaml", "--set", "seed=9", "--dry-run"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\n  nodes: 4\n"), std::string::npos);
  EXPECT_NE(r.out.find("seed: 9\n"), std::string::npos);
}

TEST(Simulate, VersionPrintsTheProjectVersion) {
  RunResult r = run_simulate({"--version"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("dtsim"), std::string::npos) << r.out;
}

TEST(Simulate, HelpListsTheFlags) {
  RunResult r = run_simulate({"--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* flag : {"--set", "--format", "--out", "--model", "--threads", "--quiet", "--dry-run"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  }
}

TEST(Simulate, HelpSaysWhatTheThreadsRun) {
  RunResult r = run_simulate({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("Threads for the sizes of a collective sweep on the flow or packet model"), std::string::npos)
      << r.out;
}

// More threads than this machine may have cores: the same output, and nothing on stderr (TBB
// warns there, -q or not, when a request for workers above its limit is ignored).
TEST(Simulate, ThreadsChangeNothingInTheOutput) {
  for (const char* model : {"flow", "packet"}) {
    std::vector<std::string> args = {"scenarios/default.yaml", "--model", model, "--set", "workload.max_bytes=1MiB",
                                     "--format", "csv", "--fingerprint", "-q", "--threads"};
    args.push_back("1");
    RunResult one = run_simulate(args);
    args.back() = "8";
    RunResult eight = run_simulate(args);
    ASSERT_EQ(one.status, 0) << one.err;
    ASSERT_EQ(eight.status, 0) << eight.err;
    EXPECT_NE(one.out.find("fingerprint "), std::string::npos) << one.out;
    EXPECT_EQ(eight.out, one.out) << model;
    EXPECT_EQ(eight.err, "") << model;
  }
}

// One size's run on packets spread over partitions: the plain run's rows and fingerprint on four
// nodes cut into 2 and 4 (more than this machine may have cores), on a RoCE fabric with DCQCN.
TEST(Simulate, PartitionsChangeNothingInTheOutput) {
  std::vector<std::string> args = {"scenarios/default.yaml", "--model", "packet", "--set", "cluster.nodes=4",
                                   "--set", "workload.max_bytes=4MiB", "--set", "cluster.nic.kind=roce",
                                   "--fingerprint", "-q", "--partitions"};
  args.push_back("1");
  const RunResult one = run_simulate(args);
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_NE(one.out.find("fingerprint "), std::string::npos) << one.out;
  for (const char* partitions : {"2", "4"}) {
    args.back() = partitions;
    const RunResult cut = run_simulate(args);
    ASSERT_EQ(cut.status, 0) << cut.err;
    EXPECT_EQ(cut.out, one.out) << partitions << " partitions";
  }
}

// The csv and json files of a packet sweep on partitions, the per-link table's included (each
// link's bytes, and the port's queue, pause, drop and mark counters), byte for byte the plain
// run's: eight RoCE nodes with DCQCN cut into 1, 2, 3, 4 and 8.
TEST(Simulate, PartitionsChangeNothingInTheFiles) {
  const fs::path dir = fs::path(testing::TempDir()) / "simulate_partitions_files";
  fs::remove_all(dir);
  auto run_on = [&](const std::string& partitions) {
    return run_simulate({"scenarios/default.yaml", "--model", "packet", "--set", "cluster.nodes=8", "--set",
                         "workload.max_bytes=1MiB", "--set", "cluster.nic.kind=roce", "--set",
                         "output.formats=[csv,json]", "--out", (dir / partitions).string(), "--fingerprint", "-q",
                         "--partitions", partitions});
  };
  const char* const files[] = {"default.csv", "default.json", "default.links.csv", "default.links.json"};
  const RunResult plain = run_on("1");
  ASSERT_EQ(plain.status, 0) << plain.err;
  // The links carried bytes, and some port queued them: the table has more than names to compare.
  const std::string links = slurp(dir / "1" / "default.links.csv");
  ASSERT_NE(links.find("\nall_reduce,1048576,"), std::string::npos) << links.substr(0, 400);
  ASSERT_TRUE(std::regex_search(links, std::regex(",[1-9][0-9]*,[0-9]+,[0-9]+,[0-9.]+,[0-9]+,[0-9]+\n")));
  for (const char* partitions : {"2", "3", "4", "8"}) {
    const RunResult cut = run_on(partitions);
    ASSERT_EQ(cut.status, 0) << cut.err;
    EXPECT_EQ(cut.out, plain.out) << partitions << " partitions";
    for (const char* file : files) {
      EXPECT_EQ(slurp(dir / partitions / file), slurp(dir / "1" / file)) << file << ", " << partitions << " partitions";
    }
  }
}

TEST(Simulate, PartitionsAreRefusedWhereTheyDoNotApply) {
  const RunResult flow = run_simulate({"scenarios/default.yaml", "--model", "flow", "--partitions", "2", "-q"});
  EXPECT_EQ(flow.status, 2);
  EXPECT_NE(flow.err.find("--partitions"), std::string::npos) << flow.err;
  EXPECT_NE(flow.err.find("--model packet"), std::string::npos) << flow.err;
}

TEST(Simulate, EveryExampleScenarioPassesDryRun) {
  for (const auto& e : fs::directory_iterator(fs::path(DTSIM_SOURCE_DIR) / "scenarios")) {
    if (e.path().extension() != ".yaml") continue;
    RunResult r = run_simulate({"scenarios/" + e.path().filename().string(), "--dry-run"});
    EXPECT_EQ(r.status, 0) << e.path() << ": " << r.err;
  }
}

// Several jobs on one fabric: each job's row, and on the analytical model one line naming
// network.model with exit status 2.
TEST(Simulate, JobsPrintEachJobsTimesAndRefuseTheAnalyticalModel) {
  RunResult r = run_simulate({"scenarios/two-jobs-one-spine.yaml", "--format", "csv", "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("job,workload,nodes,gpus,iterations,alone_s,together_s,slowdown\nllm,training,\"0,2\",16,1,"),
            std::string::npos)
      << r.out;
  RunResult closed = run_simulate({"scenarios/two-jobs-one-spine.yaml", "--model", "analytical"});
  EXPECT_EQ(closed.status, 2);
  EXPECT_EQ(std::count(closed.err.begin(), closed.err.end(), '\n'), 1) << closed.err;
  EXPECT_NE(closed.err.find("network.model: jobs share the fabric on flow or packet"), std::string::npos) << closed.err;
}

TEST(Simulate, TheExampleTraceRunsFromBesideItsScenario) {
  // scenarios/chakra-ddp-4gpu.yaml names traces/ddp-4gpu/rank, relative to itself.
  RunResult r = run_simulate({"scenarios/chakra-ddp-4gpu.yaml", "--set", "output.formats=[table]"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* text : {"workload            chakra-ddp-4gpu", "GPUs                4 (4 simulated ranks",
                           "TFLOP/s, MFU        n/a", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", " host "}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << " in\n" << r.out;
  }
}

// Host-staged copies (NCCL_P2P_DISABLE) are priced at a latency-bound rate by the closed form and
// the flow model; the packet model moves them at PCIe line rate, and says so in one line.
TEST(Simulate, PacketsOnHostStagedCopiesWarnThatTheyAreOptimistic) {
  const std::string scenario = "scenarios/validation/a40_4gpu_sys_p2p_disabled_allreduce.yaml";
  RunResult packets = run_simulate({scenario, "--model", "packet", "--set", "workload.min_bytes=16MiB", "--set",
                                    "workload.max_bytes=16MiB"});
  ASSERT_EQ(packets.status, 0) << packets.err;
  EXPECT_NE(packets.err.find("simulate: warning: cluster.scale_up.kind: none stages GPU-to-GPU copies through "
                             "host memory, which the packet model"),
            std::string::npos)
      << packets.err;
  for (const char* model : {"flow", "analytical"}) {
    RunResult r = run_simulate({scenario, "--model", model, "--set", "workload.max_bytes=1GiB"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << model << ": " << r.err;
  }
}

// The shipped two-rack scenario written as trays runs as two rack presets do, on the closed form
// and on flows: its all_gather had reached 165-175 GB/s busbw against the racks' 525-545, every
// ring leaving a rack through one tray's four NICs.
TEST(Simulate, TwoRacksOfTraysRunAsTwoRackPresets) {
  for (const char* model : {"analytical", "flow"}) {
    const std::vector<std::string> size = {"--set", "workload.min_bytes=16MiB", "--set", "workload.max_bytes=16MiB",
                                           "--model", model, "--format", "csv"};
    std::vector<std::string> trays = {"scenarios/gb200-nvl72-trays.yaml"};
    trays.insert(trays.end(), size.begin(), size.end());
    std::vector<std::string> racks = {"scenarios/gb200-nvl72.yaml", "--set", "cluster.nodes=2", "--set",
                                      "workload.collective=all_gather", "--set", "collectives.algorithm=auto"};
    racks.insert(racks.end(), size.begin(), size.end());
    RunResult a = run_simulate(trays);
    RunResult b = run_simulate(racks);
    ASSERT_EQ(a.status, 0) << a.err;
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(a.out.substr(a.out.find("\nall_gather,")), b.out.substr(b.out.find("\nall_gather,"))) << model;
  }
}

// DeepSeek-V3 with a deduplicating dispatcher on four NVL72 racks, written as racks and as trays:
// its 32-GPU expert groups sit inside one rack, so no token crosses the network. Counted in trays
// they spanned eight "nodes" and the dispatch was deduplicated as if it had.
TEST(Simulate, DeduplicatedDispatchCountsARackOfTraysAsOneNode) {
  const std::vector<std::string> common = {
      "scenarios/deepseek-v3-256gpu.yaml", "--set", "cluster.node=gb200-nvl72", "--set", "workload.batch.global=576",
      "--set", "workload.parallel.ep=32", "--set", "workload.parallel.pp=9", "--set", "workload.parallel.vp=1",
      "--format", "json"};
  std::vector<std::string> racks = common, trays = common;
  for (const char* s : {"cluster.nodes=4"}) racks.insert(racks.end(), {"--set", s});
  for (const char* s : {"cluster.nodes=72", "cluster.gpus_per_node=4", "cluster.nic.count=4",
                        "cluster.scale_up.domain_gpus=72"}) {
    trays.insert(trays.end(), {"--set", s});
  }
  RunResult a = run_simulate(racks);
  RunResult b = run_simulate(trays);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  const auto time_of = [](const std::string& json) {
    const size_t at = json.find("\"iteration_time_s\"");
    return at == std::string::npos ? std::string() : json.substr(at, json.find(',', at) - at);
  };
  EXPECT_FALSE(time_of(a.out).empty()) << a.out;
  EXPECT_EQ(time_of(b.out), time_of(a.out));
}

// On 4:1 leaves the closed form prices what crosses them by the leaves' links, per traffic
// pattern, as it does a torus's: a ring's neighbours mostly share a leaf, an all-to-all crosses
// them, so neither is simply divided by the 4. 8 HGX H100 nodes on radix-16 leaves (12 ports
// down, 4 up), 1 GiB, routed adaptively: the closed form spreads traffic evenly over the uplinks,
// which ECMP's hash collisions do not.
TEST(Simulate, OversubscribedLeavesSlowRingsAndAllToAllsAsOnFlows) {
  for (const char* collective : {"all_gather", "all_to_all"}) {
    double time_us[2] = {0, 0};
    for (int m = 0; m < 2; ++m) {
      RunResult r = run_simulate({"scenarios/default.yaml", "--set", "cluster.nodes=8", "--set",
                                  "cluster.fabric.radix=16", "--set", "cluster.fabric.oversubscription=4", "--set",
                                  "cluster.fabric.routing=adaptive", "--set",
                                  std::string("workload.collective=") + collective, "--set", "workload.min_bytes=1GiB",
                                  "--set", "workload.max_bytes=1GiB", "--model", m == 0 ? "analytical" : "flow",
                                  "--format", "csv"});
      ASSERT_EQ(r.status, 0) << r.err;
      const std::string row = r.out.substr(r.out.find(std::string("\n") + collective + ",") + 1);
      time_us[m] = std::stod(row.substr(row.find(',', row.find(',') + 1) + 1));
    }
    EXPECT_NEAR(time_us[1] / time_us[0], 1.0, 0.05) << collective << ": flow " << time_us[1] << " us, analytical "
                                                     << time_us[0];
  }
}

// On flows and packets a row whose time the closed form's floor set says so: default.yaml's
// NVLS-tree rows take the closed form's time (NVLS's in-switch part inside each node), which
// exceeds what the flows alone take; the csv gives both, and the table says which rows in one
// line. The ring and tree rows are the network model's own time.
TEST(Simulate, RowsTheClosedFormBoundSayWhatBoundThem) {
  for (const char* model : {"flow", "packet"}) {
    SCOPED_TRACE(model);
    const std::vector<std::string> args = {"scenarios/default.yaml", "--model", model, "--set",
                                           "workload.min_bytes=64KiB", "--set", "workload.max_bytes=4MiB"};
    RunResult csv = run_simulate(plus(args, {"--format", "csv", "-q"}));
    ASSERT_EQ(csv.status, 0) << csv.err;
    std::istringstream in(csv.out);
    std::string line;
    std::getline(in, line);
    int floored = 0, own = 0;
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      std::stringstream cells(line);
      for (std::string cell; std::getline(cells, cell, ',');) f.push_back(cell);
      ASSERT_GE(f.size(), 8u) << line;
      const double time = std::stod(f[2]), network = std::stod(f[7]);
      const std::string from = f.size() > 8 ? f[8] : "";
      if (f[5] == "nvls_tree") {
        ++floored;
        EXPECT_GT(time, network) << line;
        EXPECT_NE(from.find("NVLS-tree"), std::string::npos) << line;
      } else {
        ++own;
        EXPECT_EQ(f[2], f[7]) << line;
        EXPECT_TRUE(from.empty()) << line;
      }
    }
    EXPECT_GT(floored, 0);
    EXPECT_GT(own, 0);
    RunResult table = run_simulate(plus(args, {"-q"}));
    ASSERT_EQ(table.status, 0) << table.err;
    EXPECT_NE(table.out.find("# " + std::to_string(floored) + " of " + std::to_string(floored + own) +
                             " rows (524288 to 4194304 B) take the closed form's time: NVLS-tree's in-switch part"),
              std::string::npos)
        << table.out;
  }
  // The closed form's own rows name no network time.
  RunResult closed = run_simulate({"scenarios/default.yaml", "--format", "csv", "-q"});
  ASSERT_EQ(closed.status, 0) << closed.err;
  EXPECT_EQ(closed.out.find("NVLS-tree's in-switch part"), std::string::npos);
}

// A torus's and a dragonfly's router-to-router links run at one NIC's speed. The closed form
// prices them (it had ignored them and warned so: a 1 GiB all_gather on a 2 x 4 torus of HGX H100
// nodes was 7x slower on flows), so neither model warns and the two agree.
TEST(Simulate, AnalyticalOnATorusOrDragonflyPricesItsRouterLinksAsFlowsDo) {
  for (const char* kind : {"torus", "dragonfly"}) {
    double time_us[2] = {0, 0};
    for (int m = 0; m < 2; ++m) {
      RunResult r = run_simulate({"scenarios/default.yaml", "--set", "cluster.nodes=8", "--set",
                                  std::string("cluster.fabric.kind=") + kind, "--set", "cluster.fabric.radix=128",
                                  "--set", "workload.collective=all_gather", "--set", "workload.min_bytes=1GiB",
                                  "--set", "workload.max_bytes=1GiB", "--model", m == 0 ? "analytical" : "flow",
                                  "--format", "csv"});
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(r.err.find("warning"), std::string::npos) << kind << ": " << r.err;
      const std::string row = r.out.substr(r.out.find("\nall_gather,") + 1);
      time_us[m] = std::stod(row.substr(row.find(',', row.find(',') + 1) + 1));
    }
    EXPECT_NEAR(time_us[1] / time_us[0], 1.0, 0.1) << kind << ": flow " << time_us[1] << " us, analytical " << time_us[0];
  }
}

// --stats says what a run did in one line on stderr: on flows, the events, transfers and max-min
// solves it counted; on packets, the packet hops; the table on stdout is the same as without it.
TEST(SimulateCli, StatsSayWhatTheRunDid) {
  const std::vector<std::string> base = {"scenarios/default.yaml", "--set", "workload.max_bytes=4MiB", "-q"};
  auto with = [&](const std::vector<std::string>& extra) { return run_simulate(plus(base, extra)); };
  const RunResult plain = with({"--model", "flow"});
  const RunResult flows = with({"--model", "flow", "--stats"});
  ASSERT_EQ(flows.status, 0) << flows.err;
  EXPECT_EQ(flows.out, plain.out);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(flows.err, m, std::regex(R"(stats: (\d+) engine events, (\d+) transfers, (\d+) max-min solves)")))
      << flows.err;
  EXPECT_GT(std::stoll(m[1].str()), 0);
  EXPECT_GT(std::stoll(m[2].str()), 0);
  EXPECT_GT(std::stoll(m[3].str()), 0);
  const RunResult packets = with({"--model", "packet", "--stats"});
  ASSERT_EQ(packets.status, 0) << packets.err;
  ASSERT_TRUE(std::regex_search(packets.err, m, std::regex(R"(max-min solves of \d+ flows, (\d+) packet hops)"))) << packets.err;
  EXPECT_GT(std::stoll(m[1].str()), 0);
}

}  // namespace

// --max-wall stops a long sweep cleanly: exit status 3, the rows done on stdout exactly as a run
// of only those sizes prints them, and one line on stderr saying how many rows were done, how far
// the stopped one had come and how many never started. The 1 GiB row on 256 GPUs on flows takes
// seconds, far past the limit.
TEST(SimulateCli, MaxWallStopsALongSweepWithTheRowsDone) {
  const std::vector<std::string> base = {"scenarios/default.yaml", "--set", "cluster.nodes=32", "--model", "flow",
                                         "--format", "csv", "--threads", "1", "-q"};
  const RunResult stopped =
      run_simulate(plus(base, {"--set", "workload.min_bytes=1KiB", "--set", "workload.max_bytes=1GiB", "--max-wall", "2"}));
  ASSERT_EQ(stopped.status, 3) << stopped.err;
  std::smatch m;
  if (std::regex_search(stopped.err, std::regex("while planning"))) {
    // A sanitizer's build can take longer than the limit to plan the 21 rows (a release build
    // plans them well within it): stopped there, no row runs (MaxWallStopsASweepWhilePlanningIt).
    EXPECT_TRUE(std::regex_search(stopped.err, std::regex(R"(^simulate: stopped at --max-wall 2 s while planning the )"
                                                          R"(rows' schedules \(\d+ of 21 planned\): 0 of 21 rows done\n$)")))
        << stopped.err;
    EXPECT_EQ(count_lines(stopped.out), 1) << stopped.out;
    return;
  }
  ASSERT_TRUE(std::regex_search(stopped.err, m,
                                std::regex(R"(^simulate: stopped at --max-wall 2 s: (\d+) of 21 rows done.*; the row of (\d+) bytes had reached [0-9.e+]+ us simulated with \d+% of its bytes delivered(; (\d+) not started)?\n$)")))
      << stopped.err;
  const int done = std::stoi(m[1].str());
  ASSERT_LT(done, 21);
  // The rows run in order on one thread: the rows done are the smallest, the one stopped is next.
  EXPECT_EQ(std::stoll(m[2].str()), int64_t{1024} << done);
  EXPECT_EQ(m[4].matched ? std::stoi(m[4].str()) : 0, 21 - done - 1);
  EXPECT_EQ(count_lines(stopped.out), 1 + done) << stopped.out;
  if (done == 0) return;
  const RunResult same_sizes = run_simulate(plus(
      base, {"--set", "workload.min_bytes=1KiB", "--set", "workload.max_bytes=" + std::to_string(int64_t{1024} << (done - 1))}));
  ASSERT_EQ(same_sizes.status, 0) << same_sizes.err;
  EXPECT_EQ(stopped.out, same_sizes.out);
}

// Before a sweep on flows or packets runs, its cost is stated on stderr in one line; one that
// would hold more memory than it may is refused in one line naming the key to change, whether
// its schedules alone pass the limit while being planned or its run would.
TEST(SimulateCli, StatesTheCostOfASweepAndRefusesOneThatWouldNotFit) {
  const std::vector<std::string> base = {"scenarios/default.yaml", "--set", "workload.max_bytes=1MiB"};
  auto with = [&](const std::vector<std::string>& extra) { return run_simulate(plus(base, extra)); };
  const RunResult fits = with({"--model", "packet"});
  ASSERT_EQ(fits.status, 0) << fits.err;
  EXPECT_TRUE(std::regex_search(
      fits.err, std::regex(R"(^simulate: packet model: 18 rows, [0-9.e+]+ transfers \([0-9.e+]+ in the largest row\), )"
                           R"([0-9.e+]+ packet hops; at most about [0-9.]+ MiB of memory \([0-9.]+ GiB available\)\n$)")))
      << fits.err;
  EXPECT_EQ(with({"--model", "packet", "-q"}).err, "");

  const RunResult run_too_big = with({"--model", "flow", "--max-memory", "1MiB"});
  EXPECT_EQ(run_too_big.status, 2);
  EXPECT_EQ(count_lines(run_too_big.err), 1) << run_too_big.err;
  EXPECT_NE(run_too_big.err.find("workload.ranks: the flow model would hold about"), std::string::npos) << run_too_big.err;
  EXPECT_NE(run_too_big.err.find("more than the 1 MiB --max-memory allows"), std::string::npos) << run_too_big.err;
  EXPECT_EQ(run_too_big.out, "");

  const RunResult plan_too_big = with({"--model", "flow", "--max-memory", "1KiB"});
  EXPECT_EQ(plan_too_big.status, 2);
  EXPECT_EQ(count_lines(plan_too_big.err), 1) << plan_too_big.err;
  EXPECT_NE(plan_too_big.err.find("workload.ranks: the flow model would plan more than 16 transfers for the 8-byte row"),
            std::string::npos)
      << plan_too_big.err;
}

// The memory a sweep states before it runs bounds what it then holds, within a few times, where
// most of it is in flight (an all_to_all on flows, ECMP and sprayed over 32 routes by adaptive
// routing) and where most is planned schedule (a ring on packets). The peak is the process's
// (--stats), measured here without sanitizers, whose shadow memory it would count.
TEST(SimulateCli, TheMemoryStatedBeforeASweepBoundsItsPeak) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory is in the peak";
#endif
  const std::vector<std::vector<std::string>> cases = {
      {"--model", "flow", "--set", "cluster.nodes=8", "--set", "workload.collective=all_to_all", "--set",
       "workload.min_bytes=64MiB", "--set", "workload.max_bytes=64MiB"},
      {"--model", "flow", "--set", "cluster.nodes=6", "--set", "workload.collective=all_to_all", "--set",
       "workload.min_bytes=1MiB", "--set", "workload.max_bytes=1MiB", "--set", "cluster.fabric.routing=adaptive"},
      {"--model", "packet", "--set", "cluster.nodes=16", "--set", "workload.min_bytes=4MiB", "--set",
       "workload.max_bytes=4MiB", "--set", "collectives.algorithm=ring"}};
  const auto mib = [](const std::string& err, const std::regex& re) {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(err, m, re)) << err;
    if (m.empty()) return 0.0;
    return std::stod(m[1].str()) * (m[2].str() == "GiB" ? 1024.0 : 1.0);
  };
  for (const auto& extra : cases) {
    const RunResult r = run_simulate(plus({"scenarios/default.yaml", "--threads", "1", "--stats"}, extra));
    ASSERT_EQ(r.status, 0) << r.err;
    const double stated = mib(r.err, std::regex(R"(at most about ([0-9.]+) (MiB|GiB) of memory)"));
    const double peak = mib(r.err, std::regex(R"(peak memory ([0-9]+) (MiB))"));
    EXPECT_LE(peak, stated) << r.err;
    EXPECT_LE(stated, 3 * peak) << r.err;
  }
}

// --max-wall stops a sweep whose planning alone outlasts it, before any row runs: the ring
// all_reduce over twenty GB200 NVL72 racks (1,440 GPUs) plans 6.6e7 transfers a row, minutes of
// planning; the run stops with exit status 3, the header only, and one line saying how far the
// planning had come.
TEST(SimulateCli, MaxWallStopsASweepWhilePlanningIt) {
  const RunResult r = run_simulate({"scenarios/validation_extra/coreweave_gb200_nvl72_20rack_allreduce.yaml", "--model",
                                    "flow", "--format", "csv", "--max-wall", "0.5", "-q"});
  ASSERT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(count_lines(r.out), 1) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex(R"(^simulate: stopped at --max-wall 0.5 s while planning the rows' schedules \(0 of 6 planned\): )"
                        R"(0 of 6 rows done\n$)")))
      << r.err;
}

// A generated job that spends much of its iteration in the pipeline bubble, or does not fit in
// HBM, gets one warning each naming the keys that would change it, with what each would give: the
// bubble by the schedule's closed form (pp - 1) / (vp x m + pp - 1), memory re-estimated. Llama 3
// 405B on 16,384 GPUs with 16 stages and 16 microbatches a replica: 15/31 = 48%, 15/79 = 19% at
// vp 4. And a key the memory line says would make it fit does.
TEST(SimulateCli, BubbleAndMemoryWarningsNameTheKeysThatChangeThem) {
  const RunResult bubble = run_simulate({"scenarios/sweeps/llama3-405b-16k.yaml"});
  ASSERT_EQ(bubble.status, 0) << bubble.err;
  EXPECT_NE(bubble.err.find("simulate: warning: the pipeline bubble is 49% of the iteration (16 stages, vp 1, 16 "
                            "microbatches a replica; closed form (pp - 1) / (vp x m + pp - 1) = 48%)"),
            std::string::npos)
      << bubble.err;
  EXPECT_NE(bubble.err.find("with workload.parallel.vp: 4 about 19%"), std::string::npos) << bubble.err;
  EXPECT_EQ(bubble.err.find("GiB of HBM"), std::string::npos) << bubble.err;

  const std::vector<std::string> unsharded = {"scenarios/sweeps/llama3-405b-16k.yaml", "--set", "workload.parallel.zero=0",
                                              "--set", "workload.batch.micro=2"};
  const RunResult memory = run_simulate(unsharded);
  ASSERT_EQ(memory.status, 0) << memory.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(memory.err, m,
                                std::regex(R"(simulate: warning: workload needs [0-9.]+ GiB per GPU .* of HBM; the time assumes it fits; it would fit with workload\.parallel\.zero: (\d) )")))
      << memory.err;
  const RunResult fits = run_simulate(plus(unsharded, {"--set", "workload.parallel.zero=" + m[1].str()}));
  ASSERT_EQ(fits.status, 0) << fits.err;
  EXPECT_EQ(fits.err.find("GiB of HBM"), std::string::npos) << fits.err;
}

// --max-wall on a training run on flows stops the pricing of its distinct collectives: exit status
// 3, nothing on stdout, one line saying how many of them were priced.
TEST(SimulateCli, MaxWallStopsTheCollectivePricingOfATrainingRunOnFlows) {
  const RunResult r = run_simulate({"scenarios/sweeps/llama3-405b-16k.yaml", "--model", "flow", "--set",
                                    "cluster.fabric.routing=adaptive", "--set", "network.execution=per_collective",
                                    "--threads", "1", "--max-wall", "0.2", "-q"});
  ASSERT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.out, "");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.err, m,
      std::regex(R"(^simulate: stopped at --max-wall 0.2 s: (\d+) of (\d+) distinct collectives priced on flows; no iteration time\n$)")))
      << r.err;
  EXPECT_LT(std::stoi(m[1].str()), std::stoi(m[2].str()));
}

// --max-wall on a training run online stops its engine: exit status 3, nothing on stdout, one
// line saying how far the iteration had got.
TEST(SimulateCli, MaxWallStopsAnOnlineTrainingRun) {
  const RunResult r = run_simulate({"scenarios/llama3-8b-64gpu.yaml", "--model", "flow", "--max-wall", "0.3", "-q"});
  ASSERT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.out, "");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m,
                                std::regex(R"(^simulate: stopped at --max-wall 0.3 s: the iteration had reached [0-9.e+-]+ s )"
                                           R"(simulated with (\d+) of (\d+) ops done; no iteration time\n$)")))
      << r.err;
  EXPECT_LT(std::stoll(m[1].str()), std::stoll(m[2].str()));
}

// An online run states its size before it starts (every rank's ops, the memory they hold) and is
// refused in one line naming network.execution when they would not fit: Llama 3.1 405B on 16,384
// GPUs holds 55 million ops.
TEST(SimulateCli, OnlineTrainingStatesItsSizeAndRefusesOneThatWouldNotFit) {
  const RunResult fits = run_simulate({"scenarios/llama3-8b-64gpu.yaml", "--model", "flow", "--max-wall", "0.05"});
  EXPECT_TRUE(std::regex_search(fits.err, std::regex(R"(^simulate: online on flows: every rank's ops \(3.45e\+06\) on one )"
                                                     R"(engine, 7.42e\+06 transfers, about [0-9.]+ MiB \([0-9.]+ GiB )"
                                                     R"(available\)\n)")))
      << fits.err;
  const RunResult r = run_simulate({"scenarios/sweeps/llama3-405b-16k.yaml", "--model", "flow", "--max-memory", "4GiB", "-q"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("network.execution: online on flows, every rank's ops (5.51e+07) would hold about 12.6 GiB, more "
                       "than the 4 GiB --max-memory allows"),
            std::string::npos)
      << r.err;
}

// The memory an online run states bounds what it then holds where its collectives' schedules,
// not its ops, are most of it: DLRM's all_to_all over every GPU. Measured without sanitizers,
// whose shadow memory the peak would count.
TEST(SimulateCli, TheMemoryStatedBeforeAnOnlineRunBoundsItsPeak) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory is in the peak";
#endif
  const RunResult r = run_simulate({"scenarios/dlrm-64gpu.yaml", "--model", "flow", "--stats"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::smatch stated, peak;
  ASSERT_TRUE(std::regex_search(r.err, stated, std::regex(R"(on one engine, [0-9.e+]+ transfers, about ([0-9.]+) MiB)")))
      << r.err;
  ASSERT_TRUE(std::regex_search(r.err, peak, std::regex(R"(peak memory ([0-9]+) MiB)"))) << r.err;
  EXPECT_LE(std::stod(peak[1].str()), std::stod(stated[1].str())) << r.err;
  EXPECT_LE(std::stod(stated[1].str()), 3 * std::stod(peak[1].str())) << r.err;
}

// simulate starts itself again on a heap of transparent huge pages (apps/command_main.h): an
// online run that builds 55 MiB of ops and state takes a fraction of the page faults it takes on
// 4 KiB pages (DTSIM_PLAIN_HEAP), with the same output. Without sanitizers, whose allocators are
// not glibc's, and where the kernel offers huge pages.
TEST(SimulateCli, StartsOnAHugePageHeapWithTheSameOutput) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's allocator does not read glibc's tunables";
#endif
  std::string modes;
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  if (!std::getline(thp, modes) || modes.find("[never]") != std::string::npos) {
    GTEST_SKIP() << "no transparent huge pages here";
  }
  std::error_code proc_error;
  const bool has_proc = !std::filesystem::read_symlink("/proc/self/exe", proc_error).empty() && !proc_error;
  int major = 0;
  int minor = 0;
  if (!has_proc || std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2 || major * 100 + minor < 235) {
    GTEST_SKIP() << "no /proc to start again from, or a glibc older than 2.35 (no glibc.malloc.hugetlb)";
  }
  const std::vector<std::string> run = {DTSIM_SIMULATE, "scenarios/llama3-8b-64gpu.yaml", "--model", "flow", "--set",
                                        "workload.model.layers=2", "--format", "csv", "--stats"};
  const auto faults = [](const RunResult& r) {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(r.err, m, std::regex(R"(MiB, ([0-9]+) page faults)"))) << r.err;
    return m.empty() ? 0.0 : std::stod(m[1].str());
  };
  const RunResult plain = dtsim::testing::run_program("env", plus({"-u", "GLIBC_TUNABLES", "DTSIM_PLAIN_HEAP=1"}, run));
  const RunResult huge = dtsim::testing::run_program("env", plus({"-u", "GLIBC_TUNABLES"}, run));
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_EQ(huge.status, 0) << huge.err;
  EXPECT_EQ(huge.out, plain.out);
  EXPECT_GT(faults(plain), 4 * faults(huge)) << plain.err << huge.err;
}

// Several jobs online: the memory stated bounds the peak where the plans of the jobs' collectives,
// not their ops, are most of it (two DLRM jobs of 64 GPUs, each an all_to_all over all of them),
// and the transfers stated are those the run together moves. Measured without sanitizers.
TEST(SimulateCli, TheMemoryStatedBeforeAJobsRunBoundsItsPeak) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory is in the peak";
#endif
  const fs::path scenario = fs::path(testing::TempDir()) / "simulate_two_dlrm_jobs.yaml";
  std::ofstream(scenario) << "cluster: {node: hgx-h100, nodes: 16}\n"
                             "network: {model: flow}\n"
                             "jobs:\n"
                             "  - {name: a, nodes: 8, workload: {kind: dlrm, dlrm: {tables: 64, batch_per_gpu: 256}}}\n"
                             "  - {name: b, nodes: 8, workload: {kind: dlrm, dlrm: {tables: 64, batch_per_gpu: 256}}}\n";
  const RunResult r = run_simulate({scenario.string(), "--stats", "--format", "csv"});
  fs::remove(scenario);
  ASSERT_EQ(r.status, 0) << r.err;
  std::smatch stated, peak, moved;
  ASSERT_TRUE(std::regex_search(
      r.err, stated, std::regex(R"(every rank's ops \([0-9.e+]+\), ([0-9.e+]+) transfers together, about ([0-9.]+) MiB)")))
      << r.err;
  ASSERT_TRUE(std::regex_search(r.err, peak, std::regex(R"(peak memory ([0-9]+) MiB)"))) << r.err;
  ASSERT_TRUE(std::regex_search(r.err, moved, std::regex(R"(engine events, ([0-9]+) transfers,)"))) << r.err;
  EXPECT_LE(std::stod(peak[1].str()), std::stod(stated[2].str())) << r.err;
  EXPECT_LE(std::stod(stated[2].str()), 3 * std::stod(peak[1].str())) << r.err;
  EXPECT_NEAR(std::stod(stated[1].str()), std::stod(moved[1].str()), 0.005 * std::stod(moved[1].str())) << r.err;
}

// The transfers an online run states before it starts are those it then moves (to the three
// digits printed): DLRM's all_to_all and all_reduce over 64 GPUs. (Llama 3 8B's, with its
// pipeline sends, are held to the run's 7,419,328 above.)
TEST(SimulateCli, AnOnlineRunStatesTheTransfersItThenMoves) {
  const RunResult r = run_simulate({"scenarios/dlrm-64gpu.yaml", "--model", "flow", "--stats", "--format", "csv"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::smatch stated, moved;
  ASSERT_TRUE(std::regex_search(r.err, stated, std::regex(R"(on one engine, ([0-9.e+]+) transfers, about)"))) << r.err;
  ASSERT_TRUE(std::regex_search(r.err, moved, std::regex(R"(engine events, ([0-9]+) transfers,)"))) << r.err;
  const double actual = std::stod(moved[1].str());
  EXPECT_GT(actual, 1e5) << r.err;
  EXPECT_NEAR(std::stod(stated[1].str()), actual, 0.005 * actual) << r.err;
}

// Training on flows states its cost before pricing (the distinct collectives, the budget each is
// priced under) and prices each under a budget from the memory it may use: past it the run is
// refused in one line naming the key, before the lowering exhausts memory.
TEST(SimulateCli, TrainingOnFlowsRefusesACollectiveThatWouldNotFit) {
  const RunResult fits = run_simulate({"scenarios/llama3-70b-1024gpu.yaml", "--model", "flow", "--set",
                                       "network.execution=per_collective", "--threads", "1"});
  ASSERT_EQ(fits.status, 0) << fits.err;
  EXPECT_TRUE(std::regex_search(
      fits.err, std::regex(R"(^simulate: flow model: \d+ distinct collectives to price on 1 thread, each under [0-9.e+]+ )"
                           R"(transfers \([0-9.]+ GiB of memory available\)\n$)")))
      << fits.err;
  const RunResult r = run_simulate({"scenarios/llama3-70b-1024gpu.yaml", "--model", "flow", "--set",
                                    "network.execution=per_collective", "--max-memory", "1KiB", "--threads", "1", "-q"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("cluster.nodes: the flow model would plan more than 1 transfers for one collective"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("more than the 1 KiB --max-memory allows"), std::string::npos) << r.err;
}
