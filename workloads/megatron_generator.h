// Megatron-LM generator: the per-GPU op graphs of one training iteration of a transformer as
// Megatron-LM (or an FSDP framework, for zero = 3) runs it: tensor parallel with sequence
// parallel, 1F1B and interleaved pipeline schedules, data parallel with ZeRO-1/2/3 or FSDP,
// context parallel and MoE expert parallel. One simulated rank per pipeline stage stands for the
// TP x CP x DP GPUs that run the same program (see op_graph.h on symmetry), or, with
// GeneratorOptions::all_ranks, every GPU of the job is a rank of its own.
//   Workload w = generate_megatron(spec, cluster);
//   TrainingSpec resolved = resolve_training(spec, cluster);  // presets and derived sizes filled in
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "topology/cluster_spec.h"
#include "workloads/op_graph.h"
#include "workloads/workload_spec.h"

namespace dtsim::workloads {

struct GeneratorOptions {
  // Consecutive layers of a pipeline chunk merged into one block of ops (each op repeated).
  // 1 is exact; larger values trade the position of overlapped DP/FSDP traffic within a chunk
  // for speed (sweeps). 0 picks it: 4 blocks a chunk under FSDP, else 1.
  int layers_per_block = 1;
  // One rank per GPU of the job (tp x cp x dp x pp of them, each `represents` 1) instead of one
  // per pipeline stage, for an executor that runs every GPU's traffic on one network. Rank i is
  // GPU i (ascending GPU order) and runs its stage's program, with its own TP, CP, EP, DP (and
  // HSDP shard and replica) and expert-DP communicators: the members of one group share one
  // communicator index, and groups of different roles never do, even over the same GPUs. Sends
  // and receives pair the ranks with the same (tp, cp, dp) coordinates in adjacent stages.
  bool all_ranks = false;
};

// A training spec that breaks one of the generator's rules; `key` is the workload key it blames,
// below `workload.` ("parallel.tp", "model.kv_heads", "batch.global"), so that the loader can
// put the line at that key.
class TrainingSpecError : public std::invalid_argument {
 public:
  TrainingSpecError(std::string key, const std::string& what)
      : std::invalid_argument("training workload: " + key + ": " + what), key_(std::move(key)), what_(what) {}
  const std::string& key() const { return key_; }
  const std::string& message() const { return what_; }

 private:
  std::string key_;
  std::string what_;
};

// Fills a training spec's blanks: the model preset's fields where the spec has none, dp from
// the GPU count, kv_heads, ffn_hidden and moe_ffn_hidden defaults. Throws TrainingSpecError
// when the parallel sizes do not divide the cluster, the model or the batch, or break Megatron's
// rules (vp needs pp > 1; ep needs a mixture-of-experts model whose experts it divides).
TrainingSpec resolve_training(const TrainingSpec& spec, const topology::ClusterSpec& cluster);

// Model FLOPs of one iteration over all GPUs, as Megatron-LM counts them: 3 x the forward
// GEMMs (with active experts only) plus full (non-causal) attention scores and the logits;
// recomputation is not counted.
double megatron_model_flops(const TrainingSpec& resolved);

// First layer of each of `virtual_stages` (pp x vp) pipeline chunks, and `layers` at the end.
// As even as possible; a shortfall falls on the chunks at the two ends, which also hold the
// embedding and the LM head (what Megatron's account-for-embedding/loss split and Llama 3's
// pipeline do): 126 layers on 16 x 8 chunks leave the first and the last chunk with the
// embedding and the head alone.
std::vector<int> pipeline_split(int layers, int virtual_stages);
// The decoder layers' split when the last chunk also runs `mtp` multi-token-prediction modules:
// each module takes a layer's place (as Megatron's pipeline layout counts it, "m"), so the last
// chunk holds that many fewer decoder layers. Same form as pipeline_split.
std::vector<int> decoder_split(int layers, int mtp, int virtual_stages);

Workload generate_megatron(const TrainingSpec& spec, const topology::ClusterSpec& cluster,
                           const GeneratorOptions& options = {});

}  // namespace dtsim::workloads
