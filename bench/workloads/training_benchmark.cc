// Whole-iteration training evaluations: generate the op graphs and run them with the analytical
// collective model. Results and the exact commands are in bench/workloads.md.
#include <benchmark/benchmark.h>

#include "collectives/analytical_model.h"
#include "topology/catalog.h"
#include "workloads/training.h"

namespace dtsim::workloads {
namespace {

topology::ClusterSpec h100_nodes(int nodes) {
  topology::ClusterSpec c = *topology::find_node_preset("hgx-h100");
  c.nodes = nodes;
  return c;
}

TrainingSpec llama(const char* preset, int tp, int pp, int dp, int global) {
  TrainingSpec t;
  t.model.preset = preset;
  t.parallel.tp = tp;
  t.parallel.pp = pp;
  t.parallel.dp = dp;
  t.parallel.zero = 1;
  t.batch.global = global;
  t.batch.micro = 1;
  return t;
}

void run(benchmark::State& state, const TrainingSpec& spec, int nodes, int layers_per_block) {
  const topology::ClusterSpec cluster = h100_nodes(nodes);
  const collectives::ModelParameters params;
  const collectives::AnalyticalCollectiveModel comm(cluster, collectives::CollectiveOptions{}, params);
  GeneratorOptions opt;
  opt.layers_per_block = layers_per_block;
  TrainingResult r;
  for (auto _ : state) {
    r = run_training(spec, cluster, comm, opt);
    benchmark::DoNotOptimize(r.iteration_time_s);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["mfu"] = r.mfu;
  state.counters["ops"] = static_cast<double>(r.ops);
}

// Llama 3 405B as Meta trained it (The Llama 3 Herd of Models, table 4): 16,384 H100s,
// TP 8 x PP 16 x DP 128, 16M-token batches of 8,192-token sequences, interleaved stages (vp 4).
void BM_Llama3_405B_16384Gpus(benchmark::State& state) {
  TrainingSpec t = llama("llama3-405b", 8, 16, 128, 2048);
  t.parallel.vp = 4;
  run(state, t, 2048, static_cast<int>(state.range(0)));
}
BENCHMARK(BM_Llama3_405B_16384Gpus)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

// A 1,024-GPU Llama 3 70B sweep point: TP 8 x PP 4 x DP 32, 1,024 sequences.
void BM_Llama3_70B_1024Gpus(benchmark::State& state) {
  run(state, llama("llama3-70b", 8, 4, 32, 1024), 128, static_cast<int>(state.range(0)));
}
BENCHMARK(BM_Llama3_70B_1024Gpus)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

// A 1,024-GPU Llama 3 8B point with FSDP-like sharding (TP 1, DP 1,024): the cheapest case.
void BM_Llama3_8B_1024Gpus_Fsdp(benchmark::State& state) {
  TrainingSpec t = llama("llama3-8b", 1, 1, 1024, 1024);
  t.parallel.zero = 3;
  run(state, t, 128, static_cast<int>(state.range(0)));
}
BENCHMARK(BM_Llama3_8B_1024Gpus_Fsdp)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

// DeepSeek-V3 as its report describes the production run: 2,048 H800-class GPUs (H100 here),
// PP 16 x EP 64 x DP 128 with ZeRO-1, 15,360 sequences of 4,096 tokens, MLA, one MTP module,
// deduplicated dispatch and the expert exchanges overlapped.
void BM_DeepSeekV3_2048Gpus(benchmark::State& state) {
  TrainingSpec t = llama("deepseek-v3", 1, 16, 128, 15360);
  t.parallel.ep = 64;
  t.moe_dispatch = MoeDispatch::deduplicated;
  t.overlap_ep_comm = true;
  run(state, t, 256, static_cast<int>(state.range(0)));
}
BENCHMARK(BM_DeepSeekV3_2048Gpus)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace
}  // namespace dtsim::workloads
