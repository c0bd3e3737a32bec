// PeerRun: what one simulator made of a PeerCase: each flow's completion time (in the order of
// peer_flows) and the wall time of the whole run. run_dtsim() runs dtsim's flow model and
// run_dtsim_packets() its packet model; run_simgrid() (simgrid_run.h) runs SimGrid and run_ns3()
// (ns3_run.h) ns-3 on the same fabric.
//   PeerRun r = run_dtsim(spec, peer_flows(spec));
//   Agreement a = compare(r, run_simgrid(...));
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <functional>
#include <span>
#include <vector>

#include "bench/peers/peer_case.h"
#include "network/flow/flow_model.h"
#include "network/network_model.h"

namespace dtsim::bench::peers {

struct PeerRun {
  std::vector<double> completion_s;  // per flow, seconds from the common start
  double wall_s = 0;                 // building the fabric, starting the flows, running them
  double cpu_s = 0;                  // the process's CPU time over the same span
  uint64_t solves = 0;               // max-min solves (dtsim's; 0 for SimGrid, which does not say)
  uint64_t flows_solved = 0;         // the flows those solves covered, summed (dtsim's flows)
  uint64_t events = 0;               // engine events executed (dtsim's, ns-3's)
  uint64_t fingerprint = 0;          // dtsim's engine fingerprint (sim::Engine); 0 for the peers
};

// The last completion time, in seconds; 0 for no flows.
double makespan(const PeerRun& r);

// How far one run's completion times are from a reference run's, relative to the reference's.
struct Agreement {
  double max_rel = 0;  // over flows
  double mean_rel = 0;
  double makespan_rel = 0;
};
// `run` and `reference` ran the same flows, in the same order.
Agreement compare(const PeerRun& run, const PeerRun& reference);

// A simulator's run repeated: the run of median CPU time (of two middle ones, the faster), and
// the least and most CPU time over the runs. One short run on a shared machine is as noisy as
// the machine; the median of several is the figure to compare with a long run of a peer.
struct RepeatedRun {
  PeerRun median;
  double min_cpu_s = 0;
  double max_cpu_s = 0;
  int runs = 0;
};
// Runs `run` `runs` times (at least once); throws std::runtime_error where a run's fingerprint or
// completion times differ from the first run's, since the same case must give the same answer.
RepeatedRun repeat_run(int runs, const std::function<PeerRun()>& run);

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

// How dtsim's flow model batches events (FlowModelOptions): the defaults unless given.
struct FlowBatching {
  Time completion_window = network::kDefaultCompletionWindow;
  double completion_precision = network::kDefaultCompletionPrecision;
};

// Builds the case's cluster graph and a FlowNetworkModel with the case's link efficiency and
// `batching`, starts every flow at t = 0 and runs the engine to the end.
PeerRun run_dtsim(const PeerCaseSpec& spec, std::span<const network::Transfer> flows,
                  const FlowBatching& batching = {});

// The same on a PacketNetworkModel with the case's link efficiency, `mtu` and its default buffer
// per port (32 MiB, lossless).
PeerRun run_dtsim_packets(const PeerCaseSpec& spec, std::span<const network::Transfer> flows,
                          Bytes mtu);

}  // namespace dtsim::bench::peers
