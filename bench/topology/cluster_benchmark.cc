// Building an H100 cluster on a 3-tier fat-tree and routing among a sample of its GPUs, at
// 1k, 16k, 64k and 100k GPUs. Radix 64 holds at most 65,536 NIC ports in three tiers, so the
// 100k point uses radix 74, the smallest that holds 100,000 ports (the InputError for radix 64
// says so). Run one size per process so that peak_rss_MB belongs to that size:
//   build/release/bench/topology/cluster_benchmark --benchmark_filter='/1024/'
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdio>
#include <vector>

#include "topology/catalog.h"
#include "topology/cluster.h"
#include "topology/describe.h"

namespace dtsim::topology {
namespace {

constexpr int kSample = 64;  // GPUs whose every ordered pair is routed: 4032 routes

ClusterSpec spec_for(int gpus, int radix) {
  ClusterSpec s = *find_node_preset("hgx-h100");
  s.nodes = gpus / s.gpus_per_node;
  s.fabric.kind = FabricKind::fat_tree;
  s.fabric.tiers = 3;
  s.fabric.radix = radix;
  return s;
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

double rss_mb() {
  long pages = 0;
  long resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * 4096.0 / (1024.0 * 1024.0);
}

// Sample GPUs spread over the whole cluster, with varied local indices.
std::vector<int> sample(const Cluster& c) {
  std::vector<int> out;
  const int stride = c.gpu_count() / kSample;
  for (int i = 0; i < kSample; ++i) out.push_back(i * stride + (i % c.spec().gpus_per_node));
  return out;
}

void BM_Build(benchmark::State& state) {
  ClusterSpec s = spec_for(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  size_t devices = 0;
  size_t links = 0;
  for (auto _ : state) {
    auto c = build_cluster(s);
    devices = c->devices().size();
    links = c->links().size();
    benchmark::DoNotOptimize(c);
  }
  state.counters["devices"] = static_cast<double>(devices);
  state.counters["links"] = static_cast<double>(links);
  state.counters["peak_rss_MB"] = peak_rss_mb();
}

// Cold routes: a fresh cluster (empty caches) each iteration; only the routing is timed.
void BM_RouteSampleCold(benchmark::State& state) {
  ClusterSpec s = spec_for(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  int64_t routes = 0;
  double hops = 0;
  double rss = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto c = build_cluster(s);
    auto gpus = sample(*c);
    state.ResumeTiming();
    for (int a : gpus) {
      for (int b : gpus) {
        if (a == b) continue;
        auto r = c->route(a, b, static_cast<uint64_t>(routes));
        hops += static_cast<double>(r.size());
        ++routes;
      }
    }
    state.PauseTiming();
    rss = rss_mb();
    c.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(routes);
  state.counters["hops_per_route"] = hops / static_cast<double>(routes);
  state.counters["rss_after_routes_MB"] = rss;
  state.counters["peak_rss_MB"] = peak_rss_mb();
}

// Warm routes: the same pairs and hashes again, answered from the route cache.
void BM_RouteSampleWarm(benchmark::State& state) {
  auto c =
      build_cluster(spec_for(static_cast<int>(state.range(0)), static_cast<int>(state.range(1))));
  auto gpus = sample(*c);
  for (int a : gpus) {
    for (int b : gpus) {
      for (uint64_t h = 0; h < 16; ++h) c->route(a, b, h);
    }
  }
  int64_t routes = 0;
  for (auto _ : state) {
    uint64_t h = 0;
    for (int a : gpus) {
      for (int b : gpus) {
        if (a == b) continue;
        benchmark::DoNotOptimize(c->route(a, b, h++ % 16));
        ++routes;
      }
    }
  }
  state.SetItemsProcessed(routes);
}

void BM_Summarize(benchmark::State& state) {
  auto c =
      build_cluster(spec_for(static_cast<int>(state.range(0)), static_cast<int>(state.range(1))));
  double bisection = 0;
  for (auto _ : state) {
    ClusterSummary s = summarize(*c);
    bisection = s.bisection_bandwidth.gbytes_per_s();
  }
  state.counters["bisection_GBps"] = bisection;
  state.counters["peak_rss_MB"] = peak_rss_mb();
}

void sizes(benchmark::internal::Benchmark* b) {
  b->Args({1024, 64})->Args({16384, 64})->Args({65536, 64})->Args({100000, 74});
  b->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)->ReportAggregatesOnly(false);
}

BENCHMARK(BM_Build)->Apply(sizes);
BENCHMARK(BM_RouteSampleCold)->Apply(sizes);
BENCHMARK(BM_RouteSampleWarm)->Apply(sizes);
BENCHMARK(BM_Summarize)->Apply(sizes);

}  // namespace
}  // namespace dtsim::topology
