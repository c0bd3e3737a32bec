// Max-min solves on a fat-tree-shaped instance: 1024 H100 GPUs (128 HGX nodes, 8 x 400 Gb/s NICs
// each) on a 2-tier radix-64 fat-tree, with 1k to 1M flows between random GPUs of different
// nodes, each on its ECMP route (random flow hash), or each transfer sprayed over 8 such routes as
// 8 sub-flows of weight 1/8 (*Sprayed). The problem is built once; only solve() is timed.
// Counters: solves_per_s, rounds (rate levels), links (links in use), flows.
//   build/flow-dev/bench/network/flow_solver_benchmark --benchmark_repetitions=3
// The CUDA solver registers itself too when dtsim_gpu_accel is built and a GPU is present.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <unordered_map>
#include <vector>

#include "network/flow/team_filling_host.h"
#include "network/flow/flow_model.h"
#include "network/flow/max_min_solver.h"
#include "sim/rng.h"
#include "topology/catalog.h"
#include "topology/cluster.h"
#ifdef DTSIM_HAVE_CUDA_SOLVER
#include "gpu_accel/cuda_max_min_solver.h"
#endif

namespace dtsim::network::flow {
namespace {

std::unique_ptr<topology::Cluster> fat_tree_cluster() {
  topology::ClusterSpec s = *topology::find_node_preset("hgx-h100");
  s.nodes = 128;
  s.fabric.kind = topology::FabricKind::fat_tree;
  s.fabric.tiers = 2;
  s.fabric.radix = 64;
  return topology::build_cluster(s);
}

// Two random GPUs of different nodes.
std::pair<int, int> random_pair_across_nodes(const topology::Cluster& c, sim::Rng& rng) {
  const auto gpus = static_cast<uint64_t>(c.gpu_count());
  int src = 0;
  int dst = 0;
  do {
    src = static_cast<int>(rng.below(gpus));
    dst = static_cast<int>(rng.below(gpus));
  } while (c.node_of(src) == c.node_of(dst));
  return {src, dst};
}

// `flows` transfers; with spray > 1 each is `spray` sub-flows of weight 1/spray on as many random
// ECMP hashes (adaptive routing's sprayed transfer, a weighted problem).
FlowProblem fat_tree_problem(int flows, int spray = 1) {
  const auto cluster = fat_tree_cluster();
  const topology::Cluster& c = *cluster;
  sim::Rng rng(1, sim::stream_id("flow-solver-benchmark"));
  FlowProblem p;
  std::unordered_map<topology::LinkId, uint32_t> dense;
  std::vector<uint32_t> path;
  for (int f = 0; f < flows; ++f) {
    const auto [src, dst] = random_pair_across_nodes(c, rng);
    for (int k = 0; k < spray; ++k) {
      path.clear();
      for (topology::LinkId l : c.route(src, dst, rng.below(1 << 16))) {
        auto [it, fresh] = dense.emplace(l, static_cast<uint32_t>(p.capacity.size()));
        if (fresh) p.capacity.push_back(c.link(l).bandwidth.bytes_per_s());
        path.push_back(it->second);
      }
      p.add_flow(path, 1.0 / spray);
    }
  }
  p.build_link_index();
  return p;
}

void run(benchmark::State& state, FlowSolver& solver, const FlowProblem& p) {
  std::vector<double> rates(p.flow_count());
  for (auto _ : state) {
    solver.solve(p, rates);
    benchmark::DoNotOptimize(rates.data());
  }
  state.counters["solves_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["links"] = static_cast<double>(p.link_count());
  state.counters["flows"] = static_cast<double>(p.flow_count());
  // Flow-link pairs, what a full solve's cost is counted against: pairs_per_s is 1e9 over the ns a
  // pair costs.
  state.counters["pairs"] = static_cast<double>(p.flow_links.size());
  state.counters["pairs_per_s"] = benchmark::Counter(
      static_cast<double>(p.flow_links.size()) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["max_util"] = max_link_utilization(p, rates);
}

void BM_CpuSolve(benchmark::State& state) {
  CpuMaxMinSolver solver;
  run(state, solver, fat_tree_problem(static_cast<int>(state.range(0))));
  state.counters["rounds"] = solver.last_rounds();
}
BENCHMARK(BM_CpuSolve)
    ->Arg(1'000)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMicrosecond);

// Each transfer sprayed over 8 routes: 8 sub-flows of weight 1/8.
void BM_CpuSolveSprayed(benchmark::State& state) {
  CpuMaxMinSolver solver;
  run(state, solver, fat_tree_problem(static_cast<int>(state.range(0)), 8));
  state.counters["rounds"] = solver.last_rounds();
}
BENCHMARK(BM_CpuSolveSprayed)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMicrosecond);

// What a solve of the CUDA solver's team program moves and does, from the counts of its host twin
// (which do not depend on the threads): `bytes` through device memory (team::bytes_moved, per-link
// state in shared memory as on an H100 or H200 below 14,500 links), `upload_bytes` from the host
// (team::upload_bytes), rounds, and the flow-list entries walked.
void team_counters(benchmark::State& state, const FlowProblem& p, const team::Counts& c) {
  state.counters["rounds"] = static_cast<double>(c.rounds);
  state.counters["entries"] = static_cast<double>(c.entries);
  state.counters["bytes"] = static_cast<double>(
      team::bytes_moved(p.flow_count(), p.link_count(), p.flow_links.size(), p.weighted(), c,
                        p.link_count() * team::kOnChipBytesPerLink <= 227 * 1024));
  state.counters["upload_bytes"] =
      static_cast<double>(team::upload_bytes(p.flow_count(), p.link_count(), p.flow_links.size(), p.weighted()));
}

// The team program on `threads` host threads: its time here is not the GPU's, its counts are.
// Wall time: the team's threads are its own, started by each solve.
void BM_HostTeamSolve(benchmark::State& state) {
  HostTeamSolver solver(static_cast<uint32_t>(state.range(1)));
  const FlowProblem p = fat_tree_problem(static_cast<int>(state.range(0)));
  run(state, solver, p);
  team_counters(state, p, solver.last_counts());
}
BENCHMARK(BM_HostTeamSolve)
    ->ArgsProduct({{10'000, 100'000, 1'000'000}, {1, 2}})
    ->ArgNames({"", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// The whole flow model: `flows` transfers of 1..64 MB between random GPUs of different nodes,
// started at random instants within `span` (all at time 0 when it is zero) and run to completion,
// with incremental solves (arg 1 = 1) or a full solve of every active flow at each event (0).
// Counters: solves, flows_per_solve (the flows a solve covered, on average), time_per_solve (CPU
// time of the run / solves, including building each problem and retiring flows).
struct Sink final : sim::EventHandler {
  void on_event(sim::Engine& /*engine*/, uint64_t /*payload*/) override { ++done; }
  uint64_t done = 0;
};

// Starts transfer i of the plan at its instant.
struct Starter final : sim::EventHandler {
  void on_event(sim::Engine& engine, uint64_t i) override {
    net->start(engine, plan[i].second, sink, i);
  }
  NetworkModel* net = nullptr;
  std::vector<std::pair<Time, Transfer>> plan;
  Sink sink;
};

void run_flow_model(benchmark::State& state, Time span) {
  const auto cluster = fat_tree_cluster();
  const auto flows = static_cast<int>(state.range(0));
  Starter starter;
  sim::Rng rng(2, sim::stream_id("flow-model-benchmark"));
  for (int f = 0; f < flows; ++f) {
    const auto [src, dst] = random_pair_across_nodes(*cluster, rng);
    const auto bytes = Bytes(static_cast<int64_t>(1 + rng.below(64'000'000)));
    const Transfer t{src, dst, bytes, rng.next()};
    const Time at = span > Time::zero() ? Time::ps(static_cast<int64_t>(rng.below(static_cast<uint64_t>(span.ps())))) : Time::zero();
    starter.plan.emplace_back(at, t);
  }
  FlowModelOptions options;
  options.incremental = state.range(1) != 0;
  NetworkCounters counters;
  for (auto _ : state) {
    FlowNetworkModel net(*cluster, options);
    sim::Engine engine;
    starter.net = &net;
    for (size_t i = 0; i < starter.plan.size(); ++i) engine.schedule_at(starter.plan[i].first, starter, i);
    engine.run();
    counters = net.counters();
  }
  state.counters["solves"] = static_cast<double>(counters.solves);
  state.counters["flows_per_solve"] =
      static_cast<double>(counters.flows) / static_cast<double>(std::max<uint64_t>(counters.solves, 1));
  state.counters["time_per_solve"] =
      benchmark::Counter(static_cast<double>(counters.solves) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_FlowModelBurst(benchmark::State& state) { run_flow_model(state, Time::zero()); }
BENCHMARK(BM_FlowModelBurst)
    ->ArgsProduct({{1'000, 4'000}, {0, 1}})
    ->ArgNames({"", "incremental"})
    ->Unit(benchmark::kMillisecond);

// Arrivals spread over 100 ms: few transfers are in flight at once among 1024 GPUs, so a start
// or a drain touches a small component.
void BM_FlowModelStaggered(benchmark::State& state) { run_flow_model(state, Time::ms(100)); }
BENCHMARK(BM_FlowModelStaggered)
    ->ArgsProduct({{4'000, 16'000}, {0, 1}})
    ->ArgNames({"", "incremental"})
    ->Unit(benchmark::kMillisecond);

#ifdef DTSIM_HAVE_CUDA_SOLVER
void cuda_solve(benchmark::State& state, int spray) {
  auto solver = gpu_accel::make_cuda_max_min_solver();
  if (!solver) {
    state.SkipWithError("no CUDA device present");
    return;
  }
  const FlowProblem p = fat_tree_problem(static_cast<int>(state.range(0)), spray);
  run(state, *solver, p);
  HostTeamSolver twin(1);  // the GPU solver counts nothing; its twin's counts are the same
  std::vector<double> rates(p.flow_count());
  twin.solve(p, rates);
  team_counters(state, p, twin.last_counts());
}
void BM_CudaSolve(benchmark::State& state) { cuda_solve(state, 1); }
void BM_CudaSolveSprayed(benchmark::State& state) { cuda_solve(state, 8); }
// GPU work is asynchronous and the solve synchronises before returning: wall time is the figure.
BENCHMARK(BM_CudaSolve)
    ->Arg(1'000)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CudaSolveSprayed)
    ->Arg(1'000)
    ->Arg(10'000)
    ->Arg(100'000)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
#endif

}  // namespace
}  // namespace dtsim::network::flow
