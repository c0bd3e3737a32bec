// AlphaBetaCollectiveModel: a deliberately simple collective cost model (ring algorithms,
// latency per step plus bytes over the bottleneck bandwidth per GPU) read straight from a
// ClusterSpec. It stands in for collectives::AnalyticalCollectiveModel where that is not wanted
// (unit tests of the executor, quick estimates); it knows no protocols, trees or NVLS.
//   AlphaBetaCollectiveModel model(cluster);
//   Time t = model.estimate(CollectiveKind::all_reduce, Bytes::mib(64), comm).time;
#pragma once

#include "collectives/cost_model.h"
#include "topology/cluster_spec.h"

namespace dtsim::workloads {

class AlphaBetaCollectiveModel final : public collectives::CollectiveCostModel {
 public:
  // Fractions of the nominal link rates that NCCL's Simple protocol sustains on large messages.
  struct Efficiency {
    double scale_up = 0.80;
    double scale_out = 0.90;
  };
  explicit AlphaBetaCollectiveModel(const topology::ClusterSpec& cluster);
  AlphaBetaCollectiveModel(const topology::ClusterSpec& cluster, Efficiency eff);

  collectives::CollectiveEstimate estimate(collectives::CollectiveKind kind, Bytes bytes,
                                           const collectives::Communicator& comm) const override;

 private:
  topology::ClusterSpec cluster_;
  Efficiency eff_;
};

}  // namespace dtsim::workloads
