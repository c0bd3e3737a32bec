// CUDA progressive filling. Each round is two kernels on one stream:
//   freeze_flows      every unfrozen flow that crosses a link whose share (remaining capacity over
//                     unfrozen weight) is within the tie tolerance of the round's minimum share m
//                     takes rate m times its weight and counts itself on each of its links;
//   charge_and_share  each link loses m times the weight of its flows frozen this round, and its
//                     new share is reduced to the next round's m (a block reduction, then
//                     atomicMin on the bits: non-negative doubles order like their bit patterns).
// Round 0's minimum comes from link_min_share. Two slots alternate for m: round r reads slot r & 1
// and reduces the next minimum into the other, which freeze_flows has reset.
// The arithmetic is the CPU solver's, operation for operation (explicitly rounded, never fused).
// Weights are added up as integer units (FlowProblem::weight_units) with atomics, and a link's
// frozen flows are counted the same way, so the order atomics land in changes nothing: the rates
// are the CPU solver's bit for bit, weighted or not. The host queues a batch of rounds, then
// reads the number of unfrozen flows once; rounds after the last freeze find no active link and
// return at once.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_accel/cuda_max_min_solver.h"

namespace dtsim::gpu_accel {
namespace {

using network::flow::FlowProblem;
using network::flow::FlowSolver;
using network::flow::kTieTolerance;
using network::flow::kUnitsPerWeight;
using network::flow::kWeightUnit;

constexpr int kThreads = 256;
constexpr unsigned long long kInfBits = 0x7ff0000000000000ULL;  // +infinity

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA max-min solver: ") + what + ": " +
                             cudaGetErrorString(e));
  }
}

// A device array that only grows, so repeated solves reuse their allocations.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(ptr_); }
  T* get() const { return ptr_; }
  void reserve(size_t n) {
    if (n <= capacity_) return;
    cudaFree(ptr_);
    ptr_ = nullptr;
    capacity_ = std::max<size_t>(n, capacity_ * 2);
    check(cudaMalloc(&ptr_, capacity_ * sizeof(T)), "cudaMalloc");
  }
  void upload(const std::vector<T>& v, cudaStream_t s) {
    reserve(std::max<size_t>(v.size(), 1));
    if (!v.empty())
      check(cudaMemcpyAsync(ptr_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice, s),
            "upload");
  }

 private:
  T* ptr_ = nullptr;
  size_t capacity_ = 0;
};

struct RoundState {
  unsigned long long min_bits[2];  // round r reduces into slot r & 1 and resets the other
  unsigned int unfrozen_flows;
};

constexpr uint32_t kUnconstrained = 0xffffffffu;  // frozen_round of a flow that crosses no link

// A weight in units (FlowProblem): the double is a whole number of units, so this is exact.
__device__ unsigned long long units_of(const double* weight, uint32_t f) {
  return weight == nullptr ? kUnitsPerWeight
                           : static_cast<unsigned long long>(__dmul_rn(weight[f], 0x1p40));
}

__device__ double weight_of(unsigned long long units) {
  return __dmul_rn(__ull2double_rn(units), kWeightUnit);
}

// Weighted, init_flows adds each flow's units to its links' unfrozen weight (integers: any order).
__global__ void init_links(uint32_t links, const uint32_t* link_offsets, const double* weight,
                           const double* capacity, double* remaining, uint32_t* unfrozen,
                           unsigned long long* unfrozen_units, uint32_t* frozen_now,
                           unsigned long long* frozen_units_now) {
  for (uint32_t l = blockIdx.x * blockDim.x + threadIdx.x; l < links; l += gridDim.x * blockDim.x) {
    const uint32_t count = link_offsets[l + 1] - link_offsets[l];
    remaining[l] = capacity[l];
    unfrozen[l] = count;
    unfrozen_units[l] = weight == nullptr ? count * kUnitsPerWeight : 0;
    frozen_now[l] = 0;
    frozen_units_now[l] = 0;
  }
}

// A flow's frozen_round is 0 while it is unfrozen and r + 1 once round r froze it.
__global__ void init_flows(uint32_t flows, const uint32_t* flow_offsets,
                           const uint32_t* flow_links, const double* weight,
                           unsigned long long* unfrozen_units, uint32_t* frozen_round,
                           double* rates) {
  for (uint32_t f = blockIdx.x * blockDim.x + threadIdx.x; f < flows; f += gridDim.x * blockDim.x) {
    const bool unconstrained = flow_offsets[f] == flow_offsets[f + 1];
    frozen_round[f] = unconstrained ? kUnconstrained : 0;
    rates[f] = unconstrained ? __longlong_as_double(static_cast<long long>(kInfBits)) : 0.0;
    if (weight != nullptr) {
      const unsigned long long units = units_of(weight, f);
      for (uint32_t i = flow_offsets[f]; i < flow_offsets[f + 1]; ++i)
        atomicAdd(&unfrozen_units[flow_links[i]], units);
    }
  }
}

__device__ double warp_min(double v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = fmin(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

// Reduces each thread's `m` to the block's minimum and folds it into the round's slot.
__device__ void block_min_into(double m, unsigned long long* slot_bits) {
  __shared__ double warp_mins[kThreads / 32];
  m = warp_min(m);
  if (threadIdx.x % 32 == 0) warp_mins[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x < 32) {
    m = threadIdx.x < kThreads / 32 ? warp_mins[threadIdx.x]
                                    : __longlong_as_double(static_cast<long long>(kInfBits));
    m = warp_min(m);
    if (threadIdx.x == 0) {
      atomicMin(slot_bits, static_cast<unsigned long long>(__double_as_longlong(m)));
    }
  }
}

// Round 0's minimum share; later rounds' come from charge_and_share.
__global__ void link_min_share(uint32_t links, const double* remaining, const uint32_t* unfrozen,
                               const unsigned long long* unfrozen_units, RoundState* state) {
  double m = __longlong_as_double(static_cast<long long>(kInfBits));
  for (uint32_t l = blockIdx.x * blockDim.x + threadIdx.x; l < links; l += gridDim.x * blockDim.x) {
    if (unfrozen[l] > 0) m = fmin(m, __ddiv_rn(remaining[l], weight_of(unfrozen_units[l])));
  }
  block_min_into(m, &state->min_bits[0]);
}

__global__ void freeze_flows(uint32_t flows, const uint32_t* flow_offsets,
                             const uint32_t* flow_links, const double* weight,
                             const double* remaining, const unsigned long long* unfrozen_units,
                             uint32_t* frozen_round, double* rates, uint32_t* frozen_now,
                             unsigned long long* frozen_units_now, RoundState* state, int slot,
                             uint32_t round) {
  const unsigned long long bits = state->min_bits[slot];
  if (blockIdx.x == 0 && threadIdx.x == 0) state->min_bits[slot ^ 1] = kInfBits;
  if (bits == kInfBits) return;  // every flow is frozen already
  const double m = __longlong_as_double(static_cast<long long>(bits));
  const double threshold = __dmul_rn(m, 1.0 + kTieTolerance);
  unsigned int froze = 0;
  for (uint32_t f = blockIdx.x * blockDim.x + threadIdx.x; f < flows; f += gridDim.x * blockDim.x) {
    if (frozen_round[f] != 0) continue;
    const uint32_t begin = flow_offsets[f];
    const uint32_t end = flow_offsets[f + 1];
    bool bottlenecked = false;
    for (uint32_t i = begin; i < end && !bottlenecked; ++i) {
      const uint32_t l = flow_links[i];
      bottlenecked = __ddiv_rn(remaining[l], weight_of(unfrozen_units[l])) <= threshold;
    }
    if (!bottlenecked) continue;
    frozen_round[f] = round + 1;
    if (weight == nullptr) {
      rates[f] = m;
      for (uint32_t i = begin; i < end; ++i) atomicAdd(&frozen_now[flow_links[i]], 1u);
    } else {
      rates[f] = __dmul_rn(m, weight[f]);
      const unsigned long long units = units_of(weight, f);
      for (uint32_t i = begin; i < end; ++i) {
        atomicAdd(&frozen_now[flow_links[i]], 1u);
        atomicAdd(&frozen_units_now[flow_links[i]], units);
      }
    }
    ++froze;
  }
  if (froze > 0) atomicSub(&state->unfrozen_flows, froze);
}

// Round `round`'s charge, fused with the next round's minimum share (into the other slot, which
// freeze_flows reset).
__global__ void charge_and_share(uint32_t links, bool weighted, double* remaining,
                                 uint32_t* unfrozen, unsigned long long* unfrozen_units,
                                 uint32_t* frozen_now, unsigned long long* frozen_units_now,
                                 RoundState* state, int slot) {
  const unsigned long long bits = state->min_bits[slot];
  const double m = __longlong_as_double(static_cast<long long>(bits));
  double next = __longlong_as_double(static_cast<long long>(kInfBits));
  for (uint32_t l = blockIdx.x * blockDim.x + threadIdx.x; l < links; l += gridDim.x * blockDim.x) {
    const uint32_t k = frozen_now[l];
    if (k > 0) {
      const unsigned long long units = weighted ? frozen_units_now[l] : k * kUnitsPerWeight;
      const double left = __dsub_rn(remaining[l], __dmul_rn(m, weight_of(units)));
      remaining[l] = left > 0 ? left : 0;
      unfrozen[l] -= k;
      unfrozen_units[l] -= units;
      frozen_now[l] = 0;
      frozen_units_now[l] = 0;
    }
    if (unfrozen[l] > 0) next = fmin(next, __ddiv_rn(remaining[l], weight_of(unfrozen_units[l])));
  }
  block_min_into(next, &state->min_bits[slot ^ 1]);
}

class CudaMaxMinSolver final : public FlowSolver {
 public:
  CudaMaxMinSolver() {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device), "SM count");
    check(cudaMalloc(&state_, sizeof(RoundState)), "cudaMalloc");
    check(cudaMallocHost(&host_unfrozen_, sizeof(unsigned int)), "cudaMallocHost");
  }
  ~CudaMaxMinSolver() override {
    cudaFreeHost(host_unfrozen_);
    cudaFree(state_);
    cudaStreamDestroy(stream_);
  }
  CudaMaxMinSolver(const CudaMaxMinSolver&) = delete;
  CudaMaxMinSolver& operator=(const CudaMaxMinSolver&) = delete;

  std::string_view name() const override { return "cuda-max-min"; }

  void solve(const FlowProblem& p, std::span<double> rates) override {
    const auto flows = static_cast<uint32_t>(p.flow_count());
    const auto links = static_cast<uint32_t>(p.link_count());
    if (p.link_offsets.size() != p.link_count() + 1 || rates.size() != p.flow_count()) {
      throw std::invalid_argument("CUDA max-min solver: link index not built or rates mis-sized");
    }
    if (flows == 0) return;
    const bool weighted = p.weighted();
    capacity_.upload(p.capacity, stream_);
    flow_offsets_.upload(p.flow_offsets, stream_);
    flow_links_.upload(p.flow_links, stream_);
    link_offsets_.upload(p.link_offsets, stream_);
    if (weighted) weight_.upload(p.weight, stream_);
    const double* weight = weighted ? weight_.get() : nullptr;
    remaining_.reserve(std::max<uint32_t>(links, 1));
    unfrozen_.reserve(std::max<uint32_t>(links, 1));
    unfrozen_units_.reserve(std::max<uint32_t>(links, 1));
    frozen_units_now_.reserve(std::max<uint32_t>(links, 1));
    frozen_now_.reserve(std::max<uint32_t>(links, 1));
    frozen_round_.reserve(flows);
    rates_.reserve(flows);

    RoundState init{{kInfBits, kInfBits}, 0};
    for (uint32_t f = 0; f < flows; ++f)
      init.unfrozen_flows += p.flow_offsets[f] != p.flow_offsets[f + 1];
    check(cudaMemcpyAsync(state_, &init, sizeof init, cudaMemcpyHostToDevice, stream_),
          "upload state");

    const int link_blocks = blocks_for(links);
    const int flow_blocks = blocks_for(flows);
    if (links > 0) {
      init_links<<<link_blocks, kThreads, 0, stream_>>>(
          links, link_offsets_.get(), weight, capacity_.get(), remaining_.get(), unfrozen_.get(),
          unfrozen_units_.get(), frozen_now_.get(), frozen_units_now_.get());
    }
    init_flows<<<flow_blocks, kThreads, 0, stream_>>>(flows, flow_offsets_.get(),
                                                      flow_links_.get(), weight,
                                                      unfrozen_units_.get(), frozen_round_.get(),
                                                      rates_.get());
    if (links > 0) {
      link_min_share<<<link_blocks, kThreads, 0, stream_>>>(
          links, remaining_.get(), unfrozen_.get(), unfrozen_units_.get(), state_);
    }
    check(cudaGetLastError(), "launch init");

    // Each round freezes at least one link's last flows, so `links` rounds always suffice; batches
    // grow so that small problems check often and large ones rarely.
    unsigned int unfrozen_flows = init.unfrozen_flows;
    uint32_t round = 0;
    uint32_t batch = 8;
    while (unfrozen_flows > 0 && round <= links) {
      for (uint32_t i = 0; i < batch; ++i, ++round) {
        const int slot = static_cast<int>(round & 1);
        freeze_flows<<<flow_blocks, kThreads, 0, stream_>>>(
            flows, flow_offsets_.get(), flow_links_.get(), weight, remaining_.get(),
            unfrozen_units_.get(), frozen_round_.get(), rates_.get(), frozen_now_.get(),
            frozen_units_now_.get(), state_, slot, round);
        charge_and_share<<<link_blocks, kThreads, 0, stream_>>>(
            links, weighted, remaining_.get(), unfrozen_.get(), unfrozen_units_.get(),
            frozen_now_.get(), frozen_units_now_.get(), state_, slot);
      }
      check(cudaGetLastError(), "launch rounds");
      check(cudaMemcpyAsync(host_unfrozen_, &state_->unfrozen_flows, sizeof(unsigned int),
                            cudaMemcpyDeviceToHost, stream_),
            "read progress");
      check(cudaStreamSynchronize(stream_), "rounds");
      unfrozen_flows = *host_unfrozen_;
      batch = std::min<uint32_t>(batch * 2, 256);
    }
    if (unfrozen_flows > 0) throw std::runtime_error("CUDA max-min solver: flows left unfrozen");
    check(cudaMemcpyAsync(rates.data(), rates_.get(), flows * sizeof(double),
                          cudaMemcpyDeviceToHost, stream_),
          "download rates");
    check(cudaStreamSynchronize(stream_), "download rates");
  }

 private:
  int blocks_for(uint32_t n) const {
    const int needed = static_cast<int>((std::max<uint32_t>(n, 1) + kThreads - 1) / kThreads);
    return std::min(needed, sm_count_ * 8);
  }

  cudaStream_t stream_ = nullptr;
  int sm_count_ = 1;
  RoundState* state_ = nullptr;
  unsigned int* host_unfrozen_ = nullptr;
  DeviceArray<double> capacity_;
  DeviceArray<uint32_t> flow_offsets_;
  DeviceArray<uint32_t> flow_links_;
  DeviceArray<uint32_t> link_offsets_;
  DeviceArray<double> weight_;
  DeviceArray<double> remaining_;
  DeviceArray<uint32_t> unfrozen_;
  DeviceArray<unsigned long long> unfrozen_units_;
  DeviceArray<unsigned long long> frozen_units_now_;
  DeviceArray<uint32_t> frozen_now_;
  DeviceArray<uint32_t> frozen_round_;
  DeviceArray<double> rates_;
};

}  // namespace

bool cuda_device_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

std::unique_ptr<FlowSolver> make_cuda_max_min_solver() {
  if (!cuda_device_present()) return nullptr;
  return std::make_unique<CudaMaxMinSolver>();
}

}  // namespace dtsim::gpu_accel
