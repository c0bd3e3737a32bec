#include "gpu_accel/cuda_max_min_solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "network/flow/flow_model.h"
#include "sim/rng.h"
#include "tests/network/flow_random_problem.h"
#include "tests/network/line_cluster.h"

namespace dtsim::gpu_accel {
namespace {

using network::flow::CpuMaxMinSolver;
using network::flow::FlowProblem;

#define SKIP_WITHOUT_GPU() \
  if (!cuda_device_present()) GTEST_SKIP() << "no CUDA device present"

void expect_same_rates(const FlowProblem& p, network::flow::FlowSolver& gpu, const char* what) {
  std::vector<double> expected(p.flow_count()), got(p.flow_count());
  CpuMaxMinSolver().solve(p, expected);
  gpu.solve(p, got);
  for (size_t f = 0; f < p.flow_count(); ++f) {
    if (std::isinf(expected[f])) {
      EXPECT_EQ(got[f], expected[f]) << what << " flow " << f;
      continue;
    }
    EXPECT_NEAR(got[f], expected[f], 1e-9 * std::abs(expected[f])) << what << " flow " << f;
  }
}

using testing_support::flow_problem;

TEST(CudaMaxMinSolver, FactoryGivesASolverExactlyWhenAGpuIsPresent) {
  EXPECT_EQ(make_cuda_max_min_solver() != nullptr, cuda_device_present());
}

TEST(CudaMaxMinSolver, MatchesTheCpuOracleOnRandomInstances) {
  SKIP_WITHOUT_GPU();
  auto gpu = make_cuda_max_min_solver();
  struct Size {
    uint32_t links, flows, max_path;
  };
  for (const Size s :
       {Size{4, 10, 2}, Size{64, 500, 6}, Size{1000, 20'000, 8}, Size{4000, 100'000, 6}}) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      expect_same_rates(testing_support::random_flow_problem(seed, s.links, s.flows, s.max_path),
                        *gpu, "random instance");
    }
  }
}

using testing_support::sprayed_flow_problem;

TEST(CudaMaxMinSolver, MatchesTheCpuOracleOnWeightedInstances) {
  SKIP_WITHOUT_GPU();
  auto gpu = make_cuda_max_min_solver();
  for (const uint32_t flows : {10u, 500u, 20'000u, 100'000u}) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const FlowProblem p = sprayed_flow_problem(
          testing_support::random_flow_problem(seed, flows / 10 + 8, flows, 6), seed);
      ASSERT_TRUE(p.weighted());
      expect_same_rates(p, *gpu, "weighted instance");
    }
  }
}

TEST(CudaMaxMinSolver, WeightedSolvesAreTheSameOnEveryRun) {
  // Frozen weight is added up in integer units by atomics: the order they land in changes nothing.
  SKIP_WITHOUT_GPU();
  auto gpu = make_cuda_max_min_solver();
  const FlowProblem p = sprayed_flow_problem(testing_support::random_flow_problem(7, 2000, 50'000, 6), 7);
  std::vector<double> first(p.flow_count()), again(p.flow_count());
  gpu->solve(p, first);
  for (int run = 0; run < 5; ++run) {
    gpu->solve(p, again);
    ASSERT_EQ(first, again) << "run " << run;
  }
}

TEST(CudaMaxMinSolver, RatesAreTheCpuSolversBitForBit) {
  SKIP_WITHOUT_GPU();
  auto gpu = make_cuda_max_min_solver();
  const FlowProblem plain = testing_support::random_flow_problem(3, 2000, 50'000, 6);
  for (const FlowProblem& p : {plain, sprayed_flow_problem(plain, 3)}) {
    std::vector<double> cpu(p.flow_count()), got(p.flow_count());
    CpuMaxMinSolver().solve(p, cpu);
    gpu->solve(p, got);
    EXPECT_EQ(cpu, got) << (p.weighted() ? "weighted" : "unweighted");
  }
}

TEST(CudaMaxMinSolver, MatchesTheCpuOracleOnEdgeCases) {
  SKIP_WITHOUT_GPU();
  auto gpu = make_cuda_max_min_solver();
  expect_same_rates(flow_problem({1}, {{}, {0}}), *gpu, "flow without links");
  expect_same_rates(flow_problem({0, 6}, {{0, 1}, {1}}), *gpu, "zero-capacity link");
  expect_same_rates(flow_problem({1, 1, 1}, {{0, 1, 2}, {0}, {1}, {2}}), *gpu, "parking lot");
  expect_same_rates(flow_problem({5, 7}, {}), *gpu, "no flows");
  FlowProblem halves;
  halves.capacity = {8, 6};
  for (const std::vector<uint32_t>& links : {std::vector<uint32_t>{0}, {0, 1}, {1}}) {
    halves.add_flow(links, 0.5);
  }
  halves.add_flow(std::vector<uint32_t>{0}, 2.0);
  halves.build_link_index();
  expect_same_rates(halves, *gpu, "weights 1/2 and 2");
}

struct Recorder final : sim::EventHandler {
  std::vector<std::pair<uint64_t, Time>> done;
  void on_event(sim::Engine& e, uint64_t payload) override { done.emplace_back(payload, e.now()); }
};

TEST(CudaMaxMinSolver, FlowModelWithTheGpuSolverFinishesTransfersWhenTheCpuOneDoes) {
  SKIP_WITHOUT_GPU();
  const testing_support::CrossbarCluster c(32, Bandwidth::gbytes_per_s(50), Time::us(1));
  auto run = [&](network::FlowModelOptions options) {
    network::FlowNetworkModel net(c, std::move(options));
    sim::Engine engine;
    Recorder r;
    sim::Rng rng(9, sim::stream_id("gpu-flow-model"));
    for (uint64_t i = 0; i < 2000; ++i) {
      const int src = static_cast<int>(rng.below(32));
      const int dst = static_cast<int>(rng.below(32));
      net.start(engine, {src, dst, Bytes(static_cast<int64_t>(1 + rng.below(1'000'000)))}, r, i);
    }
    engine.run();
    return r.done;
  };
  const auto cpu = run({});
  const auto gpu = run({.accelerator = make_cuda_max_min_solver(),
                        .accelerator_min_flows = 1,
                        .host_staged_rate = 0,
                        .link_efficiency = {}});
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_EQ(cpu[i].first, gpu[i].first);
    EXPECT_NEAR(cpu[i].second.seconds(), gpu[i].second.seconds(), 1e-12) << "completion " << i;
  }
}

}  // namespace
}  // namespace dtsim::gpu_accel
