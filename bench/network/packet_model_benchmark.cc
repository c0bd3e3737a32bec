// The packet model's speed: engine events per CPU second while a ring all_reduce schedule runs
// packet by packet on 2 HGX H100 nodes (16 GPUs, NVSwitch inside, 8 x 400 Gb/s NICs each, 2-tier
// fat-tree), and while N senders incast into one GPU through small buffers (backpressure busy).
//   build/packet-dev/bench/network/packet_model_benchmark --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "collectives/schedule.h"
#include "collectives/schedule_executor.h"
#include "network/packet/packet_model.h"
#include "topology/catalog.h"
#include "topology/cluster.h"

namespace dtsim::network {
namespace {

std::unique_ptr<topology::Cluster> hgx_h100(int nodes) {
  topology::ClusterSpec s = *topology::find_node_preset("hgx-h100");
  s.nodes = nodes;
  s.fabric.kind = topology::FabricKind::fat_tree;
  s.fabric.tiers = 2;
  s.fabric.radix = 64;
  return topology::build_cluster(s);
}

// Arg: all_reduce size in MiB.
void BM_PacketRingAllReduce(benchmark::State& state) {
  const auto cluster = hgx_h100(2);
  collectives::Communicator comm;
  for (int r = 0; r < 16; ++r) comm.ranks.push_back(r);
  const auto schedule =
      collectives::build_schedule(collectives::Algorithm::ring, collectives::CollectiveKind::all_reduce,
                                  Bytes::mib(state.range(0)), comm, /*channels=*/8, /*ranks_per_node=*/8);
  uint64_t events = 0;
  uint64_t packets = 0;
  double simulated_us = 0;
  for (auto _ : state) {
    PacketNetworkModel net(*cluster);
    sim::Engine engine;
    collectives::ScheduleExecutor exec(schedule, net);
    exec.start(engine);
    engine.run();
    events += engine.events_executed();
    packets += net.packets_sent();
    simulated_us = (exec.finish_time() - exec.start_time()).us();
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["packet_hops_per_s"] =
      benchmark::Counter(static_cast<double>(packets), benchmark::Counter::kIsRate);
  state.counters["simulated_us"] = simulated_us;
}
BENCHMARK(BM_PacketRingAllReduce)->Arg(16)->Arg(256)->Unit(benchmark::kMillisecond);

// Arg: senders, each sending 4 MiB to GPU 0 of another node, through 256 KiB buffers.
void BM_PacketIncast(benchmark::State& state) {
  const auto cluster = hgx_h100(static_cast<int>(state.range(0)) + 1);
  uint64_t events = 0;
  for (auto _ : state) {
    PacketNetworkModel net(*cluster, {.mtu = Bytes(4096),
                                      .buffer_per_port = Bytes::kib(256),
                                      .dcqcn = {},
                                      .link_efficiency = {}});
    sim::Engine engine;
    struct Sink final : sim::EventHandler {
      void on_event(sim::Engine&, uint64_t) override {}
    } sink;
    for (int i = 1; i <= state.range(0); ++i)
      net.start(engine, {.src_gpu = 8 * i, .dst_gpu = 0, .bytes = Bytes::mib(4), .flow_hash = uint64_t(i)}, sink, 0);
    engine.run();
    events += engine.events_executed();
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PacketIncast)->Arg(7)->Arg(63)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dtsim::network
