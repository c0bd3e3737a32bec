// Predicted iteration time of every dense published run in training_runs_dev.csv, within 15%.
// With DTSIM_PRINT_TABLE=1 it prints the markdown table that docs/training.md carries.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "collectives/analytical_model.h"
#include "validation/training_runs.h"
#include "workloads/advice.h"
#include "workloads/training.h"

namespace dtsim::workloads {
namespace {

// The dev set's path: $DTSIM_TRAINING_RUNS, else tests/workloads/data/training_runs_dev.csv.
std::string training_runs_csv() {
  if (const char* env = std::getenv("DTSIM_TRAINING_RUNS")) return env;
  return std::string(DTSIM_SOURCE_DIR) + "/tests/workloads/data/training_runs_dev.csv";
}

// Published rows the model misses by more than 15%, each for a reason the model deliberately
// does not fit (docs/training.md, "Known outliers"). They are held to 30%.
bool known_outlier(const std::string& id) {
  return id == "mpt_30b_h100_80gb_8gpu_s8192_amp_bf16" ||  // 2.6x the s4096 time for 2x tokens
         id == "mpt_30b_a100_80gb_8gpu_s8192_amp_bf16" ||  // 2.8x the s4096 time for 2x tokens
         id == "mpt_70b_a100_40gb_64gpu_s2048_bf16" ||     // 70B on 64 x 40 GB: memory-bound allocator
         id == "mpt_1b_a100_40gb_32gpu_s2048_bf16" ||      // 20% slower than both 16 and 64 GPUs
         id == "mpt_1b_h100_80gb_512gpu_s2048_amp_bf16";   // scaling loss beyond the collectives' model
}

// Runs outside the dev set the model misses by more than 15% (docs/training.md).
bool known_extra_miss(const std::string& id) {
  return id.rfind("mtnlg530b_", 0) == 0 ||     // DeepSpeed's 2021 pipeline engine: 25-30% slower
         id == "nemo2502_gpt3_175b_h100_512";   // NeMo 25.02: 11% faster than 24.07 on the same layout
}

// "used/capacity", marked when the job does not fit.
std::string memory_cell(const TrainingResult& r) {
  if (!r.memory) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.0f/%.0f%s", r.memory->total() / (1 << 30), r.memory->capacity / (1 << 30),
                r.memory->fits() ? "" : " (over)");
  return buf;
}

std::string fmt_seconds(double v, const char* format = "%.3f") {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Runs every dense row of a published-runs CSV and holds each prediction to 15% of the published
// iteration time (or TFLOP/s per GPU where only that is published); a named miss to 30%, and a
// row the model cannot represent at all (`far_miss`) to 80%. Returns the mean |error| of time, and
// through `memory_error` that of the memory estimate over the rows that publish a peak.
double check_runs(const std::string& path, bool (*known_miss)(const std::string&), bool moe = false,
                  double bound = 0.15, double miss_bound = 0.30,
                  bool (*far_miss)(const std::string&) = nullptr, double* memory_error = nullptr) {
  const auto runs = validation::read_published_runs(path);
  EXPECT_FALSE(runs.empty()) << path;
  const bool print = std::getenv("DTSIM_PRINT_TABLE") != nullptr;
  if (print) {
    std::printf("| run | GPUs | TP/PP/DP | published s | predicted s | error | TFLOP/s/GPU | MFU | exposed comm | bubble | memory GiB |\n");
    std::printf("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  }
  int within = 0, total = 0, with_memory = 0;
  double sum_abs = 0, worst = 0, memory_abs = 0;
  for (const auto& run : runs) {
    if (run.moe != moe || (run.iteration_time_s <= 0 && run.tflops_per_gpu <= 0)) continue;
    if (!run.unsupported.empty()) {
      if (print) std::printf("| %s | skipped: %s |\n", run.id.c_str(), run.unsupported.c_str());
      continue;
    }
    const collectives::ModelParameters params;
    const collectives::AnalyticalCollectiveModel comm(run.cluster, collectives::CollectiveOptions{}, params);
    TrainingResult r;
    try {
      // DTSIM_SWEEP_MODE=1 checks the merged-layer graphs sweeps use (layers_per_block = 0).
      GeneratorOptions options;
      if (std::getenv("DTSIM_SWEEP_MODE") != nullptr) options.layers_per_block = 0;
      r = run_training(run.spec, run.cluster, comm, options);
    } catch (const std::exception& e) {
      ADD_FAILURE() << run.id << ": " << e.what();
      continue;
    }
    // Iteration time where published; else TFLOP/s per GPU (as an equivalent time ratio).
    const double err = run.iteration_time_s > 0 ? r.iteration_time_s / run.iteration_time_s - 1
                                                : run.tflops_per_gpu / r.tflops_per_gpu - 1;
    ++total;
    if (run.peak_memory_gib > 0 && r.memory) {
      memory_abs += std::abs(r.memory->total() / (1 << 30) / run.peak_memory_gib - 1);
      ++with_memory;
    }
    within += std::abs(err) <= 0.15 ? 1 : 0;
    sum_abs += std::abs(err);
    worst = std::max(worst, std::abs(err));
    if (print) {
      const double it = r.iteration_time_s;
      std::printf("| %s | %d | %d/%d/%d | %s | %.3f | %+.1f%% | %.0f | %.1f%% | %.1f%% | %.1f%% | %s |\n", run.id.c_str(),
                  run.cluster.total_gpus(), run.spec.parallel.tp, run.spec.parallel.pp, run.spec.parallel.dp,
                  run.iteration_time_s > 0 ? fmt_seconds(run.iteration_time_s).c_str()
                                           : (fmt_seconds(run.tflops_per_gpu, "%.0f TF")).c_str(),
                  it, 100 * err, r.tflops_per_gpu, 100 * r.mfu, 100 * r.breakdown.exposed_total().seconds() / it,
                  100 * r.breakdown.bubble.seconds() / it, memory_cell(r).c_str());
    }
    if (const char* detail = std::getenv("DTSIM_DETAIL"); detail && run.id == detail) {
      std::printf("compute %.3f bubble %.3f exposed tp %.3f cp %.3f ep %.3f dp %.3f pp %.3f\n",
                  r.breakdown.compute.seconds(), r.breakdown.bubble.seconds(), r.breakdown.exposed[0].seconds(),
                  r.breakdown.exposed[1].seconds(), r.breakdown.exposed[2].seconds(), r.breakdown.exposed[3].seconds(),
                  r.breakdown.exposed[4].seconds());
      for (const auto& c : r.critical_ops) std::printf("  %-28s %-8s %8.4f s x%d\n", c.label.c_str(), c.what.c_str(), c.time_s, c.count);
    }
    const bool far = far_miss != nullptr && far_miss(run.id);
    EXPECT_LE(std::abs(err), far                  ? 0.80
                             : known_miss(run.id) ? miss_bound
                                                  : bound)
        << run.id << ": predicted " << r.iteration_time_s << " s, " << r.tflops_per_gpu
        << " TFLOP/s per GPU";
  }
  std::printf("runs: %d, within 15%%: %d, mean |error| %.1f%%, worst %.1f%%\n", total, within,
              100 * sum_abs / std::max(1, total), 100 * worst);
  if (with_memory > 0) {
    std::printf("peak memory published for %d runs: mean |error| of the estimate %.1f%%\n", with_memory,
                100 * memory_abs / with_memory);
  }
  if (memory_error != nullptr) *memory_error = memory_abs / std::max(1, with_memory);
  return sum_abs / std::max(1, total);
}

// Any published-runs CSV in these columns, named by DTSIM_RUNS_CSV (dense rows; DTSIM_RUNS_MOE=1
// for the MoE rows), held to 15%: a check of runs not (yet) in the tables above. Skipped unset.
TEST(PublishedRuns, FileNamedByTheEnvironment) {
  const char* path = std::getenv("DTSIM_RUNS_CSV");
  if (path == nullptr) GTEST_SKIP() << "DTSIM_RUNS_CSV not set";
  check_runs(
      path, [](const std::string&) { return false; }, std::getenv("DTSIM_RUNS_MOE") != nullptr);
}

TEST(PublishedRuns, EveryDenseRunPredictedWithinFifteenPercent) {
  check_runs(training_runs_csv(), known_outlier);
}

// Runs outside the dev set (tests/workloads/data/training_runs_extra.csv): Megatron-LM 2022,
// MT-NLG 530B, Llama 3 405B, NeMo / Megatron-Bridge on H100, B200 and GB200, torchtitan. The
// Hopper flash2/flash3 attention and FP8 figures were checked on them (docs/training.md).
TEST(PublishedRuns, RunsOutsideTheDevSetPredictedWithinFifteenPercent) {
  check_runs(std::string(DTSIM_SOURCE_DIR) + "/tests/workloads/data/training_runs_extra.csv", known_extra_miss);
}

// torchtitan rows more than 20% off (docs/training.md, "FSDP stacks"): Llama 3.1 8B with ring
// attention over 4 and 8 CP ranks at 128K and 256K tokens, -25% and -28%.
bool known_torchtitan_miss(const std::string& id) {
  return id.find("_8b_") != std::string::npos &&
         (id.find("_cp4_") != std::string::npos || id.find("_cp8_") != std::string::npos);
}

// The "FSDP stacks" class of issue 30: every row of torchtitan's December 2024 Llama 3.1 page
// (tests/workloads/data/training_runs_torchtitan.csv; FSDP2 alone and with CP, TP, PP, on 8-512
// H100s of 96 GB HBM2e at 500 W). Each row within 20%, a named miss within 35%, the mean |error|
// of time and of peak memory held to their bounds. The rows take torchtitan's own stack: per-op
// checkpointing, unfused Float8 casts and loss, eager elementwise work without torch.compile, FSDP
// kept unsharded across microbatches under PP, context parallelism as PyTorch's ring attention
// (docs/training.md, "FSDP stacks").
TEST(PublishedRuns, TorchtitanFsdpStacksWithinTwentyPercentAndUnderEightOnAverage) {
  double memory_error = 1;
  const double mean = check_runs(std::string(DTSIM_SOURCE_DIR) + "/tests/workloads/data/training_runs_torchtitan.csv",
                                 known_torchtitan_miss, false, 0.20, 0.35, nullptr, &memory_error);
  EXPECT_LE(mean, 0.075);
  EXPECT_LE(memory_error, 0.17);
}

// MoE runs the model misses for a reason it does not represent (docs/training.md, "MoE runs").
bool known_moe_miss(const std::string& id) {
  return id == "mb2602_qwen3_30b_h100_fp8_16" ||           // 118 TFLOP/s FP8 where the same model reaches 277 in BF16 (Automodel)
         id == "mz_qwen3_235b_h100_bf16_256_tp4pp8ep8" ||  // 1.5x the time of the same zoo's TP2 EP32 layout (within 6%)
         id == "mz_qwen3_235b_h100_bf16_256_tp2pp32ep8_a2a" ||  // 1.23x that layout's time too
         id.rfind("mb2602_gptoss120b_", 0) == 0 ||          // gpt-oss: attention sinks and a 128-token window, no fused kernel
         id == "am_gptoss120b_h100_bf16_64";               // gpt-oss, and its expert parallelism is not published (ep 1 assumed)
}

// Mixture-of-experts runs (tests/workloads/data/training_runs_moe.csv): Megatron-Bridge, NeMo,
// NeMo Automodel and Megatron-Core MoE model-zoo runs of DeepSeek-V3, Kimi K2, Moonlight, Qwen3,
// gpt-oss and Mixtral, and DeepSeek-V3's own production run, on H100/H800, B200/B300 and
// GB200/GB300. Held to 25% (15% is the dense bar), a named miss to 70%.
TEST(PublishedRuns, MixtureOfExpertsRunsPredictedWithinTwentyFivePercent) {
  check_runs(std::string(DTSIM_SOURCE_DIR) + "/tests/workloads/data/training_runs_moe.csv", known_moe_miss, true, 0.25,
             0.70);
}

// Recent runs the model misses by more than 25%, by class (docs/training.md, "Recent NeMo and
// Megatron-Bridge runs").
bool known_recent_miss(const std::string& id) {
  return id == "mbridge2604_llama3_70b_gb300_64_fsdp_fp8" ||            // GB300: 1.27x GB200 on the same layout and FP8 peak
         id.rfind("mbridge2606_llama31_405b_gb300_256_", 0) == 0 ||     //   the same, 405B
         id == "mbridge260201_llama31_405b_gb300_256_fp8_cp2" ||        //   the same, 405B with CP 2
         id == "nemo240301_llama2_7b_h100_64_seq64k";                  // 64K context with CP 2 (2024 kernels): -26%
}

// Recent NeMo and Megatron-Bridge dense runs (tests/workloads/data/training_runs_recent.csv),
// gathered after the model was set and never used to choose a parameter: Llama 3 8B/70B, Llama 3.1
// 405B, Nemotron-3/4, and context-parallel sweeps to 1M tokens (Llama 2 7B on H100, Llama 3 8B on
// B200), on H100, B200, GB200 and GB300 in FP8, MXFP8 and NVFP4. Held to 25%, a named miss to 50%.
TEST(PublishedRuns, RecentNeMoAndMegatronBridgeRunsPredictedWithinTwentyFivePercent) {
  check_runs(std::string(DTSIM_SOURCE_DIR) + "/tests/workloads/data/training_runs_recent.csv", known_recent_miss, false,
             0.25, 0.50);
}

// Recent MoE runs more than 60% off: each contradicts another release's figure for its model and
// system (docs/training.md, "Recent Megatron-Bridge MoE runs").
bool known_recent_moe_miss(const std::string& id) {
  return id == "mb2602_qwen3_30b_b200_mxfp8_8" ||        // MBS 1: 2.8x the time of 26.04.01's MBS 4 run (-18%)
         id == "mb2511_qwen3_30b_h100_fp8_16" ||         // 26.02.01 ran the same layout 1.8x faster
         id == "mb260201_qwen3_235b_b300_mxfp8_256";     // 2.2x the time of 26.04.01's run on the same system (-4%)
}

// Recent Megatron-Bridge MoE runs (tests/workloads/data/training_runs_moe_recent.csv), gathered
// after the model was set: DeepSeek-V3, Kimi K2, Qwen3-30B/235B and gpt-oss-120b on H100, B200,
// B300, GB200 and GB300. Published MoE throughput moved up to 2-3x between releases on one
// system, so this holds each run only to 60% (a named miss to 75%): a guard against regressions
// and against configurations the model cannot run, not an accuracy claim (the docs give the
// errors).
TEST(PublishedRuns, RecentMegatronBridgeMoeRunsPredictedWithinSixtyPercent) {
  check_runs(std::string(DTSIM_SOURCE_DIR) + "/tests/workloads/data/training_runs_moe_recent.csv", known_recent_moe_miss,
             true, 0.60, 0.75);
}

// Held-out runs the model misses by more than 15% (docs/training.md, "Held-out runs").
bool known_heldout_miss(const std::string& id) {
  return id == "megascale2024_megatron_175b_8192" ||   // MegaScale's Megatron-LM baseline: loses
                                                       // 16-18%
         id == "megascale2024_megatron_175b_12288" ||  //   at scale, the loss the paper goes on to
                                                       //   fix
         id.rfind("nemotron4_340b_", 0) ==
             0 ||  // interleaved, VP unpublished: run at VP 1 (+17-20%)
         id.rfind("ibm_fsdp2024_7b_", 0) == 0 ||  // IBM's FSDP stack: 19-32% slower than the
         id.rfind("ibm_fsdp2024_13b_", 0) == 0;   //   model's (and MPT's) FSDP at 7B and 13B
}

// DeepSpeed ZeRO-3 in Megatron-LM, 2021: 1.4-4.2x the time of an overlapped ZeRO-3, the more
// so the more GPUs; nothing in the model represents it.
bool deepspeed_2021_zero3(const std::string& id) {
  return id.rfind("narayanan2021_t2_zero3_", 0) == 0;
}

// Published dense runs gathered in the thirteenth session, after every model figure was set, and
// never used to choose one (tests/workloads/data/training_runs_heldout.csv): Megatron-LM's 2021
// PTD-P and ZeRO-3 comparison, MegaScale's Megatron-LM baseline to 12,288 GPUs, Nemotron-4 15B
// and 340B, PyTorch FSDP at IBM, FlashAttention-2's GPT runs, NVIDIA's DGX Cloud recipes and
// BAAI's FlagPerf. Held to 15%; a named miss to 35%, DeepSpeed's 2021 ZeRO-3 to 80%.
TEST(PublishedRuns, HeldOutRunsPredictedWithinFifteenPercent) {
  check_runs(std::string(DTSIM_SOURCE_DIR) + "/tests/workloads/data/training_runs_heldout.csv",
             known_heldout_miss, false, 0.15, 0.35, deepspeed_2021_zero3);
}

// The Llama 3 paper states its interleaved pipeline's bubble as (PP - 1) / (V x M) of the time
// without it (Llama Team, arXiv:2407.21783, section 3.3.2), which is (pp - 1) / (vp x m + pp - 1)
// of the iteration. Its three 405B layouts (16 stages, 16 or 32 microbatches a replica, V 8 as
// the rows assume; docs/training.md, "Breakdowns of the largest published jobs") simulate a bubble
// within a point of that share: the rows keep the paper's balancing (the first and last chunks
// hold only the embedding and the head), so the bubble is the schedule's, not an idle stage's.
TEST(PublishedBreakdowns, Llama3PipelineBubbleIsThePapersClosedForm) {
  int checked = 0;
  for (const auto& run :
       validation::read_published_runs(std::string(DTSIM_SOURCE_DIR) + "/tests/workloads/data/training_runs_extra.csv")) {
    if (run.id.rfind("llama3_405b_", 0) != 0) continue;
    const collectives::ModelParameters params;
    const collectives::AnalyticalCollectiveModel comm(run.cluster, collectives::CollectiveOptions{}, params);
    const TrainingResult r = run_training(run.spec, run.cluster, comm);
    const auto& p = run.spec.parallel;
    const int microbatches = run.spec.batch.global / (p.dp * run.spec.batch.micro);
    const double closed = pipeline_bubble_share(p.pp, p.vp, microbatches);
    EXPECT_NEAR(r.breakdown.bubble.seconds() / r.iteration_time_s, closed, 0.01)
        << run.id << ": " << p.pp << " stages, vp " << p.vp << ", " << microbatches << " microbatches";
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

}  // namespace
}  // namespace dtsim::workloads
