// CUDA progressive filling: network/flow/team_filling.h's team program run by one thread block
// of kThreads threads, the whole solve in one launch. The solve is a chain of rounds (one per rate
// level, thousands on a large fat-tree instance), each waiting on the previous one, and a round's
// work is small (a few bottleneck links' flow lists); a block's barrier costs tens of nanoseconds
// where a grid-wide one or a launch costs microseconds, so one block on one SM runs every round.
// The host twin (network/flow/team_filling_host.h) runs the same source in every build and is
// checked bit for bit against CpuMaxMinSolver; this file adds the block's barriers, minimum and
// atomics, the uploads and the launch.
// The arithmetic is the CPU solver's, operation for operation (--fmad=false: never fused; IEEE
// division). Weights are integer units added by atomics, so the order atomics land in changes
// nothing: the rates are the CPU solver's bit for bit, weighted or not.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_accel/cuda_max_min_solver.h"
#include "network/flow/team_filling.h"

namespace dtsim::gpu_accel {
namespace {

using network::flow::FlowProblem;
using network::flow::FlowSolver;
namespace team = network::flow::team;

constexpr uint32_t kThreads = 1024;  // the block: one SM's most

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

// A thread of the block as a member of team_filling.h's Team: the block is the team.
class CudaTeam {
 public:
  __device__ explicit CudaTeam(double* warp_mins) : warp_mins_(warp_mins) {}
  __device__ uint32_t size() const { return blockDim.x; }
  __device__ uint32_t rank() const { return threadIdx.x; }
  __device__ void sync() { __syncthreads(); }
  // Each warp's minimum by shuffles (every lane ends with it), then every thread folds the warps'.
  __device__ double min(double v) {
    for (int offset = 16; offset > 0; offset /= 2) v = fmin(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if (threadIdx.x % 32 == 0) warp_mins_[threadIdx.x / 32] = v;
    __syncthreads();
    double m = warp_mins_[0];
    for (uint32_t w = 1; w < blockDim.x / 32; ++w) m = fmin(m, warp_mins_[w]);
    __syncthreads();  // nobody writes a slot again before every thread has read them all
    return m;
  }
  __device__ uint32_t add(uint32_t* x, uint32_t v) { return atomicAdd(x, v); }
  __device__ team::Units add(team::Units* x, team::Units v) { return atomicAdd(x, v); }
  __device__ uint32_t read(const uint32_t* flag) { return *static_cast<const volatile uint32_t*>(flag); }
  __device__ bool claim(uint32_t* flag) { return atomicCAS(flag, 0u, 1u) == 0u; }
  __device__ static double infinity() { return __longlong_as_double(0x7ff0000000000000LL); }

 private:
  double* warp_mins_;
};

// The links' shares (which every round scans whole) and frozen weights (which every frozen flow's
// links add to) live in the SM's shared memory when they fit, 16 bytes a link (14,500 links in an
// H100's 227 KiB), else in device memory where `s` points.
__global__ void __launch_bounds__(kThreads, 1) fill_kernel(team::Problem p, team::Scratch s, bool on_chip) {
  __shared__ double warp_mins[kThreads / 32];
  __shared__ uint32_t list_sizes[2];
  extern __shared__ double link_state[];
  s.list_sizes = list_sizes;
  if (on_chip) {
    s.share = link_state;
    s.frozen_units_now = reinterpret_cast<team::Units*>(link_state + p.links);
  }
  CudaTeam b(warp_mins);
  team::fill(b, p, s);
}

class CudaMaxMinSolver final : public FlowSolver {
 public:
  CudaMaxMinSolver() {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    int optin = 0;
    check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "shared memory size");
    cudaFuncAttributes attributes{};
    check(cudaFuncGetAttributes(&attributes, fill_kernel), "kernel attributes");
    shared_bytes_ = static_cast<size_t>(optin) - attributes.sharedSizeBytes;
    check(cudaFuncSetAttribute(fill_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(shared_bytes_)),
          "shared memory size");
  }
  ~CudaMaxMinSolver() override { cudaStreamDestroy(stream_); }
  CudaMaxMinSolver(const CudaMaxMinSolver&) = delete;
  CudaMaxMinSolver& operator=(const CudaMaxMinSolver&) = delete;

  std::string_view name() const override { return "cuda-max-min"; }

  // Uploads the instance (team::upload_bytes), runs the block, downloads the rates.
  void solve(const FlowProblem& p, std::span<double> rates) override {
    const auto flows = static_cast<uint32_t>(p.flow_count());
    const auto links = static_cast<uint32_t>(p.link_count());
    if (p.link_offsets.size() != p.link_count() + 1 || rates.size() != p.flow_count()) {
      throw std::invalid_argument("CUDA max-min solver: link index not built or rates mis-sized");
    }
    if (flows == 0) return;
    capacity_.upload(p.capacity, stream_);
    flow_offsets_.upload(p.flow_offsets, stream_);
    flow_links_.upload(p.flow_links, stream_);
    link_offsets_.upload(p.link_offsets, stream_);
    link_flows_.upload(p.link_flows, stream_);
    if (p.weighted()) weight_.upload(p.weight, stream_);
    const size_t link_slots = std::max<size_t>(links, 1);
    remaining_.reserve(link_slots);
    share_.reserve(link_slots);
    unfrozen_units_.reserve(link_slots);
    frozen_units_now_.reserve(link_slots);
    bottlenecks_.reserve(link_slots);
    entry_start_.reserve(links + 1);
    touched_.reserve(link_slots);
    frozen_.reserve(flows);
    rates_.reserve(flows);

    const team::Problem problem{.flows = flows,
                                 .links = links,
                                 .capacity = capacity_.get(),
                                 .flow_offsets = flow_offsets_.get(),
                                 .flow_links = flow_links_.get(),
                                 .link_offsets = link_offsets_.get(),
                                 .link_flows = link_flows_.get(),
                                 .weight = p.weighted() ? weight_.get() : nullptr};
    const team::Scratch scratch{.remaining = remaining_.get(),
                                 .share = share_.get(),
                                 .unfrozen_units = unfrozen_units_.get(),
                                 .frozen_units_now = frozen_units_now_.get(),
                                 .frozen = frozen_.get(),
                                 .bottlenecks = bottlenecks_.get(),
                                 .entry_start = entry_start_.get(),
                                 .touched = touched_.get(),
                                 .list_sizes = nullptr,  // the kernel's shared memory
                                 .rates = rates_.get(),
                                 .counts = nullptr};  // the host twin counts
    const size_t on_chip_bytes = links * team::kOnChipBytesPerLink;
    const bool on_chip = on_chip_bytes <= shared_bytes_;
    fill_kernel<<<1, kThreads, on_chip ? on_chip_bytes : 0, stream_>>>(problem, scratch, on_chip);
    check(cudaGetLastError(), "launch");
    check(cudaMemcpyAsync(rates.data(), rates_.get(), flows * sizeof(double), cudaMemcpyDeviceToHost,
                          stream_),
          "download rates");
    check(cudaStreamSynchronize(stream_), "solve");
  }

 private:
  cudaStream_t stream_ = nullptr;
  size_t shared_bytes_ = 0;  // the dynamic shared memory a block may have
  DeviceArray<double> capacity_;
  DeviceArray<uint32_t> flow_offsets_;
  DeviceArray<uint32_t> flow_links_;
  DeviceArray<uint32_t> link_offsets_;
  DeviceArray<uint32_t> link_flows_;
  DeviceArray<double> weight_;
  DeviceArray<double> remaining_;
  DeviceArray<double> share_;
  DeviceArray<team::Units> unfrozen_units_;
  DeviceArray<team::Units> frozen_units_now_;
  DeviceArray<uint32_t> bottlenecks_;
  DeviceArray<uint32_t> entry_start_;
  DeviceArray<uint32_t> touched_;
  DeviceArray<uint32_t> frozen_;
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
