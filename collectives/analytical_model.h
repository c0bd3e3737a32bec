// AnalyticalCollectiveModel: the closed-form collective cost model. It prices NCCL's algorithms
// (ring, tree, NVLS, NVLS-tree, CollNet, PAT, pairwise all-to-all, p2p) and two textbook ones
// (halving-doubling, hierarchical 2D) from the physical topology: per-step latencies by link
// class and protocol, the bottleneck bandwidth of each algorithm's traffic pattern, and the
// pipeline fill; the tuner picks what NCCL would. About a microsecond per estimate.
//   AnalyticalCollectiveModel model(scenario.cluster, scenario.collectives, ModelParameters{});
//   CollectiveEstimate e = model.estimate(CollectiveKind::all_reduce, Bytes::mib(64), comm);
#pragma once

#include "collectives/algorithm_cost.h"
#include "collectives/cost_model.h"
#include "collectives/hardware_view.h"
#include "collectives/model_parameters.h"
#include "collectives/tuner.h"
#include "topology/cluster_spec.h"

namespace dtsim::collectives {

class AnalyticalCollectiveModel : public CollectiveCostModel {
 public:
  // Throws InputError for options no collective could honour (e.g. channels out of range).
  AnalyticalCollectiveModel(const topology::ClusterSpec& spec, const CollectiveOptions& options,
                            const ModelParameters& params);
  AnalyticalCollectiveModel(const AnalyticalCollectiveModel&) = delete;
  AnalyticalCollectiveModel& operator=(const AnalyticalCollectiveModel&) = delete;

  // Throws InputError when an explicit algorithm or protocol cannot run this collective here.
  CollectiveEstimate estimate(CollectiveKind kind, Bytes bytes,
                              const Communicator& comm) const override;

  // The cost of one given (algorithm, protocol), bypassing the tuner: for tests and tables.
  // Throws InputError when the pair cannot run here.
  AlgoCost price(CollectiveKind kind, Bytes bytes, const Communicator& comm, Algorithm algo,
                 Protocol proto) const;

  // A communicator of every GPU of the cluster.
  Communicator world() const;
  const HardwareView& hardware() const { return hw_; }
  const ModelParameters& parameters() const { return params_; }
  const CollectiveOptions& options() const { return options_; }

 private:
  topology::ClusterSpec spec_;
  CollectiveOptions options_;
  ModelParameters params_;
  HardwareView hw_;
  Tuner tuner_;
};

}  // namespace dtsim::collectives
