// PeerRun: what one simulator made of a PeerCase: each flow's completion time (in the order of
// peer_flows) and the wall time of the whole run. run_dtsim() runs dtsim's flow model;
// run_simgrid() (simgrid_run.h) runs SimGrid on the same links and routes.
//   PeerRun r = run_dtsim(spec, peer_flows(spec));
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <span>
#include <vector>

#include "bench/peers/peer_case.h"
#include "network/network_model.h"

namespace dtsim::bench::peers {

struct PeerRun {
  std::vector<double> completion_s;  // per flow, seconds from the common start
  double wall_s = 0;                 // building the fabric, starting the flows, running them
  double cpu_s = 0;                  // the process's CPU time over the same span
  uint64_t solves = 0;               // max-min solves (dtsim's; 0 for SimGrid, which does not say)
};

// Wall and CPU time since it was made, for PeerRun (the simulators run single-threaded, so CPU
// time is the figure that a loaded machine disturbs least).
class RunClock {
 public:
  RunClock();
  double wall_s() const;
  double cpu_s() const;

 private:
  std::chrono::steady_clock::time_point wall_;
  std::clock_t cpu_;
};

// Builds the case's cluster graph and a FlowNetworkModel with the case's link efficiency and the
// default completion window, starts every flow at t = 0 and runs the engine to the end.
PeerRun run_dtsim(const PeerCaseSpec& spec, std::span<const network::Transfer> flows);

}  // namespace dtsim::bench::peers
