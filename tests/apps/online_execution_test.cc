// Online execution (network.execution: online): every rank's op graph runs on the engine the flow
// or packet model runs on. Held to an oracle where no link is shared (each collective priced
// alone on an idle network, the executor run on those prices), to the packet model on the same
// iteration, and to itself across runs and thread counts.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "apps/scenario_runner.h"
#include "collectives/analytical_model.h"
#include "collectives/flow_collective_model.h"
#include "config/loader.h"
#include "network/flow/flow_model.h"
#include "topology/cluster.h"
#include "workloads/online_network.h"
#include "workloads/training.h"

namespace dtsim::apps {
namespace {

const std::string kScenarios = std::string(DTSIM_SOURCE_DIR) + "/scenarios/";

double iteration_s(const config::Scenario& s) {
  const Headline h = evaluate_scenario(s);
  EXPECT_EQ(h.metrics[0].first, "iteration_time_s");
  return h.metrics[0].second;
}

// The oracle: the scenario's training job with every rank simulated, each collective and send
// priced alone on an idle flow network under the plan online execution gives it.
double priced_alone_s(const config::Scenario& s) {
  const collectives::AnalyticalCollectiveModel analytical(s.cluster, s.collectives, {});
  const auto cluster = topology::build_cluster(s.cluster);
  network::FlowModelOptions options;
  options.link_efficiency = collectives::link_efficiency(analytical.parameters(), s.cluster.nic.kind);
  const workloads::AloneOnNetworkCostModel alone(analytical, *cluster, [&] {
    return std::make_unique<network::FlowNetworkModel>(*cluster, options);
  });
  const workloads::GeneratorOptions generator{.layers_per_block = s.workload.layers_per_block, .all_ranks = true};
  return workloads::run_training(s.workload.training, s.cluster, alone, generator).iteration_time_s;
}

// Every training scenario under scenarios/, cut to a few layers and microbatches, with the
// gradient reduction after the backward pass: its collectives then run one parallelism at a time,
// on links no other collective in flight uses (TP inside a node, each DP group on its own rail).
// Online, each takes what it takes alone, and the iteration is the oracle's within 1%.
TEST(OnlineExecution, EqualsEachCollectivePricedAloneWhereNoLinkIsShared) {
  struct Case {
    const char* file;
    std::vector<config::Override> cut;
  };
  const std::vector<Case> cases = {
      {"llama3-8b-64gpu.yaml", {{"workload.model.layers", "2"}, {"workload.batch.global", "32"}}},
      // Its 2:1 leaves carry eight DP rings a node, which share uplinks (and, under ECMP, spine
      // links): here at 1:1 with adaptive routing, where they do not.
      {"llama3-70b-1024gpu.yaml",
       {{"workload.model.layers", "4"}, {"workload.batch.global", "64"}, {"workload.parallel.vp", "1"},
        {"cluster.fabric.oversubscription", "1"}, {"cluster.fabric.routing", "adaptive"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    auto sets = c.cut;
    sets.push_back({"network.model", "flow"});
    sets.push_back({"workload.overlap_grad_reduce", "false"});
    const auto s = config::load_scenario(kScenarios + c.file, sets);
    const double online = iteration_s(s);
    const double alone = priced_alone_s(s);

    EXPECT_NEAR(online / alone, 1.0, 0.01) << "online " << online << " s, priced alone " << alone << " s";
  }
}

// DeepSeek-V3's expert all_to_all crosses nodes while the pipeline's sends of other microbatches
// leave by the same NICs (1F1B keeps a stage sending and dispatching at once): online, the two
// share the NICs and the iteration is longer than each priced alone would make it, never shorter.
TEST(OnlineExecution, SharedNicsOnlySlowAnExpertParallelPipeline) {
  const auto s = config::load_scenario(
      kScenarios + "deepseek-v3-256gpu.yaml",
      {{"workload.model.layers", "4"}, {"workload.batch.global", "64"}, {"workload.parallel.vp", "1"},
       {"workload.parallel.zero", "1"}, {"workload.overlap_grad_reduce", "false"}, {"network.model", "flow"}});
  const double online = iteration_s(s), alone = priced_alone_s(s);
  EXPECT_GT(online, alone * 1.001) << "online " << online << " s, priced alone " << alone << " s";
  EXPECT_LT(online, alone * 1.05) << "online " << online << " s, priced alone " << alone << " s";
}

// A 16-GPU iteration (2 HGX nodes, TP 8, 2 pipeline stages) without congestion: the packet model,
// which pays store-and-forward and queues on top of the flow model's fluid rates, lands within 5%.
// Every byte each model was sent is delivered (run_scenario refuses a run where it is not).
TEST(OnlineExecution, PacketsAndFlowsAgreeOnA16GpuIteration) {
  auto at = [](const char* model) {
    return iteration_s(config::load_scenario(
        kScenarios + "llama3-8b-64gpu.yaml", {{"cluster.nodes", "2"}, {"workload.model.layers", "2"},
                                              {"workload.batch.global", "8"}, {"workload.parallel.pp", "2"},
                                              {"network.model", model}}));
  };
  const double flows = at("flow"), packets = at("packet");
  EXPECT_NEAR(packets / flows, 1.0, 0.05) << "flows " << flows << " s, packets " << packets << " s";
  EXPECT_GE(packets, flows * 0.999) << "packets beat flows";
}

// The output of an online run (summary, op table, fingerprint) is the same on every run and with
// any --threads: the engine is serial and every tie is broken by the model, never the clock.
TEST(OnlineExecution, OutputIsTheSameAcrossRunsAndThreads) {
  const auto s = config::load_scenario(
      kScenarios + "llama3-8b-64gpu.yaml",
      {{"cluster.nodes", "4"}, {"workload.model.layers", "2"}, {"workload.batch.global", "16"},
       {"workload.parallel.pp", "2"}, {"cluster.fabric.kind", "fat-tree"}, {"cluster.fabric.radix", "8"},
       {"cluster.fabric.oversubscription", "2"}, {"network.model", "flow"}, {"output.formats", "[table]"}});
  std::vector<std::string> outs;
  for (int threads : {1, 1, 1, 2, 4}) {
    RunOptions options;
    options.quiet = true;
    options.fingerprint = true;
    options.threads = threads;
    std::ostringstream out;
    ASSERT_EQ(run_scenario(s, options, out), 0);
    outs.push_back(out.str());
  }
  ASSERT_NE(outs[0].find("fingerprint "), std::string::npos);
  for (size_t i = 1; i < outs.size(); ++i) EXPECT_EQ(outs[i], outs[0]) << "run " << i;
}

}  // namespace
}  // namespace dtsim::apps
