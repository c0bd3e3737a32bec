// Bisection bandwidth: the most data per second one half of the cluster can push to the other
// half at once, as a max-flow between the halves (Boost.Graph push-relabel). Nodes split by
// index, first half against second (a single node splits its GPUs instead); for the fabrics
// dtsim builds this cut is the narrowest one. Each node is contracted to one vertex, since a
// node is never transit, which keeps the flow problem small at 100k GPUs.
//   Bandwidth b = bisection_bandwidth(cluster);   // one direction, e.g. 25.6 TB/s
#pragma once

#include "sim/units.h"
#include "topology/cluster.h"

namespace dtsim::topology {

Bandwidth bisection_bandwidth(const Cluster& c);

}  // namespace dtsim::topology
