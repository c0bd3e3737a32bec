#include "apps/nccl_replay/replay_runner.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace dtsim::replay {
namespace {

using collectives::CollectiveKind;
using validation::Placement;
using validation::ReplayPlan;
using validation::ReplayStep;

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}

__global__ void fill_kernel(float* buf, int64_t n, int rank, int64_t offset) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    buf[i] = validation::replay_input(rank, i + offset);
}

__global__ void check_kernel(const float* buf, int64_t n, CollectiveKind kind, int rank, int ranks,
                             int root, int64_t call_count, unsigned long long* wrong) {
  unsigned long long local = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    if (buf[i] != validation::replay_expected(kind, rank, ranks, root, call_count, i)) ++local;
  if (local) atomicAdd(wrong, local);
}

constexpr int kBlocks = 1024;
constexpr int kThreads = 512;

// One local rank's device state.
struct Rank {
  int device = 0;
  int rank = 0;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
  double* scratch = nullptr;               // [time_us, wrong] reduced across ranks
  unsigned long long* wrong = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
};

bool has_in_place(CollectiveKind k) {
  return !collectives::point_to_point(k);
}

// The buffers of one call: in place, the input lives inside the output buffer where NCCL
// expects it (its own chunk for all_gather, the whole buffer otherwise).
struct Buffers {
  const float* send;
  float* recv;
  float* fill;           // where the input pattern goes
  int64_t fill_count;
  int64_t fill_offset;   // pattern index of fill[0]
};

Buffers buffers_for(const ReplayPlan& plan, const ReplayStep& s, const Rank& r, Placement p) {
  if (p == Placement::out_of_place) return {r.send, r.recv, r.send, s.send_count, 0};
  switch (plan.collective) {
    case CollectiveKind::all_gather: {
      float* chunk = r.recv + r.rank * s.call_count;
      return {chunk, r.recv, chunk, s.send_count, 0};
    }
    case CollectiveKind::reduce_scatter:
      return {r.recv, r.recv + r.rank * s.call_count, r.recv, s.send_count, 0};
    default:
      return {r.recv, r.recv, r.recv, s.send_count, 0};
  }
}

void issue(const ReplayPlan& plan, const ReplayStep& s, const Rank& r, ncclComm_t comm,
           const Buffers& b) {
  const int n = plan.ranks;
  switch (plan.collective) {
    case CollectiveKind::all_reduce:
      check_nccl(ncclAllReduce(b.send, b.recv, s.call_count, ncclFloat32, ncclSum, comm, r.stream), "ncclAllReduce");
      break;
    case CollectiveKind::all_gather:
      check_nccl(ncclAllGather(b.send, b.recv, s.call_count, ncclFloat32, comm, r.stream), "ncclAllGather");
      break;
    case CollectiveKind::reduce_scatter:
      check_nccl(ncclReduceScatter(b.send, b.recv, s.call_count, ncclFloat32, ncclSum, comm, r.stream),
                 "ncclReduceScatter");
      break;
    case CollectiveKind::broadcast:
      check_nccl(ncclBroadcast(b.send, b.recv, s.call_count, ncclFloat32, plan.root, comm, r.stream), "ncclBroadcast");
      break;
    case CollectiveKind::reduce:
      check_nccl(ncclReduce(b.send, b.recv, s.call_count, ncclFloat32, ncclSum, plan.root, comm, r.stream),
                 "ncclReduce");
      break;
    case CollectiveKind::all_to_all:
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      for (int p = 0; p < n; ++p) {
        check_nccl(ncclSend(b.send + p * s.call_count, s.call_count, ncclFloat32, p, comm, r.stream), "ncclSend");
        check_nccl(ncclRecv(b.recv + p * s.call_count, s.call_count, ncclFloat32, p, comm, r.stream), "ncclRecv");
      }
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
      break;
    case CollectiveKind::send_recv:
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      check_nccl(ncclSend(b.send, s.call_count, ncclFloat32, (r.rank + 1) % n, comm, r.stream), "ncclSend");
      check_nccl(ncclRecv(b.recv, s.call_count, ncclFloat32, (r.rank + n - 1) % n, comm, r.stream), "ncclRecv");
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
      break;
    case CollectiveKind::gather:  // as nccl-tests: every rank (the root too) sends its part to the
                                  // root
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      if (r.rank == plan.root) {
        for (int p = 0; p < n; ++p)
          check_nccl(
              ncclRecv(b.recv + p * s.call_count, s.call_count, ncclFloat32, p, comm, r.stream),
              "ncclRecv");
      }
      check_nccl(ncclSend(b.send, s.call_count, ncclFloat32, plan.root, comm, r.stream),
                 "ncclSend");
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
      break;
    case CollectiveKind::hypercube:  // launch_all runs its rounds, each a group of its own
      break;
    case CollectiveKind::scatter:
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      if (r.rank == plan.root) {
        for (int p = 0; p < n; ++p)
          check_nccl(
              ncclSend(b.send + p * s.call_count, s.call_count, ncclFloat32, p, comm, r.stream),
              "ncclSend");
      }
      check_nccl(ncclRecv(b.recv, s.call_count, ncclFloat32, plan.root, comm, r.stream),
                 "ncclRecv");
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
      break;
  }
}

// One launch of the collective on every local rank (grouped, so one process can drive several GPUs).
void launch_all(const ReplayPlan& plan, const ReplayStep& s, std::vector<Rank>& ranks,
                const std::vector<ncclComm_t>& comms, Placement p) {
  if (plan.collective == CollectiveKind::hypercube) {
    // As nccl-tests: each rank copies its part into place, then round `mask` exchanges the parts
    // it holds with the rank `mask` away. A round needs the one before it, so each is its own
    // group (NCCL would merge nested groups into one).
    const int64_t cc = s.call_count;
    for (Rank& r : ranks) {
      check_cuda(cudaSetDevice(r.device), "cudaSetDevice");
      check_cuda(cudaMemcpyAsync(r.recv + r.rank * cc, r.send, cc * sizeof(float),
                                 cudaMemcpyDeviceToDevice, r.stream),
                 "cudaMemcpyAsync");
    }
    for (int mask = 1; mask < plan.ranks; mask *= 2) {
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      for (size_t i = 0; i < ranks.size(); ++i) {
        const Rank& r = ranks[i];
        check_cuda(cudaSetDevice(r.device), "cudaSetDevice");
        const int peer = r.rank ^ mask;
        check_nccl(ncclSend(r.recv + (r.rank & ~(mask - 1)) * cc, cc * mask, ncclFloat32, peer,
                            comms[i], r.stream),
                   "ncclSend");
        check_nccl(ncclRecv(r.recv + (peer & ~(mask - 1)) * cc, cc * mask, ncclFloat32, peer,
                            comms[i], r.stream),
                   "ncclRecv");
      }
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    }
    return;
  }
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (size_t i = 0; i < ranks.size(); ++i) {
    check_cuda(cudaSetDevice(ranks[i].device), "cudaSetDevice");
    issue(plan, s, ranks[i], comms[i], buffers_for(plan, s, ranks[i], p));
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
}

void fill_all(const ReplayPlan& plan, const ReplayStep& s, std::vector<Rank>& ranks, Placement p) {
  for (Rank& r : ranks) {
    check_cuda(cudaSetDevice(r.device), "cudaSetDevice");
    Buffers b = buffers_for(plan, s, r, p);
    fill_kernel<<<kBlocks, kThreads, 0, r.stream>>>(b.fill, b.fill_count, r.rank, b.fill_offset);
    check_cuda(cudaGetLastError(), "fill kernel");
  }
}

void sync_all(std::vector<Rank>& ranks) {
  for (Rank& r : ranks) {
    check_cuda(cudaSetDevice(r.device), "cudaSetDevice");
    check_cuda(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
  }
}

// Max over every rank of every process of [time, wrong], through NCCL itself so no second
// transport is needed.
std::pair<double, double> reduce_max(std::vector<Rank>& ranks, const std::vector<ncclComm_t>& comms,
                                     const std::vector<std::pair<double, double>>& local) {
  for (size_t i = 0; i < ranks.size(); ++i) {
    check_cuda(cudaSetDevice(ranks[i].device), "cudaSetDevice");
    double v[2] = {local[i].first, local[i].second};
    check_cuda(cudaMemcpy(ranks[i].scratch, v, sizeof v, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (size_t i = 0; i < ranks.size(); ++i) {
    Rank& r = ranks[i];
    check_cuda(cudaSetDevice(r.device), "cudaSetDevice");
    check_nccl(ncclAllReduce(r.scratch, r.scratch, 2, ncclFloat64, ncclMax, comms[i], r.stream), "ncclAllReduce");
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  sync_all(ranks);
  double out[2];
  check_cuda(cudaSetDevice(ranks[0].device), "cudaSetDevice");
  check_cuda(cudaMemcpy(out, ranks[0].scratch, sizeof out, cudaMemcpyDeviceToHost), "cudaMemcpy");
  return {out[0], out[1]};
}

}  // namespace

std::vector<ncclComm_t> init_comms(const LocalRanks& local, const ncclUniqueId& id) {
  std::vector<ncclComm_t> comms(local.devices.size());
  if (static_cast<int>(local.devices.size()) == local.world) {
    check_nccl(ncclCommInitAll(comms.data(), local.world, local.devices.data()), "ncclCommInitAll");
    return comms;
  }
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (size_t i = 0; i < local.devices.size(); ++i) {
    check_cuda(cudaSetDevice(local.devices[i]), "cudaSetDevice");
    check_nccl(ncclCommInitRank(&comms[i], local.world, id, local.first_rank + static_cast<int>(i)),
               "ncclCommInitRank");
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  return comms;
}

void destroy_comms(std::vector<ncclComm_t>& comms) {
  for (ncclComm_t c : comms) ncclCommDestroy(c);
  comms.clear();
}

std::vector<validation::MeasuredPoint> run_plan(const ReplayPlan& plan, const LocalRanks& local,
                                                const std::vector<ncclComm_t>& comms,
                                                const RunSettings& settings, int64_t& wrong_total) {
  int64_t max_send = 0, max_recv = 0;
  for (const ReplayStep& s : plan.steps) {
    max_send = std::max(max_send, s.send_count);
    max_recv = std::max({max_recv, s.recv_count, s.send_count});  // in place uses recv for both
  }
  std::vector<Rank> ranks(local.devices.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    Rank& r = ranks[i];
    r.device = local.devices[i];
    r.rank = local.first_rank + static_cast<int>(i);
    check_cuda(cudaSetDevice(r.device), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cuda(cudaMalloc(&r.send, static_cast<size_t>(max_send) * sizeof(float)), "cudaMalloc send");
    check_cuda(cudaMalloc(&r.recv, static_cast<size_t>(max_recv) * sizeof(float)), "cudaMalloc recv");
    check_cuda(cudaMalloc(&r.scratch, 2 * sizeof(double)), "cudaMalloc");
    check_cuda(cudaMalloc(&r.wrong, sizeof(unsigned long long)), "cudaMalloc");
    check_cuda(cudaEventCreate(&r.start), "cudaEventCreate");
    check_cuda(cudaEventCreate(&r.stop), "cudaEventCreate");
  }

  std::vector<validation::MeasuredPoint> points;
  wrong_total = 0;
  for (const ReplayStep& s : plan.steps) {
    for (Placement p : {Placement::out_of_place, Placement::in_place}) {
      if (p == Placement::in_place && (!settings.in_place || !has_in_place(plan.collective))) continue;
      fill_all(plan, s, ranks, p);
      for (int i = 0; i < settings.warmup; ++i) launch_all(plan, s, ranks, comms, p);
      sync_all(ranks);

      for (Rank& r : ranks) {
        check_cuda(cudaSetDevice(r.device), "cudaSetDevice");
        check_cuda(cudaEventRecord(r.start, r.stream), "cudaEventRecord");
      }
      for (int i = 0; i < settings.iterations; ++i) launch_all(plan, s, ranks, comms, p);
      for (Rank& r : ranks) {
        check_cuda(cudaSetDevice(r.device), "cudaSetDevice");
        check_cuda(cudaEventRecord(r.stop, r.stream), "cudaEventRecord");
      }
      sync_all(ranks);

      // Correctness on fresh inputs: the timed loop has overwritten in-place buffers.
      fill_all(plan, s, ranks, p);
      launch_all(plan, s, ranks, comms, p);
      std::vector<std::pair<double, double>> local_values;
      for (Rank& r : ranks) {
        check_cuda(cudaSetDevice(r.device), "cudaSetDevice");
        check_cuda(cudaMemsetAsync(r.wrong, 0, sizeof(unsigned long long), r.stream), "cudaMemsetAsync");
        bool checked = (plan.collective != CollectiveKind::reduce &&
                        plan.collective != CollectiveKind::gather) ||
                       r.rank == plan.root;
        if (checked) {
          Buffers b = buffers_for(plan, s, r, p);
          check_kernel<<<kBlocks, kThreads, 0, r.stream>>>(b.recv, s.recv_count, plan.collective, r.rank,
                                                           plan.ranks, plan.root, s.call_count, r.wrong);
          check_cuda(cudaGetLastError(), "check kernel");
        }
        unsigned long long wrong = 0;
        check_cuda(cudaMemcpyAsync(&wrong, r.wrong, sizeof wrong, cudaMemcpyDeviceToHost, r.stream), "cudaMemcpyAsync");
        check_cuda(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
        float ms = 0;
        check_cuda(cudaEventElapsedTime(&ms, r.start, r.stop), "cudaEventElapsedTime");
        local_values.push_back({1e3 * ms / settings.iterations, static_cast<double>(wrong)});
      }
      auto [time_us, wrong] = reduce_max(ranks, comms, local_values);
      wrong_total = std::max(wrong_total, static_cast<int64_t>(wrong));
      points.push_back(validation::replay_point(plan, s, time_us, p, static_cast<int64_t>(wrong)));
    }
  }
  for (Rank& r : ranks) {
    cudaSetDevice(r.device);
    cudaEventDestroy(r.start);
    cudaEventDestroy(r.stop);
    cudaFree(r.send);
    cudaFree(r.recv);
    cudaFree(r.scratch);
    cudaFree(r.wrong);
    cudaStreamDestroy(r.stream);
  }
  return points;
}

}  // namespace dtsim::replay
