#include "workloads/collective_sweep.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <string>

#include "sim/error.h"

namespace dtsim::workloads {

using collectives::CollectiveKind;

std::string_view redop_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::reduce:
      return "sum";
    default:
      return "none";
  }
}

std::string_view nccl_type_name(topology::Dtype d) {
  switch (d) {
    case topology::Dtype::fp32:
      return "float";
    case topology::Dtype::tf32:
      return "float";
    case topology::Dtype::bf16:
      return "bfloat16";
    case topology::Dtype::fp16:
      return "half";
    case topology::Dtype::fp8:
      return "f8e4m3";
    case topology::Dtype::fp4:
      return "f4e2m1";
  }
  return "float";
}

double dtype_bytes(topology::Dtype d) {
  switch (d) {
    case topology::Dtype::fp32:
    case topology::Dtype::tf32:
      return 4;
    case topology::Dtype::bf16:
    case topology::Dtype::fp16:
      return 2;
    case topology::Dtype::fp8:
      return 1;
    case topology::Dtype::fp4:
      return 0.5;
  }
  return 4;
}

std::vector<SweepRow> run_collective_sweep(const CollectiveSweepSpec& sweep,
                                           const topology::ClusterSpec& cluster,
                                           const collectives::CollectiveCostModel& model,
                                           Time iteration_floor) {
  if (sweep.step_factor < 2) {
    throw InputError({}, "workload.step_factor",
                     "expected an integer >= 2, got " + std::to_string(sweep.step_factor));
  }
  if (sweep.min_bytes.count() <= 0 || sweep.min_bytes > sweep.max_bytes) {
    throw InputError({}, "workload.min_bytes", "expected 0 < min_bytes <= max_bytes");
  }
  const int total = cluster.total_gpus();
  const int ranks = sweep.ranks > 0 ? sweep.ranks : total;
  if (ranks > total) {
    throw InputError({}, "workload.ranks",
                     "the cluster has " + std::to_string(total) + " GPUs, the sweep asks for " +
                         std::to_string(ranks));
  }
  if (sweep.collective == CollectiveKind::hypercube &&
      !std::has_single_bit(static_cast<unsigned>(ranks))) {
    throw InputError({}, "workload.ranks",
                     "hypercube needs a power-of-two rank count (nccl-tests refuses others), got " +
                         std::to_string(ranks));
  }
  collectives::Communicator comm;
  comm.ranks.resize(static_cast<size_t>(ranks));
  std::iota(comm.ranks.begin(), comm.ranks.end(), 0);
  const bool rooted =
      sweep.collective == CollectiveKind::broadcast || sweep.collective == CollectiveKind::reduce ||
      sweep.collective == CollectiveKind::gather || sweep.collective == CollectiveKind::scatter;
  std::vector<SweepRow> rows;
  for (int64_t b = sweep.min_bytes.count(); b <= sweep.max_bytes.count();) {
    const auto e = model.estimate(sweep.collective, Bytes(b), comm);
    SweepRow r;
    r.collective = sweep.collective;
    r.bytes = Bytes(b);
    r.count = static_cast<int64_t>(static_cast<double>(b) / dtype_bytes(sweep.dtype));
    r.dtype = sweep.dtype;
    r.root = rooted ? 0 : -1;
    r.ranks = ranks;
    r.time = std::max(e.time, iteration_floor);
    r.algbw_gbytes = r.time.ps() > 0 ? static_cast<double>(b) / r.time.seconds() * 1e-9 : 0.0;
    r.busbw_gbytes = r.algbw_gbytes * collectives::busbw_factor(sweep.collective, ranks);
    r.algorithm = e.algorithm;
    r.protocol = e.protocol;
    r.channels = e.channels;
    rows.push_back(r);
    if (b > sweep.max_bytes.count() / sweep.step_factor) break;
    b *= sweep.step_factor;
  }
  return rows;
}

Time host_launch_floor(int gpus_per_thread, const collectives::ModelParameters& params,
                       const topology::GpuSpec& gpu) {
  if (gpus_per_thread <= 1) return Time{};
  return Time::us(gpus_per_thread * params.host_launch_per_gpu_us(gpu.compute_capability));
}

}  // namespace dtsim::workloads
