#include "workloads/dlrm_generator.h"

#include <gtest/gtest.h>

#include "topology/catalog.h"
#include "workloads/alpha_beta_model.h"
#include "workloads/executor.h"

namespace dtsim::workloads {
namespace {

topology::ClusterSpec cluster(int nodes) {
  topology::ClusterSpec c = *topology::find_node_preset("hgx-a100");
  c.nodes = nodes;
  return c;
}

TEST(DlrmGenerator, OneRankStandsForEveryGpu) {
  const Workload w = generate_dlrm(DlrmSpec{}, cluster(2));
  ASSERT_EQ(w.ranks.size(), 1u);
  EXPECT_EQ(w.ranks[0].represents, 16);
}

TEST(DlrmGenerator, EmbeddingsCrossTheClusterTwiceAndDenseGradientsAreAllReduced) {
  const Workload w = generate_dlrm(DlrmSpec{}, cluster(2));
  int a2a = 0, ar = 0;
  for (const Op& op : w.ranks[0].ops) {
    if (op.kind != OpKind::collective) continue;
    a2a += op.collective == collectives::CollectiveKind::all_to_all ? 1 : 0;
    ar += op.collective == collectives::CollectiveKind::all_reduce ? 1 : 0;
    EXPECT_EQ(w.comms[op.comm].size(), 16);
  }
  EXPECT_EQ(a2a, 2);
  EXPECT_EQ(ar, 2);
}

TEST(DlrmGenerator, MoreNodesMakeTheAllToAllSlowerPerSample) {
  const auto small = cluster(1), large = cluster(8);
  AlphaBetaCollectiveModel cs(small), cl(large);
  const ComputeModel cm(small.gpu);
  const Time t1 = Executor(cm, cs).run(generate_dlrm(DlrmSpec{}, small)).iteration;
  const Time t8 = Executor(cm, cl).run(generate_dlrm(DlrmSpec{}, large)).iteration;
  EXPECT_GT(t8, t1);
}

}  // namespace
}  // namespace dtsim::workloads
