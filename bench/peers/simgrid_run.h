// run_simgrid: the PeerCase on SimGrid's S4U API: a host per GPU, a SimGrid link per directed
// dtsim link that a flow crosses (same bandwidth times `efficiency`), and for each flow's host pair
// the link sequence dtsim routes that flow over, in a full zone of explicit routes. Every flow is a
// Comm::sendto_async started at t = 0 under the CM02 max-min model without cross-traffic, whose
// latency and bandwidth factors are 1.
//   PeerRun r = run_simgrid(*cluster, flows, SimgridLatency::after_drain);
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "bench/peers/peer_run.h"
#include "topology/cluster.h"

namespace dtsim::bench::peers {

// Where a flow's route latency goes. CM02 shares a link among its flows in inverse proportion to
// each flow's route latency (TCP's RTT unfairness), where dtsim's flow model shares it equally and
// adds the route latency after the last byte drains.
enum class SimgridLatency {
  // SimGrid's links carry no latency, so its max-min is unweighted, and each flow's route latency
  // is added to the completion SimGrid reports: dtsim's flow model exactly.
  after_drain,
  // SimGrid's links carry dtsim's latencies, and CM02 weights the sharing by them.
  links,
};
std::optional<SimgridLatency> parse_simgrid_latency(std::string_view s);

// Runs SimGrid in this process; SimGrid's engine is a singleton, so at most once per process. A
// full zone holds one route per host pair, so no two flows may join the same pair.
// wall_s counts reading the routes from `cluster`, building the platform and running, not the
// cluster graph's construction. Throws std::runtime_error when SimGrid's configuration is not
// the one the comparison needs (CM02, no cross-traffic, factors of 1).
PeerRun run_simgrid(const topology::Cluster& cluster, std::span<const network::Transfer> flows,
                    const network::LinkEfficiency& efficiency, SimgridLatency latency);

}  // namespace dtsim::bench::peers
