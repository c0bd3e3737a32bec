// A port's queue over time, as the packet model samples it (PacketModelOptions::sample_interval):
// its egress queue's bytes at every multiple of the interval, kept only where the value changes
// (a counter holds until its next sample), and the intervals it spent paused by PFC. A port whose
// sampled queue never left zero and that was never paused has no timeline.
//   for (const network::PortTimeline& t : net.port_timelines(end)) trace.counter(t.port, t.depth);
#pragma once

#include <vector>

#include "sim/units.h"
#include "topology/cluster.h"

namespace dtsim::network {

// The bytes waiting at a port at instant `at`: after every event at `at` and before any later.
struct QueueSample {
  Time at;
  Bytes bytes;
  bool operator==(const QueueSample&) const = default;
};

// From a PAUSE's arrival at the port to its RESUME's (or the end of the run).
struct PauseSpan {
  Time from;
  Time to;
  bool operator==(const PauseSpan&) const = default;
};

struct PortTimeline {
  topology::LinkId port = 0;
  std::vector<QueueSample> depth;  // first sample at the first tick with bytes queued
  std::vector<PauseSpan> paused;
  bool operator==(const PortTimeline&) const = default;
};

}  // namespace dtsim::network
