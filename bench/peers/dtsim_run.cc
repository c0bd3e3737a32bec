#include <memory>

#include "bench/peers/peer_run.h"
#include "network/flow/flow_model.h"
#include "network/packet/packet_model.h"
#include "sim/engine.h"
#include "topology/cluster.h"

namespace dtsim::bench::peers {
namespace {

// Records each flow's completion time; the payload is the flow's index.
struct CompletionRecorder final : sim::EventHandler {
  explicit CompletionRecorder(std::vector<double>& out) : times(out) {}
  void on_event(sim::Engine& engine, uint64_t flow) override {
    times[flow] = engine.now().seconds();
  }
  std::vector<double>& times;
};

// Builds the case's cluster and a `Model` on it (from the cluster and `options`), starts every flow
// at t = 0 and runs the engine to the end.
template <typename Model, typename Options>
PeerRun run_on(const PeerCaseSpec& spec, std::span<const network::Transfer> flows,
               const Options& options) {
  const RunClock timer;
  PeerRun run;
  run.completion_s.assign(flows.size(), -1);
  const std::unique_ptr<topology::Cluster> cluster = peer_cluster(spec);
  Model net(*cluster, options);
  sim::Engine engine;
  CompletionRecorder recorder(run.completion_s);
  if constexpr (requires { net.reserve(flows.size()); }) net.reserve(flows.size());
  for (size_t i = 0; i < flows.size(); ++i) net.start(engine, flows[i], recorder, i);
  run.events = engine.run();
  run.fingerprint = engine.fingerprint();
  run.solves = net.counters().solves;
  run.flows_solved = net.counters().flows;
  run.wall_s = timer.wall_s();
  run.cpu_s = timer.cpu_s();
  return run;
}

}  // namespace

PeerRun run_dtsim(const PeerCaseSpec& spec, std::span<const network::Transfer> flows,
                  const FlowBatching& batching) {
  network::FlowModelOptions options;
  options.link_efficiency = spec.efficiency;
  options.completion_window = batching.completion_window;
  options.completion_precision = batching.completion_precision;
  return run_on<network::FlowNetworkModel>(spec, flows, options);
}

PeerRun run_dtsim_packets(const PeerCaseSpec& spec, std::span<const network::Transfer> flows,
                          Bytes mtu) {
  network::PacketModelOptions options;
  options.mtu = mtu;
  options.link_efficiency = spec.efficiency;
  return run_on<network::PacketNetworkModel>(spec, flows, options);
}

}  // namespace dtsim::bench::peers
