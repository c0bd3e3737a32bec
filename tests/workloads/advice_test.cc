// The pipeline bubble's closed form that the advice quotes: (pp - 1) / (vp x m + pp - 1).
#include "workloads/advice.h"

#include <gtest/gtest.h>

namespace dtsim::workloads {
namespace {

TEST(PipelineBubbleShare, IsTheScheduleClosedForm) {
  EXPECT_DOUBLE_EQ(pipeline_bubble_share(1, 1, 8), 0.0);
  EXPECT_DOUBLE_EQ(pipeline_bubble_share(16, 1, 16), 15.0 / 31.0);
  EXPECT_DOUBLE_EQ(pipeline_bubble_share(16, 4, 16), 15.0 / 79.0);
  EXPECT_DOUBLE_EQ(pipeline_bubble_share(4, 2, 8), 3.0 / 19.0);
}

}  // namespace
}  // namespace dtsim::workloads
