#include <memory>

#include "bench/peers/peer_run.h"
#include "network/flow/flow_model.h"
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

}  // namespace

PeerRun run_dtsim(const PeerCaseSpec& spec, std::span<const network::Transfer> flows) {
  const RunClock timer;
  PeerRun run;
  run.completion_s.assign(flows.size(), -1);
  const std::unique_ptr<topology::Cluster> cluster =
      topology::build_cluster(peer_cluster_spec(spec));
  network::FlowModelOptions options;
  options.link_efficiency = spec.efficiency;
  network::FlowNetworkModel net(*cluster, options);
  sim::Engine engine;
  CompletionRecorder recorder(run.completion_s);
  for (size_t i = 0; i < flows.size(); ++i) net.start(engine, flows[i], recorder, i);
  engine.run();
  run.solves = net.solves();
  run.wall_s = timer.wall_s();
  run.cpu_s = timer.cpu_s();
  return run;
}

}  // namespace dtsim::bench::peers
