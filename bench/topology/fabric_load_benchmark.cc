// What pricing a torus's or a dragonfly's router links costs the analytical model: the cluster
// graph built once and pattern_rates for the whole cluster (ring, tree, all-to-all), which the
// first estimate on a given node count pays and every later one reads from a cache. HGX H100
// nodes with 8 x 400 Gb/s NICs; a 2D torus of radix 16 routers and a dragonfly of radix 64:
//   build/release/bench/topology/fabric_load_benchmark
#include <benchmark/benchmark.h>

#include "topology/catalog.h"
#include "topology/cluster.h"
#include "topology/fabric_load.h"

namespace dtsim::topology {
namespace {

ClusterSpec spec_for(FabricKind kind, int nodes) {
  ClusterSpec s = *find_node_preset("hgx-h100");
  s.nodes = nodes;
  s.fabric.kind = kind;
  s.fabric.radix = kind == FabricKind::torus ? 16 : 64;
  return s;
}

void BM_BuildAndPatternRates(benchmark::State& state) {
  const auto kind = static_cast<FabricKind>(state.range(0));
  const ClusterSpec s = spec_for(kind, static_cast<int>(state.range(1)));
  PatternRates r;
  for (auto _ : state) {
    auto c = build_cluster(s);
    r = pattern_rates(*c, s.nodes);
    benchmark::DoNotOptimize(r);
  }
  state.counters["ring_GBps"] = r.ring;
  state.counters["all_to_all_GBps"] = r.uniform;
}

void BM_PatternRates(benchmark::State& state) {
  const auto kind = static_cast<FabricKind>(state.range(0));
  const ClusterSpec s = spec_for(kind, static_cast<int>(state.range(1)));
  auto c = build_cluster(s);
  for (auto _ : state) benchmark::DoNotOptimize(pattern_rates(*c, s.nodes));
}

void sizes(benchmark::internal::Benchmark* b) {
  for (FabricKind k : {FabricKind::torus, FabricKind::dragonfly}) {
    for (int nodes : {128, 512, 2048}) b->Args({static_cast<int64_t>(k), nodes});
  }
  b->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
}

BENCHMARK(BM_BuildAndPatternRates)->Apply(sizes);
BENCHMARK(BM_PatternRates)->Apply(sizes);

}  // namespace
}  // namespace dtsim::topology
