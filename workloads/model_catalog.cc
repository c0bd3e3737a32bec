#include "workloads/model_catalog.h"

namespace dtsim::workloads {
namespace {

ModelSpec model(std::string name, int layers, int hidden, int heads, int kv_heads, int ffn,
                int seq, int vocab, int experts = 1, int top_k = 1, int moe_ffn = 0,
                int shared = 0, int first_dense = 0, bool gated = false) {
  return ModelSpec{std::move(name), layers, hidden, heads, kv_heads, ffn, seq, vocab,
                   experts, top_k, moe_ffn, shared, first_dense, gated};
}

ModelSpec heads(ModelSpec m, int head_dim) {
  m.head_dim = head_dim;
  return m;
}

ModelSpec mla(ModelSpec m, int head_dim, int v_head_dim, int kv_lora, int q_lora, int rope, int mtp) {
  m.mtp_layers = mtp;
  m.head_dim = head_dim;
  m.v_head_dim = v_head_dim;
  m.kv_lora_rank = kv_lora;
  m.q_lora_rank = q_lora;
  m.qk_rope_head_dim = rope;
  return m;
}

const std::vector<ModelSpec>& models() {
  static const std::vector<ModelSpec> kModels = {
      // SwiGLU (gated) FFNs: Llama 2/3, Mixtral, DeepSeek (their papers' architecture sections).
      // Brown et al. 2020, "Language Models are Few-Shot Learners", table 2.1.
      model("gpt3-175b", 96, 12288, 96, 96, 49152, 2048, 50257),
      // Touvron et al. 2023, "Llama 2", and the released config.json (GQA with 8 KV heads).
      model("llama2-70b", 80, 8192, 64, 8, 28672, 4096, 32000, 1, 1, 0, 0, 0, true),
      // Meta Llama 3 config.json files (8B and 70B) and "The Llama 3 Herd of Models", table 3.
      model("llama3-8b", 32, 4096, 32, 8, 14336, 8192, 128256, 1, 1, 0, 0, 0, true),
      model("llama3-70b", 80, 8192, 64, 8, 28672, 8192, 128256, 1, 1, 0, 0, 0, true),
      model("llama3-405b", 126, 16384, 128, 8, 53248, 8192, 128256, 1, 1, 0, 0, 0, true),
      // Mixtral of Experts (Jiang et al. 2024) and its config.json: 8 experts, top-2.
      model("mixtral-8x7b", 32, 4096, 32, 8, 14336, 4096, 32000, 8, 2, 14336, 0, 0, true),
      model("mixtral-8x22b", 56, 6144, 48, 8, 16384, 4096, 32768, 8, 2, 16384, 0, 0, true),
      // DeepSeek-V3 technical report and config.json: 61 layers, first 3 dense (FFN 18432),
      // 256 routed experts of width 2048 plus 1 shared, 8 active; multi-head latent attention
      // (128 heads of 128 + 64 rotary for queries and keys, 128 for values; latents 1536 / 512);
      // one multi-token-prediction module.
      mla(model("deepseek-v3", 61, 7168, 128, 128, 18432, 4096, 129280, 256, 8, 2048, 1, 3, true),
          128, 128, 512, 1536, 64, 1),
      // Qwen3 config.json files: 128 experts, 8 active, no shared expert; 128-wide heads whatever
      // the hidden size (64 query and 4 KV heads on a 4096 hidden; 32 and 4 on 2048).
      heads(model("qwen3-235b-a22b", 94, 4096, 64, 4, 12288, 4096, 151936, 128, 8, 1536, 0, 0, true), 128),
      heads(model("qwen3-30b-a3b", 48, 2048, 32, 4, 6144, 4096, 151936, 128, 8, 768, 0, 0, true), 128),
  };
  return kModels;
}

}  // namespace

const ModelSpec* find_model_preset(std::string_view name) {
  for (const auto& m : models()) {
    if (m.preset == name) return &m;
  }
  return nullptr;
}

std::vector<std::string_view> model_preset_names() {
  std::vector<std::string_view> out;
  for (const auto& m : models()) out.push_back(m.preset);
  return out;
}

}  // namespace dtsim::workloads
