// The GPU half of nccl-replay: runs a ReplayPlan on this process's GPUs with NCCL, times each
// size with CUDA events like nccl-tests (warm-up, then the mean over iterations, the slowest rank
// counting), and checks every result against the replay pattern (nccl-tests' #wrong).
#pragma once

#include <nccl.h>

#include <vector>

#include "validation/measurement.h"
#include "validation/replay_plan.h"

namespace dtsim::replay {

struct LocalRanks {
  std::vector<int> devices;  // CUDA device per local rank
  int first_rank = 0;        // global rank of devices[0]; the others follow
  int world = 0;
};

struct RunSettings {
  int warmup = 5;
  int iterations = 20;
  bool in_place = true;      // also time in-place, where the collective has one
};

// Creates the communicators: ncclCommInitAll-style when this process owns every rank, else
// ncclCommInitRank with `id` (from MPI or the TCP rendezvous).
std::vector<ncclComm_t> init_comms(const LocalRanks& local, const ncclUniqueId& id);
void destroy_comms(std::vector<ncclComm_t>& comms);

// Runs every step and placement. Returns the measured points (identical on every process) and
// sets `wrong_total` to the largest #wrong any rank saw over all steps.
std::vector<validation::MeasuredPoint> run_plan(const validation::ReplayPlan& plan,
                                                const LocalRanks& local,
                                                const std::vector<ncclComm_t>& comms,
                                                const RunSettings& settings, int64_t& wrong_total);

}  // namespace dtsim::replay
