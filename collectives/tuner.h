// Tuner: picks the algorithm, protocol and channel count for one collective, as NCCL's tuner
// does: among what the hardware supports, the lowest predicted time. Explicit choices from the
// scenario (`collectives.algorithm`, `protocol`, `channels`) are honoured, or refused with an
// InputError saying why the hardware cannot run them.
//   Tuner tuner(hw, options);
//   TunerChoice c = tuner.choose(CollectiveKind::all_reduce, 64e6, hw.shape_of(comm));
#pragma once

#include <string>

#include "collectives/algorithm_cost.h"
#include "collectives/cost_model.h"
#include "collectives/hardware_view.h"

namespace dtsim::collectives {

struct TunerChoice {
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  int channels = 1;
  double time_us = 0;
};

// Why `algo` cannot run `kind` on this hardware and communicator; empty when it can.
std::string algorithm_unsupported(const HardwareView& hw, CollectiveKind kind, Algorithm algo,
                                  const CommShape& shape);
// Why `proto` cannot be used with `algo` here; empty when it can.
std::string protocol_unsupported(const HardwareView& hw, Algorithm algo, Protocol proto,
                                 const CommShape& shape);
// The closed-form cost of one (algorithm, protocol) choice; the algorithm must be supported.
AlgoCost algorithm_cost(const HardwareView& hw, Algorithm algo, const CostQuery& q);

class Tuner {
 public:
  Tuner(const HardwareView& hw, const CollectiveOptions& options);
  TunerChoice choose(CollectiveKind kind, double bytes, const CommShape& shape) const;

 private:
  const HardwareView& hw_;
  CollectiveOptions options_;
};

}  // namespace dtsim::collectives
