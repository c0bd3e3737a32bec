#include "collectives/analytical_model.h"

#include <numeric>

#include "sim/error.h"

namespace dtsim::collectives {

AnalyticalCollectiveModel::AnalyticalCollectiveModel(const topology::ClusterSpec& spec,
                                                     const CollectiveOptions& options,
                                                     const ModelParameters& params)
    : spec_(spec), options_(options), params_(params), hw_(spec_, params_), tuner_(hw_, options) {}

CollectiveEstimate AnalyticalCollectiveModel::estimate(CollectiveKind kind, Bytes bytes,
                                                       const Communicator& comm) const {
  const CommShape shape = hw_.shape_of(comm);
  const TunerChoice c = tuner_.choose(kind, bytes.as_double(), shape);
  CollectiveEstimate e;
  e.time = Time::us(c.time_us);
  e.algorithm = c.algorithm;
  e.protocol = c.protocol;
  e.channels = c.channels;
  return e;
}

AlgoCost AnalyticalCollectiveModel::price(CollectiveKind kind, Bytes bytes,
                                          const Communicator& comm, Algorithm algo,
                                          Protocol proto) const {
  const CommShape shape = hw_.shape_of(comm);
  auto why = algorithm_unsupported(hw_, kind, algo, shape);
  if (why.empty()) why = protocol_unsupported(hw_, algo, proto, shape);
  if (!why.empty()) throw InputError({}, "collectives.algorithm", why);
  const int channels = options_.channels > 0 ? options_.channels : hw_.default_channels;
  return algorithm_cost(hw_, algo, {kind, bytes.as_double(), shape, proto, channels});
}

Communicator AnalyticalCollectiveModel::world() const {
  Communicator c;
  c.ranks.resize(static_cast<size_t>(spec_.total_gpus()));
  std::iota(c.ranks.begin(), c.ranks.end(), 0);
  return c;
}

}  // namespace dtsim::collectives
