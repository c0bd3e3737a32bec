// Cost of one FlowCollectiveModel price (a training workload on `network.model: flow` pays it
// once per distinct collective): lowering, the sibling groups, routing and one max-min solve.
// Each iteration asks for a size not seen before, so the cache never answers.
#include <benchmark/benchmark.h>

#include "collectives/flow_collective_model.h"
#include "topology/catalog.h"

namespace dtsim::collectives {
namespace {

// A data-parallel group of one GPU per node over `nodes` H100 nodes (a 3-tier fat-tree), with
// its 7 sibling groups: 8 x nodes ranks' ring edges over every channel.
void dp_all_reduce(benchmark::State& state) {
  auto spec = *topology::find_node_preset("hgx-h100");
  spec.nodes = static_cast<int>(state.range(0));
  spec.fabric.kind = topology::FabricKind::fat_tree;
  spec.fabric.tiers = 3;
  const FlowCollectiveModel model(spec, {}, {});
  Communicator dp;
  for (int n = 0; n < spec.nodes; ++n) dp.ranks.push_back(n * spec.gpus_per_node);
  int64_t bytes = int64_t{1} << 28;
  for (auto _ : state) {
    benchmark::DoNotOptimize(model.estimate(CollectiveKind::all_reduce, Bytes(bytes), dp));
    bytes += 4096;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["ranks"] = static_cast<double>(dp.size());
}
BENCHMARK(dp_all_reduce)->Arg(16)->Arg(128)->Arg(512)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dtsim::collectives
