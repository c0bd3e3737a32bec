// Jobs on one fabric (scenario jobs:): every job runs together with the others on one engine and
// alone on the same nodes. Held to the oracle where no link is shared (together equals alone), to
// a hand calculation where they share an oversubscribed spine, and to itself across runs and
// thread counts; every placement or key a scenario gets wrong is refused in one line.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/flow_collective_model.h"
#include "collectives/model_parameters.h"
#include "collectives/network_plan.h"
#include "topology/cluster.h"
#include "config/loader.h"
#include "runner/scenario_runner.h"
#include "sim/error.h"
#include "workloads/megatron_generator.h"

namespace dtsim::runner {
namespace {

const std::string kScenarios = std::string(DTSIM_SOURCE_DIR) + "/scenarios/";

// Four HGX H100 nodes (8 GPUs, 8 NICs of 400 Gb/s each) under a two-tier fat-tree with adaptive
// routing. Radix 32 at 1:1 gives a leaf 16 ports down and 16 up; radix 24 at 2:1, 16 down and 8
// up. Either way a leaf holds two nodes: nodes 0 and 1 under leaf 0, nodes 2 and 3 under leaf 1.
// `model` is what network: {model: ...} holds (other network keys may follow it); `more` adds
// cluster keys.
std::string cluster(int radix, int oversubscription, const char* model, const char* more = "") {
  return fmt::format(
      "cluster:\n"
      "  node: hgx-h100\n"
      "  nodes: 4\n"
      "  fabric: {{kind: fat-tree, tiers: 2, radix: {}, oversubscription: {}, routing: adaptive}}\n"
      "{}"
      "network: {{model: {}}}\n",
      radix, oversubscription, more, model);
}

// A Llama 3 8B cut to two layers, TP 8 inside a node and DP 2 across two nodes, its gradient
// all_reduce after the backward pass (not under it), unsharded.
const char* const kLlm =
    "    workload:\n"
    "      kind: training\n"
    "      model: {preset: llama3-8b, layers: 2}\n"
    "      parallel: {tp: 8, pp: 1, cp: 1, zero: 0}\n"
    "      batch: {global: 4, micro: 1}\n"
    "      overlap_grad_reduce: false\n";

// One entry of jobs: its name, its placement keys and its workload or traffic lines (indented
// as kLlm is).
std::string entry(const std::string& name, const std::string& placement, const std::string& body) {
  return "  - name: " + name + "\n    " + placement + "\n" + body;
}
const std::string kSpread = "nodes: 2\n    placement: spread";
const std::string kDlrm = "    workload: {kind: dlrm, dlrm: {tables: 64}}\n";

const workloads::JobTime& job(const workloads::JobsResult& r, const std::string& name) {
  for (const workloads::JobTime& j : r.jobs) {
    if (j.name == name) return j;
  }
  throw std::runtime_error("no job " + name);
}

// Nodes 0-1 and 2-3 each under a leaf of their own on a non-blocking fabric: the LLM's (a 1.3B
// model's two layers, TP 8, DP 2) DP rings and the DLRM's all_to_all turn at their own leaf and
// share no link, so each job takes exactly its time alone.
TEST(Jobs, JobsUnderLeavesOfTheirOwnTakeTheirTimeAlone) {
  for (const char* model : {"flow", "packet"}) {
    SCOPED_TRACE(model);
    const std::string small_llm =
        "    workload:\n"
        "      kind: training\n"
        "      model: {layers: 2, hidden: 2048, heads: 16, vocab: 32000}\n"
        "      parallel: {tp: 8}\n"
        "      batch: {global: 4}\n";
    const auto s = config::load_scenario_text(
        cluster(32, 1, model) + "jobs:\n" + entry("llm", "nodes: [0, 1]", small_llm) +
            entry("recsys", "nodes: 2\n    first_node: 2", kDlrm),
        "disjoint.yaml");
    const workloads::JobsResult r = run_jobs(s, 1);
    ASSERT_EQ(r.jobs.size(), 2u);
    EXPECT_EQ(job(r, "llm").nodes, (std::vector<int>{0, 1}));
    EXPECT_EQ(job(r, "recsys").nodes, (std::vector<int>{2, 3}));
    for (const workloads::JobTime& j : r.jobs) {
      SCOPED_TRACE(j.name);
      EXPECT_GT(j.alone_s, 0);
      EXPECT_NEAR(j.together_s / j.alone_s, 1.0, 1e-6)
          << "alone " << j.alone_s << " s, together " << j.together_s;
    }
  }
}

// Under ECMP a job's transfers hash to routes of its own choosing, whatever the other jobs launched
// before them: a DLRM that ends long before the LLM's gradient all_reduce crosses the same 2:1
// spine leaves the LLM its time alone to the picosecond.
TEST(Jobs, AJobsEcmpRoutesDoNotDependOnTheOtherJobs) {
  std::string yaml = cluster(24, 2, "flow") + "jobs:\n" + entry("llm", kSpread, kLlm) +
                     entry("recsys", kSpread, kDlrm);
  yaml.replace(yaml.find("routing: adaptive"), std::string("routing: adaptive").size(),
               "routing: ecmp");
  const workloads::JobsResult r = run_jobs(config::load_scenario_text(yaml, "ecmp.yaml"), 1);
  ASSERT_LT(job(r, "recsys").together_s, 0.1 * job(r, "llm").alone_s);
  EXPECT_EQ(job(r, "llm").together_s, job(r, "llm").alone_s);
}

// Two jobs of the same all_to_all traffic, spread over both leaves of a 2:1 spine (A on nodes 0
// and 2, B on 1 and 3). Of each GPU's S = 32 MiB, the 8/16 bound for the other node crosses the
// spine: S/2 a GPU. Alone, a leaf's 8 uplinks carry its node's 8 GPUs' S/2 at the NICs' own rate,
// W = S/2 / (50 GB/s x efficiency) an instance. Together the same 8 uplinks carry both nodes'
// 16 GPUs' S/2: each job gets half, and its cross-spine part takes 2W. Each job rises by W an
// instance, 2W over its two, on flows and on packets alike, less what of its handshakes the other
// job's bytes fill. Each message of the handshake takes a route's latency, H across the spine:
// alone, the spine idles before the first instance's bytes (the clear-to-send, H) and between the
// instances' (the acknowledgement, the two end notices through the lowest GPU, the next
// clear-to-send: up to 4H), 5H that together the other job may use (packets, whose jobs drift
// apart by their queues, do; flows, whose jobs stay in step, do not).
TEST(Jobs, TwoAllToAllsThroughA2To1SpineEachTakeHalfOfIt) {
  for (const char* model : {"flow", "packet"}) {
    SCOPED_TRACE(model);
    const std::string traffic = "    traffic: {collective: all_to_all, bytes: 32MiB, repeat: 2}\n";
    const auto s =
        config::load_scenario_text(cluster(24, 2, model) + "jobs:\n" +
                                       entry("a", kSpread, traffic) + entry("b", kSpread, traffic),
                                   "spine.yaml");
    const workloads::JobsResult r = run_jobs(s, 1);
    EXPECT_EQ(job(r, "a").nodes, (std::vector<int>{0, 2}));
    EXPECT_EQ(job(r, "b").nodes, (std::vector<int>{1, 3}));
    const double efficiency =
        collectives::link_efficiency(collectives::ModelParameters{}, s.cluster.nic.kind).network;
    const double w = 32.0 * (1 << 20) / 2 / (s.cluster.nic.bandwidth.bytes_per_s() * efficiency);
    const auto graph = topology::build_cluster(s.cluster);
    const double h = collectives::notice_latency(*graph, 0, 2 * s.cluster.gpus_per_node).seconds();
    for (const workloads::JobTime& j : r.jobs) {
      SCOPED_TRACE(j.name);
      const double rise = j.together_s - j.alone_s;
      EXPECT_LT(rise / (2 * w), 1.01) << "rose " << rise << " s, W " << w << " s";
      EXPECT_GT(rise / (2 * w - 5 * h), 0.99) << "rose " << rise << " s, W " << w << " s, H " << h << " s";
      std::cout << fmt::format("{} {}: alone {:.6g} s, together {:.6g} s, rise / 2W {:.4f}\n",
                               model, j.name, j.alone_s, j.together_s, rise / (2 * w));
    }
  }
}

// Two copies of the LLM job spread over both leaves of a 2:1 spine, in step: their gradient
// all_reduces (a ring of two GPUs a rail, B bytes each: each GPU sends B/2 twice over the spine)
// run at the same moments. Alone, a leaf's 8 uplinks carry its node's 8 GPUs' B at the NICs'
// rate: W = B / (50 GB/s x efficiency). Together they carry both nodes': each ring gets half the
// uplinks and takes 2W. Compute and TP (NVLink) are each node's own, so the iteration rises by W.
TEST(Jobs, TwoTrainingJobsOnA2To1SpineEachLoseTheirGradientAllReduceTime) {
  const auto s = config::load_scenario_text(
      cluster(24, 2, "flow") + "jobs:\n" + entry("a", kSpread, kLlm) + entry("b", kSpread, kLlm),
      "twins.yaml");
  const workloads::JobsResult r = run_jobs(s, 1);
  topology::ClusterSpec own = s.cluster;
  own.nodes = 2;
  const workloads::Workload w =
      workloads::generate_megatron(s.jobs[0].workload.training, own, {.all_ranks = true});
  double grad_bytes = 0;
  for (const workloads::Op& op : w.ranks[0].ops) {
    if (op.kind == workloads::OpKind::collective && op.stream == workloads::Stream::dp) {
      EXPECT_EQ(op.collective, collectives::CollectiveKind::all_reduce);
      grad_bytes += static_cast<double>(op.bytes.count()) * op.repeat;
    }
  }
  ASSERT_GT(grad_bytes, 0);
  const double efficiency =
      collectives::link_efficiency(collectives::ModelParameters{}, s.cluster.nic.kind).network;
  const double w_s = grad_bytes / (s.cluster.nic.bandwidth.bytes_per_s() * efficiency);
  for (const workloads::JobTime& j : r.jobs) {
    SCOPED_TRACE(j.name);
    const double rise = j.together_s - j.alone_s;
    EXPECT_NEAR(rise / w_s, 1.0, 0.01)
        << "rose " << rise << " s, W " << w_s << " s, alone " << j.alone_s << " s";
    std::cout << fmt::format("{}: alone {:.6g} s, together {:.6g} s, rise / W {:.4f}\n", j.name,
                             j.alone_s, j.together_s, rise / w_s);
  }
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The shipped scenario: the same table, CSV and JSON on every run and with any --threads.
TEST(Jobs, OutputIsTheSameAcrossRunsAndThreads) {
  auto s = config::load_scenario(kScenarios + "two-jobs-one-spine.yaml");
  s.output.formats = {"table", "csv", "json"};
  const auto dir =
      std::filesystem::temp_directory_path() / ("dtsim_jobs_" + std::to_string(::getpid()));
  std::vector<std::string> outs;
  for (int threads : {1, 1, 2, 3}) {
    RunOptions options;
    options.quiet = true;
    options.fingerprint = true;
    options.threads = threads;
    options.out_dir = (dir / std::to_string(outs.size())).string();
    std::ostringstream out;
    ASSERT_EQ(run_scenario(s, options, out), 0);
    const std::filesystem::path files = *options.out_dir;
    outs.push_back(out.str() + slurp(files / (s.name + ".csv")) +
                   slurp(files / (s.name + ".json")));
  }
  std::filesystem::remove_all(dir);
  ASSERT_NE(outs[0].find("fingerprint "), std::string::npos);
  ASSERT_NE(outs[0].find("recsys,dlrm,\"1,3\",16,10,"), std::string::npos) << outs[0];
  ASSERT_NE(outs[0].find("\"slowdown\""), std::string::npos) << outs[0];
  for (size_t i = 1; i < outs.size(); ++i) EXPECT_EQ(outs[i], outs[0]) << "run " << i;
}

// The one line a scenario's mistake gets, from loading it.
std::string refusal(const std::string& yaml) {
  try {
    config::load_scenario_text(yaml, "jobs.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(loaded)";
}

std::string two_jobs(const std::string& first, const std::string& second,
                     const char* model = "flow") {
  return cluster(32, 1, model) + "jobs:\n  - name: a\n" + first + "  - name: b\n" + second;
}

const std::string kTraffic = "    traffic: {collective: all_to_all, bytes: 1MiB}\n";

// A mistake, the scenario that makes it and what its one line must say.
struct Mistake {
  const char* what;
  std::string yaml;
  std::vector<std::string> says;
};

std::vector<Mistake> mistakes() {
  return {
      {"overlapping ranges",
       two_jobs("    nodes: [0, 2]\n" + kTraffic, "    nodes: [2, 3]\n" + kTraffic),
       {"jobs[1].nodes", "nodes 2-3 overlap nodes 0-2 of jobs[0].nodes (\"a\")"}},
      {"a job larger than the cluster",
       two_jobs("    nodes: 5\n" + kTraffic, "    nodes: 1\n" + kTraffic),
       {"jobs[0].nodes", "the job needs 5 nodes but the cluster has 4"}},
      {"a range beyond the cluster",
       two_jobs("    nodes: [3, 4]\n" + kTraffic, "    nodes: 1\n" + kTraffic),
       {"jobs[0].nodes", "nodes 3-4 run past the cluster's 4 nodes (0-3)"}},
      {"first_node beyond the cluster",
       two_jobs("    nodes: 2\n    first_node: 3\n" + kTraffic, "    nodes: 1\n" + kTraffic),
       {"jobs[0].nodes", "nodes 3-4 run past"}},
      {"more nodes than are left",
       two_jobs("    nodes: [0, 2]\n" + kTraffic, "    nodes: 2\n" + kTraffic),
       {"jobs[1].nodes", "the job needs 2 nodes but 1 of the cluster's 4 are left"}},
      {"no consecutive nodes left",
       two_jobs("    nodes: [1, 2]\n" + kTraffic, "    nodes: 2\n" + kTraffic),
       {"jobs[1].nodes", "packed needs 2 consecutive free nodes", "placement: spread"}},
      {"a misspelled key",
       two_jobs("    nodes: 1\n    placment: spread\n" + kTraffic, "    nodes: 1\n" + kTraffic),
       {"jobs[0].placment", "unknown key", "did you mean 'placement'"}},
      {"a misspelled traffic key",
       two_jobs("    nodes: 1\n    traffic: {bytez: 1MiB}\n", "    nodes: 1\n" + kTraffic),
       {"jobs[0].traffic.bytez", "did you mean 'bytes'"}},
      {"a placement beside a range",
       two_jobs("    nodes: [0, 1]\n    placement: spread\n" + kTraffic,
                "    nodes: 1\n" + kTraffic),
       {"jobs[0].placement", "leave placement out"}},
      {"an unknown placement",
       two_jobs("    nodes: 1\n    placement: scattered\n" + kTraffic, "    nodes: 1\n" + kTraffic),
       {"jobs[0].placement", "packed", "spread"}},
      {"no nodes",
       two_jobs(kTraffic, "    nodes: 1\n" + kTraffic),
       {"jobs[0].nodes", "expected the job's node count"}},
      {"a range backwards",
       two_jobs("    nodes: [2, 1]\n" + kTraffic, "    nodes: 1\n" + kTraffic),
       {"jobs[0].nodes", "expected the last node at or after the first"}},
      {"neither workload nor traffic",
       two_jobs("    nodes: 1\n", "    nodes: 1\n" + kTraffic),
       {"jobs[0].workload", "got neither"}},
      {"both workload and traffic",
       two_jobs("    nodes: 1\n    workload: {kind: dlrm}\n" + kTraffic,
                "    nodes: 1\n" + kTraffic),
       {"jobs[0].workload", "got both"}},
      {"a collective sweep as a job",
       two_jobs("    nodes: 1\n    workload: {kind: collective-sweep}\n",
                "    nodes: 1\n" + kTraffic),
       {"jobs[0].workload.kind", "expected training, dlrm or trace"}},
      {"a training job larger than its nodes",
       two_jobs("    nodes: 1\n    workload: {kind: training, model: {preset: llama3-8b}, "
                "parallel: {tp: 8, dp: 2}}\n",
                "    nodes: 1\n" + kTraffic),
       {"jobs[0].workload.parallel", "needs more GPUs than the cluster's 8"}},
      {"two jobs of one name",
       cluster(32, 1, "flow") + "jobs:\n  - name: a\n    nodes: 1\n" + kTraffic +
           "  - name: a\n    nodes: 1\n" + kTraffic,
       {"jobs[1].name", "\"a\" is jobs[0]'s name too"}},
      {"a top-level workload beside jobs",
       two_jobs("    nodes: 1\n" + kTraffic, "    nodes: 1\n" + kTraffic) +
           "workload: {kind: dlrm}\n",
       {"workload:", "expected it under jobs"}},
      {"jobs not a list",
       cluster(32, 1, "flow") + "jobs: {name: a}\n",
       {"jobs:", "expected a list of jobs"}},
      {"the analytical model",
       two_jobs("    nodes: 1\n" + kTraffic, "    nodes: 1\n" + kTraffic, "analytical"),
       {"network.model", "flow or packet"}},
      {"background replicas",
       cluster(32, 1, "flow, background: replicas") + "jobs:\n  - name: a\n    nodes: 1\n" +
           kTraffic,
       {"network.background", "expected none"}},
      {"per-collective execution",
       cluster(32, 1, "flow, execution: per_collective") + "jobs:\n  - name: a\n    nodes: 1\n" +
           kTraffic,
       {"network.execution", "expected online"}},
      {"two attention kernels",
       two_jobs("    nodes: 1\n    workload: {kind: dlrm, attention: flash2}\n",
                "    nodes: 1\n    workload: {kind: dlrm, attention: flash3}\n"),
       {"jobs[1].workload.attention", "expected flash2 as job \"a\" has"}},
      {"a trace output",
       two_jobs("    nodes: 1\n" + kTraffic, "    nodes: 1\n" + kTraffic) +
           "output: {formats: [trace]}\n",
       {"output.formats", "jobs write table, csv or json"}},
  };
}

// Names the case where gtest (and ctest's list) would print its bytes.
void PrintTo(const Mistake& m, std::ostream* out) {
  *out << m.what;
}

class Refusal : public testing::TestWithParam<Mistake> {};

TEST_P(Refusal, IsOneLineNamingTheKey) {
  const Mistake& m = GetParam();
  const std::string line = refusal(m.yaml);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  for (const std::string& text : m.says)
    EXPECT_NE(line.find(text), std::string::npos) << text << " in: " << line;
}

INSTANTIATE_TEST_SUITE_P(Jobs, Refusal, testing::ValuesIn(mistakes()),
                         [](const testing::TestParamInfo<Mistake>& param) {
                           std::string name = param.param.what;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// A recorded trace runs as a job: the four-GPU DDP trace on node 0, traffic on node 1, neither
// leaving its node, so the trace takes its time alone. On nodes of two GPUs its four ranks do
// not fit one node: refused when the run starts, naming the job's path.
TEST(Jobs, ATraceRunsAsAJobOnItsNodes) {
  const std::string jobs =
      "jobs:\n  - name: t\n    nodes: 1\n    workload: {kind: trace, path: " + kScenarios +
      "traces/ddp-4gpu/rank}\n  - name: u\n    nodes: 1\n" + kTraffic;
  const workloads::JobsResult r =
      run_jobs(config::load_scenario_text(cluster(32, 1, "flow") + jobs, "trace.yaml"), 1);
  EXPECT_GT(job(r, "t").alone_s, 0);
  EXPECT_NEAR(job(r, "t").together_s / job(r, "t").alone_s, 1.0, 1e-6);

  const auto small = config::load_scenario_text(
      cluster(32, 1, "flow", "  gpus_per_node: 2\n  nic: {count: 2}\n") + jobs, "small.yaml");
  try {
    run_jobs(small, 1);
    ADD_FAILURE() << "a four-rank trace ran on one node of two GPUs";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "jobs[0].workload.path");
    EXPECT_NE(std::string(e.what()).find("the cluster has 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dtsim::runner
