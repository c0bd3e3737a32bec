// CUDA progressive filling. Each round is three kernels on one stream:
//   link_min_share   every active link's share remaining / unfrozen, reduced to the round minimum
//                    m (a block reduction, then atomicMin on the bits: non-negative doubles order
//                    like their bit patterns);
//   freeze_flows     every unfrozen flow that crosses a link whose share is within the tie
//                    tolerance of m takes rate m and counts itself on each of its links;
//   charge_links     each link loses m times the number of its flows frozen this round.
// The arithmetic is the CPU solver's, operation for operation (explicitly rounded, never fused),
// and the counts are integers, so the order atomics land in does not change any result. The host
// queues a batch of rounds, then reads the number of unfrozen flows once; rounds after the last
// freeze find no active link and return at once.
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

using network::flow::CpuMaxMinSolver;
using network::flow::FlowProblem;
using network::flow::FlowSolver;
using network::flow::kTieTolerance;

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

__global__ void init_links(uint32_t links, const uint32_t* link_offsets, const double* capacity,
                           double* remaining, uint32_t* unfrozen, uint32_t* frozen_now) {
  for (uint32_t l = blockIdx.x * blockDim.x + threadIdx.x; l < links; l += gridDim.x * blockDim.x) {
    remaining[l] = capacity[l];
    unfrozen[l] = link_offsets[l + 1] - link_offsets[l];
    frozen_now[l] = 0;
  }
}

__global__ void init_flows(uint32_t flows, const uint32_t* flow_offsets, uint8_t* frozen,
                           double* rates) {
  for (uint32_t f = blockIdx.x * blockDim.x + threadIdx.x; f < flows; f += gridDim.x * blockDim.x) {
    const bool unconstrained = flow_offsets[f] == flow_offsets[f + 1];
    frozen[f] = unconstrained ? 1 : 0;
    rates[f] = unconstrained ? __longlong_as_double(static_cast<long long>(kInfBits)) : 0.0;
  }
}

__device__ double warp_min(double v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = fmin(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

__global__ void link_min_share(uint32_t links, const double* remaining, const uint32_t* unfrozen,
                               RoundState* state, int slot) {
  __shared__ double warp_mins[kThreads / 32];
  double m = __longlong_as_double(static_cast<long long>(kInfBits));
  for (uint32_t l = blockIdx.x * blockDim.x + threadIdx.x; l < links; l += gridDim.x * blockDim.x) {
    if (unfrozen[l] > 0) m = fmin(m, __ddiv_rn(remaining[l], static_cast<double>(unfrozen[l])));
  }
  m = warp_min(m);
  if (threadIdx.x % 32 == 0) warp_mins[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x < 32) {
    m = threadIdx.x < kThreads / 32 ? warp_mins[threadIdx.x]
                                    : __longlong_as_double(static_cast<long long>(kInfBits));
    m = warp_min(m);
    if (threadIdx.x == 0) {
      atomicMin(&state->min_bits[slot], static_cast<unsigned long long>(__double_as_longlong(m)));
    }
  }
}

__global__ void freeze_flows(uint32_t flows, const uint32_t* flow_offsets,
                             const uint32_t* flow_links, const double* remaining,
                             const uint32_t* unfrozen, uint8_t* frozen, double* rates,
                             uint32_t* frozen_now, RoundState* state, int slot) {
  const unsigned long long bits = state->min_bits[slot];
  if (bits == kInfBits) return;  // every flow is frozen already
  const double m = __longlong_as_double(static_cast<long long>(bits));
  const double threshold = __dmul_rn(m, 1.0 + kTieTolerance);
  unsigned int froze = 0;
  for (uint32_t f = blockIdx.x * blockDim.x + threadIdx.x; f < flows; f += gridDim.x * blockDim.x) {
    if (frozen[f]) continue;
    const uint32_t begin = flow_offsets[f];
    const uint32_t end = flow_offsets[f + 1];
    bool bottlenecked = false;
    for (uint32_t i = begin; i < end && !bottlenecked; ++i) {
      const uint32_t l = flow_links[i];
      bottlenecked = __ddiv_rn(remaining[l], static_cast<double>(unfrozen[l])) <= threshold;
    }
    if (!bottlenecked) continue;
    frozen[f] = 1;
    rates[f] = m;
    for (uint32_t i = begin; i < end; ++i) atomicAdd(&frozen_now[flow_links[i]], 1u);
    ++froze;
  }
  if (froze > 0) atomicSub(&state->unfrozen_flows, froze);
}

__global__ void charge_links(uint32_t links, double* remaining, uint32_t* unfrozen,
                             uint32_t* frozen_now, RoundState* state, int slot) {
  const unsigned long long bits = state->min_bits[slot];
  if (blockIdx.x == 0 && threadIdx.x == 0) state->min_bits[slot ^ 1] = kInfBits;
  if (bits == kInfBits) return;
  const double m = __longlong_as_double(static_cast<long long>(bits));
  for (uint32_t l = blockIdx.x * blockDim.x + threadIdx.x; l < links; l += gridDim.x * blockDim.x) {
    const uint32_t k = frozen_now[l];
    if (k == 0) continue;
    const double left = __dsub_rn(remaining[l], __dmul_rn(m, static_cast<double>(k)));
    remaining[l] = left > 0 ? left : 0;
    unfrozen[l] -= k;
    frozen_now[l] = 0;
  }
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
    if (p.weighted()) {
      // Weighted sharing (sprayed sub-flows) has no kernel yet: the CPU solver, the oracle.
      cpu_.solve(p, rates);
      return;
    }
    capacity_.upload(p.capacity, stream_);
    flow_offsets_.upload(p.flow_offsets, stream_);
    flow_links_.upload(p.flow_links, stream_);
    link_offsets_.upload(p.link_offsets, stream_);
    remaining_.reserve(std::max<uint32_t>(links, 1));
    unfrozen_.reserve(std::max<uint32_t>(links, 1));
    frozen_now_.reserve(std::max<uint32_t>(links, 1));
    frozen_.reserve(flows);
    rates_.reserve(flows);

    RoundState init{{kInfBits, kInfBits}, 0};
    for (uint32_t f = 0; f < flows; ++f)
      init.unfrozen_flows += p.flow_offsets[f] != p.flow_offsets[f + 1];
    check(cudaMemcpyAsync(state_, &init, sizeof init, cudaMemcpyHostToDevice, stream_),
          "upload state");

    const int link_blocks = blocks_for(links);
    const int flow_blocks = blocks_for(flows);
    if (links > 0) {
      init_links<<<link_blocks, kThreads, 0, stream_>>>(links, link_offsets_.get(), capacity_.get(),
                                                        remaining_.get(), unfrozen_.get(),
                                                        frozen_now_.get());
    }
    init_flows<<<flow_blocks, kThreads, 0, stream_>>>(flows, flow_offsets_.get(), frozen_.get(),
                                                      rates_.get());
    check(cudaGetLastError(), "launch init");

    // Each round freezes at least one link's last flows, so `links` rounds always suffice; batches
    // grow so that small problems check often and large ones rarely.
    unsigned int unfrozen_flows = init.unfrozen_flows;
    uint32_t round = 0;
    uint32_t batch = 8;
    while (unfrozen_flows > 0 && round <= links) {
      for (uint32_t i = 0; i < batch; ++i, ++round) {
        const int slot = static_cast<int>(round & 1);
        link_min_share<<<link_blocks, kThreads, 0, stream_>>>(links, remaining_.get(),
                                                              unfrozen_.get(), state_, slot);
        freeze_flows<<<flow_blocks, kThreads, 0, stream_>>>(
            flows, flow_offsets_.get(), flow_links_.get(), remaining_.get(), unfrozen_.get(),
            frozen_.get(), rates_.get(), frozen_now_.get(), state_, slot);
        charge_links<<<link_blocks, kThreads, 0, stream_>>>(
            links, remaining_.get(), unfrozen_.get(), frozen_now_.get(), state_, slot);
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
  CpuMaxMinSolver cpu_;  // weighted problems
  DeviceArray<double> capacity_;
  DeviceArray<uint32_t> flow_offsets_;
  DeviceArray<uint32_t> flow_links_;
  DeviceArray<uint32_t> link_offsets_;
  DeviceArray<double> remaining_;
  DeviceArray<uint32_t> unfrozen_;
  DeviceArray<uint32_t> frozen_now_;
  DeviceArray<uint8_t> frozen_;
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
