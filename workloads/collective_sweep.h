// The nccl-tests style collective sweep: one collective at sizes min_bytes, min*step, ... up to
// max_bytes, one cost-model estimate per size, as rows with nccl-tests' columns (size, count,
// type, redop, root, time, algbw, busbw) plus the algorithm and protocol the tuner chose.
//   auto rows = workloads::run_collective_sweep(scenario.workload.sweep, scenario.cluster, model);
//   report::write_sweep(rows, report::SweepFormat::csv, std::cout);
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "collectives/cost_model.h"
#include "collectives/model_parameters.h"
#include "sim/units.h"
#include "topology/cluster_spec.h"
#include "workloads/workload_spec.h"

namespace dtsim::workloads {

struct SweepRow {
  collectives::CollectiveKind collective = collectives::CollectiveKind::all_reduce;
  Bytes bytes;
  int64_t count = 0;  // elements of the dtype, as nccl-tests prints it
  topology::Dtype dtype = topology::Dtype::fp32;
  int root = -1;  // 0 for broadcast and reduce, -1 otherwise
  int ranks = 0;
  Time time;
  double algbw_gbytes = 0;  // GB/s: bytes / time
  double busbw_gbytes = 0;  // GB/s: algbw x nccl-tests' bus factor
  collectives::Algorithm algorithm = collectives::Algorithm::ring;
  collectives::Protocol protocol = collectives::Protocol::simple;
  int channels = 0;
  int neighbour_copies = 0;  // copies of the ranks' schedule run beside it (network.background)
  // On flows or packets: what the schedule took on the network model. `time` is the larger of it
  // and the plan's closed-form floor (NetworkPlan::floor); `floor_from` says what set the floor
  // where it was the larger, else is empty. Zero and empty on the analytical model.
  Time network_time;
  std::string_view floor_from;
};

// Throws InputError naming the workload key when the sizes or step do not describe a sweep
// (min > max, step_factor < 2, more ranks than the cluster has). No row takes less than
// `iteration_floor` (host_launch_floor).
std::vector<SweepRow> run_collective_sweep(const CollectiveSweepSpec& sweep,
                                           const topology::ClusterSpec& cluster,
                                           const collectives::CollectiveCostModel& model,
                                           Time iteration_floor = Time{});

// The least one iteration takes when one host thread launches it on `gpus_per_thread` GPUs of
// `gpu` (nccl-tests -g N): their launches follow each other, and nccl-tests runs its iterations
// back to back, so the GPUs' work hides behind the next launches until it outlasts them. Zero for
// one GPU a thread, whose launch the collective's own latency already prices.
Time host_launch_floor(int gpus_per_thread, const collectives::ModelParameters& params,
                       const topology::GpuSpec& gpu);

// "sum" for reducing collectives, "none" otherwise (nccl-tests' redop column).
std::string_view redop_name(collectives::CollectiveKind k);
// nccl-tests' type names: float, half, bfloat16, ...
std::string_view nccl_type_name(topology::Dtype d);
double dtype_bytes(topology::Dtype d);

}  // namespace dtsim::workloads
