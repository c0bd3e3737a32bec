// Estimates per second of AnalyticalCollectiveModel::estimate, the call sweeps and training
// workloads make for every collective: the tuner prices every supported (algorithm, protocol)
// pair, so this is the whole cost of one prediction.
#include <benchmark/benchmark.h>

#include <numeric>

#include "collectives/analytical_model.h"
#include "topology/catalog.h"

namespace dtsim::collectives {
namespace {

void estimate(benchmark::State& state, const char* preset, int nodes, CollectiveKind kind) {
  auto spec = *topology::find_node_preset(preset);
  spec.nodes = nodes;
  const AnalyticalCollectiveModel model(spec, {}, {});
  const Communicator world = model.world();
  int64_t bytes = 8;
  for (auto _ : state) {
    benchmark::DoNotOptimize(model.estimate(kind, Bytes(bytes), world));
    bytes = bytes < (int64_t{1} << 33) ? bytes * 2
                                       : 8;  // sweep sizes so every branch of the tuner runs
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_AllReduceH100x16(benchmark::State& s) {
  estimate(s, "hgx-h100", 2, CollectiveKind::all_reduce);
}
void BM_AllReduceH100x1024(benchmark::State& s) {
  estimate(s, "hgx-h100", 128, CollectiveKind::all_reduce);
}
void BM_AllGatherH100x8(benchmark::State& s) {
  estimate(s, "hgx-h100", 1, CollectiveKind::all_gather);
}
void BM_AllToAllA100x64(benchmark::State& s) {
  estimate(s, "hgx-a100", 8, CollectiveKind::all_to_all);
}
void BM_AllReduceGb200x72(benchmark::State& s) {
  estimate(s, "gb200-nvl72", 1, CollectiveKind::all_reduce);
}

BENCHMARK(BM_AllReduceH100x16);
BENCHMARK(BM_AllReduceH100x1024);
BENCHMARK(BM_AllGatherH100x8);
BENCHMARK(BM_AllToAllA100x64);
BENCHMARK(BM_AllReduceGb200x72);

}  // namespace
}  // namespace dtsim::collectives
