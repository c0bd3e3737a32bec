#include "workloads/op_graph.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace dtsim::workloads {
namespace {

TEST(RankGraph, RejectsADependencyOnALaterOp) {
  RankGraph g;
  g.add(Op{});
  EXPECT_THROW(g.add(Op{}, {1}), std::logic_error);
}

TEST(RankGraph, InternsEachLabelOnce) {
  RankGraph g;
  const uint32_t a = g.label("mlp.fc1.fwd");
  g.label("mlp.fc2.fwd");
  EXPECT_EQ(g.label("mlp.fc1.fwd"), a);
  EXPECT_EQ(g.labels.size(), 2u);
}

TEST(RankGraph, StoresDependenciesInProgramOrder) {
  RankGraph g;
  g.add(Op{});
  g.add(Op{});
  const uint32_t c = g.add(Op{}, {0, 1});
  ASSERT_EQ(g.ops[c].dep_count, 2u);
  EXPECT_EQ(g.deps[g.ops[c].dep_begin], 0u);
  EXPECT_EQ(g.deps[g.ops[c].dep_begin + 1], 1u);
}

TEST(Workload, ReusesAnIdenticalCommunicator) {
  Workload w;
  const int a = w.add_comm({{0, 1, 2, 3}});
  const int b = w.add_comm({{4, 5}});
  EXPECT_EQ(w.add_comm({{0, 1, 2, 3}}), a);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace dtsim::workloads
