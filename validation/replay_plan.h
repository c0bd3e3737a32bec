// ReplayPlan: what nccl-replay runs for a scenario's collective sweep, in plain C++ so it is
// tested without a GPU: the sizes (nccl-tests' -b/-e/-f rules), the element counts each NCCL call
// takes, and the data pattern whose results every rank checks (nccl-tests' #wrong). The pattern
// functions are host-and-device so the CUDA fill and check kernels use exactly this code.
//   ReplayPlan plan = make_replay_plan(CollectiveKind::all_gather, Bytes(8), Bytes::gib(1), 2, 16);
//   for (const ReplayStep& s : plan.steps) launch(s.send_count, s.recv_count);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/collective.h"
#include "sim/units.h"
#include "validation/measurement.h"

#if defined(__CUDACC__)
#define DTSIM_HOST_DEVICE __host__ __device__
#else
#define DTSIM_HOST_DEVICE
#endif

namespace dtsim::validation {

struct ReplayStep {
  int64_t size_bytes = 0;  // nccl-tests' size column
  int64_t send_count = 0;  // elements in each rank's send buffer
  int64_t recv_count = 0;  // elements in each rank's receive buffer
  int64_t call_count = 0;  // the count argument of the NCCL call (per peer for all_to_all,
                           // gather and scatter)
};

struct ReplayPlan {
  collectives::CollectiveKind collective = collectives::CollectiveKind::all_reduce;
  int ranks = 0;
  int root = 0;
  std::vector<ReplayStep> steps;
};

// Sizes from `min` to `max` multiplying by `factor`, each rounded down to whole elements of 4
// bytes (float32) and, for collectives that split buffers across ranks, to a multiple of the rank
// count, as nccl-tests does; sizes that round to zero are dropped. Throws InputError on a bad range.
ReplayPlan make_replay_plan(collectives::CollectiveKind kind, Bytes min, Bytes max, int factor,
                            int ranks);

// The input element `index` of `rank`: small integers, so that sums over thousands of ranks are
// exact in float32 and a result is either right or wrong.
DTSIM_HOST_DEVICE inline float replay_input(int rank, int64_t index) {
  return static_cast<float>((rank * 7 + index * 13) % 31 + 1);
}

// What element `index` of `rank`'s receive buffer must hold after the collective.
DTSIM_HOST_DEVICE inline float replay_expected(collectives::CollectiveKind kind, int rank, int ranks,
                                               int root, int64_t call_count, int64_t index) {
  using K = collectives::CollectiveKind;
  float sum = 0;
  switch (kind) {
    case K::all_reduce:
    case K::reduce:
      if (kind == K::reduce && rank != root) return replay_input(rank, index);  // untouched
      for (int r = 0; r < ranks; ++r) sum += replay_input(r, index);
      return sum;
    case K::reduce_scatter:
      for (int r = 0; r < ranks; ++r) sum += replay_input(r, rank * call_count + index);
      return sum;
    case K::all_gather:
    case K::hypercube:
    case K::gather:  // the root's buffer (the other ranks' are not checked)
      return replay_input(static_cast<int>(index / call_count), index % call_count);
    case K::scatter:
      return replay_input(root, rank * call_count + index);
    case K::broadcast:
      return replay_input(root, index);
    case K::all_to_all: {
      int peer = static_cast<int>(index / call_count);
      return replay_input(peer, rank * call_count + index % call_count);
    }
    case K::send_recv:
      return replay_input((rank + ranks - 1) % ranks, index);
  }
  return 0;
}

// Counts elements of `received` (rank's receive buffer) that differ from replay_expected: the
// host-side twin of the CUDA check kernel.
int64_t count_wrong(collectives::CollectiveKind kind, int rank, int ranks, int root,
                    const ReplayStep& step, const std::vector<float>& received);

// A measurement row from a timed step: time is the mean over iterations in microseconds, and
// algbw/busbw follow nccl-tests' definitions.
MeasuredPoint replay_point(const ReplayPlan& plan, const ReplayStep& step, double time_us,
                           Placement placement, int64_t wrong);

}  // namespace dtsim::validation
