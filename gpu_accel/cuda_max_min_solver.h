// The CUDA twin of network::flow::CpuMaxMinSolver: the same progressive filling, the team program
// of network/flow/team_filling.h (whose host run is its twin in every build) run by one thread
// block, the whole solve in one launch, bit for bit the CPU solver's rates. Built only when CUDA is found
// (target dtsim_gpu_accel, which defines DTSIM_HAVE_CUDA_SOLVER); the factory returns null when
// the machine has no usable GPU, so callers fall back to the CPU solver:
//   auto gpu = gpu_accel::make_cuda_max_min_solver();   // null without a GPU
//   network::FlowNetworkModel net(cluster, {.accelerator = std::move(gpu)});
#pragma once

#include <memory>

#include "network/flow/max_min_solver.h"

namespace dtsim::gpu_accel {

// True when the CUDA runtime loads and reports at least one device.
bool cuda_device_present();

// A solver that runs on the current CUDA device, or null when cuda_device_present() is false.
// Its solve() throws std::runtime_error on a CUDA error.
std::unique_ptr<network::flow::FlowSolver> make_cuda_max_min_solver();

}  // namespace dtsim::gpu_accel
