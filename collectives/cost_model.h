// CollectiveCostModel: how long one collective takes on a communicator, and which algorithm,
// protocol and channel count were chosen for it. The analytical backend answers in closed form
// (microseconds of CPU per call); workloads and sweeps call it for every collective op. A workload
// hands it all its distinct collectives first (prepare), which a backend that prices each at a
// cost (flows) may price side by side.
//   auto est = model.estimate(CollectiveKind::all_reduce, Bytes::mib(64), comm);
//   fmt::print("{} {} {}\n", to_string(est.time), name(est.algorithm), name(est.protocol));
#pragma once

#include <span>
#include <vector>

#include "collectives/collective.h"
#include "sim/units.h"

namespace dtsim::collectives {

// A group of GPUs that run collectives together, by global GPU index (node-major numbering).
struct Communicator {
  std::vector<int> ranks;
  int size() const { return static_cast<int>(ranks.size()); }
};

struct CollectiveEstimate {
  Time time;
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  int channels = 1;
};

// One collective as estimate() takes it; `comm` is borrowed for the call it is passed to.
struct CollectiveQuery {
  CollectiveKind kind = CollectiveKind::all_reduce;
  Bytes bytes;
  const Communicator* comm = nullptr;
};

class CollectiveCostModel {
 public:
  virtual ~CollectiveCostModel() = default;
  // `bytes` is the nccl-tests "size": the per-rank buffer (the output size for all_gather, the
  // input size for reduce_scatter), as nccl-tests counts it.
  virtual CollectiveEstimate estimate(CollectiveKind kind, Bytes bytes,
                                      const Communicator& comm) const = 0;
  // The collectives whose estimate() is about to be asked for, so that a backend that caches its
  // prices can compute them ahead, several at a time. estimate() answers the same either way;
  // this default does nothing.
  virtual void prepare(std::span<const CollectiveQuery> /*collectives*/) const {}
};

}  // namespace dtsim::collectives
