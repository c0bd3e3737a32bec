#include "workloads/alpha_beta_model.h"

#include <algorithm>
#include <cmath>

namespace dtsim::workloads {

AlphaBetaCollectiveModel::AlphaBetaCollectiveModel(const topology::ClusterSpec& cluster)
    : AlphaBetaCollectiveModel(cluster, Efficiency{}) {}

AlphaBetaCollectiveModel::AlphaBetaCollectiveModel(const topology::ClusterSpec& cluster, Efficiency eff)
    : cluster_(cluster), eff_(eff) {}

collectives::CollectiveEstimate AlphaBetaCollectiveModel::estimate(
    collectives::CollectiveKind kind, Bytes bytes, const collectives::Communicator& comm) const {
  using collectives::CollectiveKind;
  collectives::CollectiveEstimate est;
  const int n = comm.size();
  if (n <= 1 || bytes.count() == 0) return est;
  // A node here is one scale-up domain: GPUs that reach each other over NVLink/NVSwitch.
  const int domain = std::max(1, cluster_.gpus_per_node * cluster_.nodes_per_domain());
  int lo = comm.ranks.front() / domain, hi = lo;
  int local = 0;
  for (int r : comm.ranks) {
    lo = std::min(lo, r / domain);
    hi = std::max(hi, r / domain);
    if (r / domain == comm.ranks.front() / domain) ++local;
  }
  const bool spans = hi > lo;
  const double up = cluster_.scale_up.bandwidth.bytes_per_s() * eff_.scale_up;
  const double nic_per_gpu = cluster_.nic.bandwidth.bytes_per_s() * cluster_.nic.count /
                             std::max(1, cluster_.gpus_per_node) /
                             std::max(1.0, cluster_.fabric.oversubscription) * eff_.scale_out;
  // NCCL runs one ring per channel, each leaving the node through a different NIC, so a ring
  // collective whose group has `local` GPUs per node crosses the network on `local` NICs at once.
  const double bw = spans ? std::min(up, nic_per_gpu * local) : up;
  const double alpha = (spans ? cluster_.nic.latency + cluster_.nic.message_overhead
                              : cluster_.scale_up.latency).seconds();
  const double b = bytes.as_double();
  const double frac = static_cast<double>(n - 1) / n;
  double t = 0;
  switch (kind) {
    case CollectiveKind::all_reduce: t = 2 * frac * b / bw + 2 * (n - 1) * alpha; break;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter: t = frac * b / bw + (n - 1) * alpha; break;
    case CollectiveKind::hypercube:
      t = frac * b / bw + std::ceil(std::log2(n)) * alpha;
      break;
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce: t = b / bw + std::ceil(std::log2(n)) * alpha; break;
    case CollectiveKind::all_to_all:
    case CollectiveKind::gather:  // the root's links carry what each rank's do in an all_to_all
    case CollectiveKind::scatter: {
      const double in = static_cast<double>(local - 1) / n * b / up;
      const double out = static_cast<double>(n - local) / n * b / nic_per_gpu;
      t = in + out + (n - 1) * alpha / 4;
      break;
    }
    case CollectiveKind::send_recv: t = b / bw + alpha; break;
  }
  est.time = Time::s(t);
  return est;
}

}  // namespace dtsim::workloads
