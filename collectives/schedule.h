// Schedule: a collective lowered to point-to-point transfers, the IR the flow and packet models
// execute. Each transfer names its source and destination GPU, its bytes, the transfers that
// must finish before it may start (a rank forwards what it has received) and the bytes the
// destination reduces on arrival. Algorithms whose reduction happens in a switch (NVLS, CollNet)
// have no such lowering and are priced only in closed form, but for NVLS-tree's network part
// (nvls_tree_network_schedule).
//   Schedule s = build_schedule(Algorithm::ring, CollectiveKind::all_reduce, Bytes::mib(64), comm,
//   4); ScheduleExecutor run(s, network, engine); run.start(); engine.run();
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "collectives/collective.h"
#include "collectives/cost_model.h"
#include "sim/run_watch.h"
#include "sim/units.h"

namespace dtsim::collectives {

struct ScheduledTransfer {
  int src_gpu = 0;
  int dst_gpu = 0;
  Bytes bytes;
  Bytes reduce_bytes;  // reduced into the destination's buffer once arrived (0: a copy)
  int step = 0;        // algorithm step, for traces
  int channel = 0;
  int nic = -1;        // which of its GPU's own NICs it leaves and enters a node by (-1: any, by hash)
  uint32_t deps_begin = 0;  // into Schedule::deps
  uint32_t deps_count = 0;
};

// Thrown by Schedule::add when a schedule built on this thread would pass the ScheduleBudget in
// force.
class ScheduleTooLarge : public std::runtime_error {
 public:
  explicit ScheduleTooLarge(uint64_t limit);
  uint64_t limit() const { return limit_; }

 private:
  uint64_t limit_;
};

// Thrown by Schedule::add when a schedule is built on this thread after the deadline of the
// ScheduleBudget in force has passed: a run's --max-wall reached while it plans.
class ScheduleStopped : public std::runtime_error {
 public:
  ScheduleStopped();
};

// While one is alive, every schedule built on its thread holds at most `max_transfers` transfers:
// one more throws ScheduleTooLarge. A run's pre-flight check plans under a budget from the
// machine's memory, so that planning a run that cannot fit stops early instead of exhausting it.
// With a `deadline` (null: the enclosing budget's, if any), a schedule built once it has passed
// throws ScheduleStopped (the clock is read every 65,536 transfers, so a schedule of minutes stops
// within a second of it).
// Budgets nest; the innermost is in force.
class ScheduleBudget {
 public:
  explicit ScheduleBudget(uint64_t max_transfers, sim::WallDeadline* deadline = nullptr);
  ~ScheduleBudget();
  ScheduleBudget(const ScheduleBudget&) = delete;
  ScheduleBudget& operator=(const ScheduleBudget&) = delete;

 private:
  uint64_t outer_;
  sim::WallDeadline* outer_deadline_;
};

class Schedule {
 public:
  // Appends a transfer that starts after every transfer in `deps` (indices of earlier ones).
  uint32_t add(int src, int dst, Bytes bytes, std::span<const uint32_t> deps,
               Bytes reduce = Bytes(0), int step = 0, int channel = 0, int nic = -1);
  // Appends every transfer of `other`, its dependencies moved with it and its channels numbered
  // after this schedule's (`channel_offset` + its own).
  void append(const Schedule& other, int channel_offset);
  const std::vector<ScheduledTransfer>& transfers() const { return transfers_; }
  // The channels the transfers run on: the highest channel plus one (0 when empty). A ring or tree
  // spread over the NICs runs more than it was tuned for (spread_channels).
  int channels() const { return channels_; }
  std::span<const uint32_t> deps_of(const ScheduledTransfer& t) const {
    return std::span<const uint32_t>(deps_).subspan(t.deps_begin, t.deps_count);
  }
  Bytes total_bytes() const;
  // How many dependencies its transfers have, all together.
  size_t dependency_count() const { return deps_.size(); }
  // The bytes its transfers and dependencies take on the heap (the vectors' capacity).
  size_t heap_bytes() const {
    return transfers_.capacity() * sizeof(ScheduledTransfer) + deps_.capacity() * sizeof(uint32_t);
  }

 private:
  std::vector<ScheduledTransfer> transfers_;
  std::vector<uint32_t> deps_;
  int channels_ = 0;
};

// At least as many transfers as can be in flight at once: no set of the schedule's transfers none
// of which waits on another (directly or through others) is larger. It is the number of chains in
// a cover of the dependency order built greedily in index order, each transfer extending a chain
// that ends at one of its dependencies: a chain's transfers wait on one another, so such a set
// holds at most one of each. A ring all_reduce comes out at its ranks times its channels, an
// all_to_all at its transfers.
uint64_t max_concurrent_transfers(const Schedule& s);

// Neighbours (`network.background: replicas`): the copies of a job of `job_gpus` GPUs (the first of
// the cluster) that fit beside it, as the shift of each: k x job_gpus rounded up to whole nodes,
// k = 1, 2, ... Empty for 0 or a job that fills the cluster.
std::vector<int> replica_shifts(int job_gpus, int gpus_per_node, int gpu_count);
// The same schedule `gpus` GPUs further on: a copy of the job runs it there.
Schedule shifted(const Schedule& s, int gpus);

// Part `i` of `total` cut into `parts` nearly equal parts: the first `total mod parts` parts carry
// one byte more, so the parts add up to `total` (a lowering moves every byte it is asked to).
inline Bytes part_of(Bytes total, int64_t parts, int64_t i) {
  return Bytes(total.count() / parts + (i < total.count() % parts ? 1 : 0));
}

// The order channel `channel`'s ring visits `comm`'s ranks: each node's block of
// `ranks_per_node` ranks rotated by the channel, so consecutive channels leave and enter a node
// through different GPUs (and NICs), as NCCL lays its rings across the rails.
std::vector<int> ring_order(const Communicator& comm, int channel, int ranks_per_node);

// How many channels a ring or tree collective over `channels` tuned channels is lowered to, and
// which NIC each uses. Channel c enters and leaves each node through GPU c mod `ranks_per_node`
// (its rotation) and, where a GPU has several NICs of its own, through the GPU's NIC
// (c / ranks_per_node) mod `nics_per_gpu` (its slot: ScheduledTransfer::nic). Where the
// collective spans nodes with more channels than ranks per node, the channels are rounded up to
// a multiple of ranks_per_node x nics_per_gpu, so every NIC carries the same share, as NCCL's
// inter-node rings and trees come one per NIC, duplicated; 10 channels over 8 NICs would put
// two channels' traffic on two NICs and one on the rest, and the fullest NIC would set the time.
// Fewer channels stay as tuned, each on a NIC of its own.
int spread_channels(int channels, int ranks, int ranks_per_node, int nics_per_gpu = 1);

// The NIC slot of channel `channel` (above): (channel / ranks_per_node) mod nics_per_gpu.
inline int nic_slot(int channel, int ranks_per_node, int nics_per_gpu) {
  return ranks_per_node > 0 && nics_per_gpu > 0 ? (channel / ranks_per_node) % nics_per_gpu : 0;
}

// Lowers `kind` run with `algo` on `comm` over `channels` parallel channels. `bytes` is the
// nccl-tests size. Supported: ring (all_reduce, all_gather, reduce_scatter, broadcast, reduce),
// tree (all_reduce: chain in each node, binary tree across nodes), halving_doubling
// (all_reduce, power-of-two ranks), pairwise (all_to_all), p2p (send_recv: rank i to i+1;
// gather, scatter; hypercube).
// Throws InputError for other combinations. `ranks_per_node` groups ranks into nodes for ring
// and tree, whose channels are spread over the nodes' GPUs and their `nics_per_gpu` NICs each
// (spread_channels).
Schedule build_schedule(Algorithm algo, CollectiveKind kind, Bytes bytes, const Communicator& comm,
                        int channels, int ranks_per_node = 1, int nics_per_gpu = 1);

// A broadcast or reduce chain (as build_schedule's ring lowers it) with every hop carrying its
// channel's share at once, no slices: the limit of NCCL's fine pipelining, whose fill the caller
// prices apart (the closed form's). Flows and packets run sweeps of these operations so: sliced
// store and forward, a chain of n ranks took (n - 1 + slices - 1) / slices of the bandwidth time.
Schedule streamed_chain_schedule(CollectiveKind kind, Bytes bytes, const Communicator& comm,
                                 int channels, int ranks_per_node, int nics_per_gpu);

// NVLS-tree all_reduce's network part alone: the NVSwitch reduces each node's buffer and
// multicasts the result, which transfers cannot express, and between nodes local GPU k of every
// node carries part k of the buffer over its own NIC through a double binary tree of the nodes
// (one tree per rail, on `channels` / `ranks_per_node` channels each). Empty on one node. A model
// running it prices the in-switch part in closed form and takes the slower of the two
// (FlowCollectiveModel::price, the flow and packet sweeps).
Schedule nvls_tree_network_schedule(Bytes bytes, const Communicator& comm, int channels,
                                    int ranks_per_node, int nics_per_gpu = 1);

}  // namespace dtsim::collectives
