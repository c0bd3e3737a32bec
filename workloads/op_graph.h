// Op graph: the program one GPU runs in one training iteration, as compute ops, collectives on
// communicators and point-to-point sends/receives, each on a stream (compute, tp, cp, ep, dp, pp)
// with explicit dependencies. Generators (megatron_generator.h, dlrm_generator.h) and trace
// readers (chakra_trace.h) produce a Workload; the executor (executor.h) runs it.
//   Workload w = generate_megatron(spec, cluster);
//   for (const RankGraph& r : w.ranks) fmt::print("{} ops on GPU {}\n", r.ops.size(), r.gpu);
//
// Symmetry: a Workload need not list every GPU. Ranks with identical programs (all TP peers, all
// DP replicas of one pipeline stage) are represented once; RankGraph::represents says how many
// GPUs each simulated rank stands for. A collective waits only for the members of its
// communicator that are simulated, so a representative runs its TP and DP collectives alone.
// (A generator may also list every GPU: GeneratorOptions::all_ranks in megatron_generator.h.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/collective.h"
#include "collectives/cost_model.h"
#include "sim/units.h"
#include "topology/cluster_spec.h"

namespace dtsim::workloads {

enum class OpKind : uint8_t { compute, collective, send, recv };

// Streams run their ops in program order, one at a time, as CUDA streams do; ops on different
// streams overlap. Communication streams are named for the parallelism they serve, which is also
// how exposed communication is attributed. `host` is the CPU thread of a recorded trace (its
// operators' own time, launches included): the GPU streams wait on it only through dependencies,
// and time when nothing but the host is busy counts as GPU idle, not as compute.
enum class Stream : uint8_t { compute, tp, cp, ep, dp, dp_gather, pp, host };
inline constexpr int kStreamCount = 8;

// What a compute op is, so the compute model can price it by shape.
enum class ComputeKind : uint8_t { gemm, attention_fwd, attention_bwd, elementwise, optimizer, measured };

// An online run holds every rank's ops (tens of millions at 1,024 GPUs): the fields are laid out
// by size, the small ones first, so that an op takes 96 bytes with no padding.
struct Op {
  OpKind kind = OpKind::compute;
  Stream stream = Stream::compute;
  ComputeKind compute = ComputeKind::measured;
  bool causal = true;        // attention only
  collectives::CollectiveKind collective = collectives::CollectiveKind::all_reduce;
  topology::Dtype dtype = topology::Dtype::bf16;
  uint32_t label = 0;        // index into RankGraph::labels
  int32_t comm = -1;         // collectives, sends, receives: index into Workload::comms
  int32_t peer_rank = -1;    // send/recv: index of the peer in Workload::ranks (-1: not simulated)
  int32_t peer_op = -1;      // recv: index of the matching send in the peer's ops
  uint32_t dep_begin = 0;    // dependencies: RankGraph::deps[dep_begin, dep_begin + dep_count)
  uint32_t dep_count = 0;
  int32_t repeat = 1;        // the op stands for `repeat` identical back-to-back ops (merged layers)
  // GEMM: m x n x k, `batch` times. Attention: batch = sequences x heads, m = query length,
  // n = key length, k = head dim. Others: flops and bytes only.
  int64_t m = 0, n = 0, k = 0, batch = 1;
  double flops = 0;
  Bytes bytes;               // HBM traffic for compute ops; payload for communication
  Time measured = Time::ps(-1);  // a duration from a trace; wins over every model when >= 0

  bool has_measured() const { return measured.ps() >= 0; }

  // A collective of `bytes` (nccl-tests size) on communicator `comm`, issued on stream `s`.
  static Op collective_on(Stream s, collectives::CollectiveKind kind, int32_t comm,
                          topology::Dtype dtype, Bytes bytes) {
    Op op;
    op.kind = OpKind::collective;
    op.stream = s;
    op.collective = kind;
    op.comm = comm;
    op.dtype = dtype;
    op.bytes = bytes;
    return op;
  }
};
static_assert(sizeof(Op) <= 96, "an op's fields pack into 96 bytes");

struct RankGraph {
  int gpu = 0;               // global GPU index of this rank
  int represents = 1;        // GPUs whose program this one stands for (itself included)
  int stage = 0;             // pipeline stage, for reports
  std::vector<Op> ops;       // program order; ops on one stream run in this order
  std::vector<uint32_t> deps;
  std::vector<std::string> labels;

  // Interns a label ("L3.fc1.fwd") and returns its index.
  uint32_t label(std::string_view text);
  // Appends `op` with the given dependencies and returns its index.
  uint32_t add(Op op, std::initializer_list<uint32_t> after = {});
  uint32_t add(Op op, const std::vector<uint32_t>& after);
  void add_dep(uint32_t op, uint32_t after);  // only for the op added last
};

struct Workload {
  std::string name;
  int total_gpus = 0;
  std::vector<collectives::Communicator> comms;
  std::vector<RankGraph> ranks;
  // For the headline figures: model FLOPs per iteration over all GPUs, as Megatron-LM counts
  // them (no recompute), and tokens per iteration. Zero when unknown (a bare trace).
  double model_flops = 0;
  double tokens = 0;

  int add_comm(collectives::Communicator c);
  size_t op_count() const;
  // Why the workload cannot run on a cluster of `gpus` GPUs (a rank or communicator member names
  // a GPU it does not have, or more ranks than GPUs); empty when it can.
  std::string misfit(int gpus) const;
};

// Appends `job` to `w` with its GPU g on GPU gpu_of[g]: its ranks, its communicators (never shared
// with those already in `w`) and its sends, paired within it. How several jobs, each on its own
// nodes, become one workload for one engine (jobs.h). w's total_gpus, model_flops and tokens stay.
void add_job(Workload& w, const Workload& job, const std::vector<int>& gpu_of);

// Appends a copy of the job for each of `shifts`: every rank again, `shift` GPUs further on, on
// copies of its communicators shifted alike (never shared with the job's), its sends paired within
// the copy. Copies of a job beside it on the fabric (network.background: replicas), run online.
// total_gpus, model_flops and tokens stay the job's.
void add_copies(Workload& w, const std::vector<int>& shifts);

// Which parallelism a communication stream's time is charged to in the breakdown.
enum class CommCategory : uint8_t { tp, cp, ep, dp, pp };
CommCategory category_of(Stream s);
std::string_view name(Stream s);
// What an op's time is, as the critical path and the timeline name it: "compute", "host", or
// the parallelism of a communication op.
std::string_view activity(const Op& op);
std::string_view name(CommCategory c);

}  // namespace dtsim::workloads
