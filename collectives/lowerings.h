// The algorithms' lowerings to transfers, each defined beside its cost (ring.cc, tree.cc, ...);
// build_schedule (schedule.h) is the entry point, and NVLS-tree's network part builds on the tree.
#pragma once

#include "collectives/schedule.h"

namespace dtsim::collectives {

Schedule ring_schedule(CollectiveKind kind, Bytes bytes, const Communicator& comm, int channels,
                       int ranks_per_node, int nics_per_gpu);
Schedule tree_schedule(Bytes bytes, const Communicator& comm, int channels, int ranks_per_node,
                       int nics_per_gpu);
Schedule halving_doubling_schedule(Bytes bytes, const Communicator& comm, int channels);
// nccl-tests' hypercube: recursive doubling (an all_gather) with partners 1, 2, 4, ... apart.
Schedule hypercube_schedule(Bytes bytes, const Communicator& comm, int channels);
Schedule all_to_all_schedule(Bytes bytes, const Communicator& comm, int channels);
Schedule send_recv_schedule(Bytes bytes, const Communicator& comm, int channels);
// gather or scatter: every rank's part to (or from) the first rank of `comm`, the root; ranks
// in other nodes through PXN's relay on the receiver's rail.
Schedule gather_scatter_schedule(CollectiveKind kind, Bytes bytes, const Communicator& comm,
                                 int channels, int ranks_per_node);

}  // namespace dtsim::collectives
