#include "validation/training_runs.h"

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "topology/catalog.h"

namespace dtsim::validation {

using namespace dtsim::workloads;
namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

int to_int(const std::string& s, int fallback) { return s.empty() ? fallback : std::stoi(s); }

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

}  // namespace

std::vector<PublishedRun> read_published_runs(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::string line;
  std::vector<std::string> header;
  std::vector<PublishedRun> runs;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto cells = split_csv(line);
    if (header.empty()) {
      header = cells;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    PublishedRun r;
    r.id = row["run_id"];
    r.framework = row["framework"];
    const std::string& notes = row["notes"];
    ModelSpec& m = r.spec.model;
    m.layers = to_int(row["layers"], 0);
    m.hidden = to_int(row["hidden"], 0);
    m.heads = to_int(row["heads"], 0);
    m.kv_heads = to_int(row["kv_heads"], 0);
    m.ffn_hidden = to_int(row["ffn_hidden"], 0);
    m.seq_len = to_int(row["seq_len"], 2048);
    m.vocab = to_int(row["vocab"], 50257);
    // MoE and attention-shape columns (training_runs_moe.csv); blank or absent for dense runs.
    m.experts = to_int(row["experts"], 1);
    m.top_k = to_int(row["top_k"], 1);
    m.moe_ffn_hidden = to_int(row["moe_ffn_hidden"], 0);
    m.shared_experts = to_int(row["shared_experts"], 0);
    m.first_dense_layers = to_int(row["first_k_dense_layers"], 0);
    m.head_dim = to_int(row["head_dim"], 0);
    m.v_head_dim = to_int(row["v_head_dim"], 0);
    m.kv_lora_rank = to_int(row["kv_lora_rank"], 0);
    m.q_lora_rank = to_int(row["q_lora_rank"], 0);
    m.qk_rope_head_dim = to_int(row["qk_rope_head_dim"], 0);
    m.mtp_layers = to_int(row["mtp_layers"], 0);
    r.moe = to_int(row["EP"], 1) > 1 || m.experts > 1;
    ParallelSpec& p = r.spec.parallel;
    p.tp = to_int(row["TP"], 1);
    p.pp = to_int(row["PP"], 1);
    p.dp = to_int(row["DP"], 0);
    p.ep = to_int(row["EP"], 1);
    p.cp = to_int(row["CP"], 1);
    p.vp = to_int(row["VP"], 1);
    const std::string& shard = row["FSDP_or_ZeRO"];
    const size_t zero_at = shard.find("ZeRO-");
    p.zero = contains(shard, "FULL_SHARD") || contains(shard, "FSDP2") ||
                     contains(shard, "Megatron-FSDP") || contains(shard, "HSDP")
                 ? 3
             : shard == "SHARD_GRAD_OP"                                   ? 2
             : zero_at != std::string::npos && zero_at + 5 < shard.size() ? shard[zero_at + 5] - '0'
                                                                          : 0;
    // HSDP: sharded over a group ("shard group N"), or over one node ("shard within node").
    if (const size_t at = shard.find("shard group "); at != std::string::npos) {
      p.shard_group = std::stoi(shard.substr(at + std::string_view("shard group ").size()));
    } else if (contains(shard, "shard within node")) {
      p.shard_group = std::max(1, to_int(row["gpus_per_node"], 8) / (p.tp * p.cp));
    }
    r.spec.batch.global = to_int(row["global_batch_seqs"], 0);
    r.spec.batch.micro = to_int(row["micro_batch"], 1);
    const std::string& prec = row["precision"];
    r.spec.precision = contains(prec, "fp4") || contains(prec, "FP4")   ? topology::Dtype::fp4
                       : contains(prec, "fp8") || contains(prec, "FP8") ? topology::Dtype::fp8
                                                                        : topology::Dtype::bf16;
    // Framework features of the release that produced the run: the 2021-2022 Megatron stacks
    // had no fused attention, no sequence parallelism and no overlapped gradient reduction;
    // everything since (llm-foundry, Megatron-Core, NeMo, torchtitan, ...) has them.
    const bool old_stack = contains(r.framework, "Megatron-LM (2021)") || contains(r.framework, "Megatron-DeepSpeed") ||
                           contains(r.framework, "DeepSpeed (2021)") || contains(r.framework, "Megatron-LM (2020)");
    // Attention kernels by stack and date: llm-foundry's 2023 Triton kernel (flash1) and its
    // 2023 FP8 recipe (te.Linear only: unfused casts); PyTorch SDPA stacks and early-2024 ones
    // (torchtitan, Llama 3) FlashAttention-2; Transformer Engine stacks (Megatron-Core, NeMo,
    // Megatron-Bridge) cuDNN's Hopper-native fused attention.
    const bool foundry = contains(r.framework, "llm-foundry");
    const bool flash2 = contains(r.framework, "torchtitan") || contains(r.framework, "Llama 3") ||
                        contains(r.framework, "FlashAttention-2");
    r.spec.attention = old_stack || contains(notes, "no flash attention") ? Attention::unfused
                       : foundry                                          ? Attention::flash1
                       : flash2                                           ? Attention::flash2
                                                                          : Attention::flash3;
    // torchao's Float8 linears (torchtitan) scale dynamically per tensor: each cast follows an
    // amax reduction over its input, a kernel pass of its own that torch.compile does not fold
    // into the GEMM, as llm-foundry's 2023 te.Linear recipe.
    r.spec.fp8_fused_casts = !foundry && !contains(r.framework, "torchtitan");
    // torchtitan's loss is PyTorch's cross-entropy on an FP32 copy of the logits.
    r.spec.fused_cross_entropy = !contains(r.framework, "torchtitan");
    // Without torch.compile torchtitan's layers run eagerly: a kernel per elementwise operator.
    r.spec.fused_elementwise = !contains(r.framework, "eager");
    // torchtitan's Float8 TP (tensorwise scaling, its default recipe then) all-gathers FP8 inputs.
    r.spec.fp8_tp_all_gather = contains(r.framework, "torchtitan");
    // torchtitan's context parallelism is PyTorch's ring attention over repeated K and V heads.
    r.spec.cp_torch_ring = contains(r.framework, "torchtitan");
    r.spec.overlap_grad_reduce = !old_stack;
    p.sequence_parallel = !old_stack && !contains(notes, "no sequence parallel");
    // NeMo's and Megatron-Bridge's performance recipes for dense models turn on userbuffers TP
    // overlap (tp_comm_overlap) wherever TP > 1 with sequence parallelism; elsewhere it is on
    // only where the notes say so.
    const bool nemo_stack = contains(r.framework, "NeMo") || contains(r.framework, "Megatron-Bridge");
    r.spec.overlap_tp_comm = contains(notes, "tp_comm_overlap") || contains(notes, "tp-comm-overlap") ||
                             (nemo_stack && m.experts <= 1);
    // MoE: DeepEP (and DeepSeek's own kernels) send a token to a remote node once; Megatron-Core's
    // 1F1B EP overlap and DeepSeek's DualPipe hide the exchanges behind another microbatch.
    r.spec.moe_dispatch = contains(notes, "DeepEP") || contains(r.framework, "DeepEP") ||
                                  contains(r.framework, "custom all-to-all")
                              ? MoeDispatch::deduplicated
                              : MoeDispatch::alltoall;
    // torchtitan keeps FSDP's gathered parameters across a pipeline stage's microbatches.
    r.spec.fsdp_reshard_after_forward = !contains(notes, "reshard_after_forward off");
    r.spec.overlap_ep_comm = contains(notes, "overlap-moe-expert-parallel-comm") || contains(r.framework, "DualPipe");
    const bool full_recompute =
        contains(r.framework, "Megatron-LM (2021)") || contains(notes, "act_ckpt=True") ||
        contains(notes, "activation recompute") || contains(r.framework, "activation recompute") ||
        contains(notes, "activation_checkpointing: true") || contains(notes, "full recompute") ||
        contains(notes, "Activation checkpointing: Yes (full");
    // Megatron-Bridge's GB200/GB300 FSDP presets offload activations to the Grace CPU; the
    // rows' notes quote the preset's cpu_offloading_num_layers.
    if (const size_t at = notes.find("cpu_offloading_num_layers="); at != std::string::npos) {
      r.spec.cpu_offload_layers = std::stoi(notes.substr(at + std::string_view("cpu_offloading_num_layers=").size()));
    }
    // torchtitan's "selective" is its per-op policy (selective_ac_option "op"), not Megatron's.
    r.spec.activation_recompute =
        full_recompute                  ? Recompute::full
        : contains(notes, "per-op SAC") ? Recompute::every_other_matmul
        : contains(notes, "selective recompute") || contains(r.framework, "--recompute-activations")
            ? Recompute::selective
            : Recompute::none;
    // SwiGLU families carry three FFN matrices; their FFN width is not 4 x hidden. Nemotron-3/-4
    // (squared ReLU) and GPT/BLOOM (GELU) have two, whatever the width (Llama-based Nemotrons
    // carry "Llama" in their names).
    const std::string& model = row["model"];
    for (const char* family : {"Llama", "LLaMA", "llama", "Mistral", "Mixtral", "Qwen", "DeepSeek", "Gemma",
                               "gpt-oss", "Kimi", "Moonlight"}) {
      if (contains(model, family)) m.gated_ffn = true;
    }
    const bool two_matrix = contains(model, "BLOOM") || contains(model, "GPT") || contains(model, "Nemotron");
    if (m.ffn_hidden > 0 && m.ffn_hidden != 4 * m.hidden && !two_matrix) m.gated_ffn = true;

    const std::string& gpu = row["gpu_type"];
    auto has = [&](const char* a, const char* b) { return contains(gpu, a) || contains(gpu, b); };
    const char* node = has("h100", "H100")     ? "hgx-h100"
                       : has("h800", "H800")   ? "hgx-h800"
                       : has("h200", "H200")   ? "hgx-h200"
                       : has("gb300", "GB300") ? "gb300-nvl72"
                       : has("gb200", "GB200") ? "gb200-nvl72"
                       : has("b300", "B300")   ? "hgx-b300"
                       : has("b200", "B200")   ? "hgx-b200"
                       : has("a100", "A100")   ? "hgx-a100"
                       : has("a800", "A800")   ? "hgx-a800"
                                               : nullptr;
    if (node == nullptr) {
      r.unsupported = "no GPU preset for " + gpu;
      node = "hgx-h100";
    }
    r.cluster = *topology::find_node_preset(node);
    if (has("40gb", "40GB")) r.cluster.gpu = *topology::find_gpu_preset("a100-sxm-40g");
    // Meta's Grand Teton H100s: 96 GB of HBM2e, run at 500 W (torchtitan's published runs).
    if (has("h100", "H100") && has("96gb", "96GB")) r.cluster.gpu = *topology::find_gpu_preset("h100-sxm-96g-500w");
    const int gpus = to_int(row["gpus"], 8);
    const bool nvl72_rack = std::string_view(node).ends_with("-nvl72");
    if (!nvl72_rack) {
      r.cluster.gpus_per_node = to_int(row["gpus_per_node"], r.cluster.gpus_per_node);
    } else if (gpus > 72) {
      // An NVL72 rack is one scale-up domain whatever compute tray (4 GPUs) a row names. Jobs
      // of 128 GPUs and more take 16-tray segments (64 GPUs) of a rack, as NVIDIA recommends
      // for Slurm's topology/block plugin, so the job's NVLink domains are 64 GPUs.
      r.cluster.gpus_per_node = 64;
      r.cluster.scale_up.domain_gpus = 64;
      r.cluster.nic.count = 64;
    }
    r.cluster.nodes = std::max(1, (gpus + r.cluster.gpus_per_node - 1) / r.cluster.gpus_per_node);
    const std::string& net = row["inter_node"];
    if (contains(net, "RoCE")) {
      r.cluster.nic.kind = topology::NicKind::roce;  // e.g. 1600 Gb/s per node: 8 x 200 Gb/s
    } else if (contains(net, "EFA")) {
      r.cluster.nic.kind = topology::NicKind::efa;
    }
    if (contains(net, "Omni-Path")) {
      r.cluster.nic.count = 4;  // Jean Zay: 4 x 100 Gb/s Omni-Path per node
      r.cluster.nic.bandwidth = Bandwidth::gbps(100);
    } else if (contains(net, "3200 Gbps") || contains(net, "3.2 Tbps") || contains(net, "8x 400") ||
               contains(net, "8 x 400") || contains(net, "8x400")) {
      r.cluster.nic.count = 8;
      r.cluster.nic.bandwidth = Bandwidth::gbps(400);
    } else if (contains(net, "1600 Gbps") || contains(net, "8x HDR") || contains(net, "8x 200") ||
               contains(net, "8 x 200")) {
      r.cluster.nic.count = 8;
      r.cluster.nic.bandwidth = Bandwidth::gbps(200);
    }
    r.cluster.fabric.link.bandwidth = r.cluster.nic.bandwidth;
    r.iteration_time_s = row["iteration_time_s"].empty() ? 0 : std::stod(row["iteration_time_s"]);
    r.tflops_per_gpu = row["tflops_per_gpu"].empty() ? 0 : std::stod(row["tflops_per_gpu"]);
    r.peak_memory_gib = row["peak_memory_gib"].empty() ? 0 : std::stod(row["peak_memory_gib"]);
    runs.push_back(std::move(r));
  }
  return runs;
}

}  // namespace dtsim::validation
