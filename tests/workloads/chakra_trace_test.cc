#include "workloads/chakra_trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "topology/catalog.h"
#include "workloads/alpha_beta_model.h"
#include "workloads/megatron_generator.h"
#include "workloads/training.h"

namespace dtsim::workloads {
namespace {

std::string temp_prefix(const char* name) {
  const auto dir = std::filesystem::temp_directory_path() / ("dtsim_chakra_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

TrainingSpec pipelined() {
  TrainingSpec t;
  t.model.preset = "llama3-8b";
  t.parallel.tp = 2;
  t.parallel.pp = 4;
  t.parallel.dp = 0;
  t.parallel.vp = 2;
  t.parallel.zero = 1;
  t.batch.global = 16;
  return t;
}

TEST(ChakraTrace, WrittenAndReadBackGivesTheSameIterationTime) {
  topology::ClusterSpec c = *topology::find_node_preset("hgx-h100");
  c.nodes = 2;
  const Workload w = generate_megatron(pipelined(), c);
  const std::string prefix = temp_prefix("rank");
  write_chakra(w, prefix);
  const Workload back = read_chakra(prefix);
  ASSERT_EQ(back.ranks.size(), w.ranks.size());
  EXPECT_EQ(back.op_count(), w.op_count());
  AlphaBetaCollectiveModel comm(c);
  const ComputeModel cm(c.gpu);
  const TrainingResult a = evaluate_workload(w, c, comm, topology::Dtype::bf16, cm);
  const TrainingResult b = evaluate_workload(back, c, comm, topology::Dtype::bf16, cm);
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_EQ(a.tflops_per_gpu, b.tflops_per_gpu);
}

TEST(ChakraTrace, MeasuredDurationsSurviveTheRoundTrip) {
  Workload w;
  w.total_gpus = 1;
  w.ranks.resize(1);
  Op op;
  op.measured = Time::us(12.5);
  w.ranks[0].add(op);
  const std::string prefix = temp_prefix("measured");
  write_chakra(w, prefix);
  EXPECT_EQ(read_chakra(prefix).ranks[0].ops[0].measured, Time::us(12.5));
}

TEST(ChakraTrace, MissingFirstFileIsAnError) {
  EXPECT_THROW(read_chakra(temp_prefix("nothing_here")), std::runtime_error);
}

TEST(ChakraTrace, TruncatedNodeEndsTheFileWithoutInventingOps) {
  Workload w;
  w.total_gpus = 1;
  w.ranks.resize(1);
  Op op;
  op.measured = Time::us(1);
  w.ranks[0].add(op);
  w.ranks[0].add(op, {0});
  const std::string prefix = temp_prefix("truncated");
  write_chakra(w, prefix);
  const auto path = prefix + ".0.et";
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  EXPECT_EQ(read_chakra(prefix).ranks[0].ops.size(), 1u);
}

}  // namespace
}  // namespace dtsim::workloads
