// Progress: silent for short runs and when disabled; a bar after the first second.
#include "apps/progress.h"

#include <gtest/gtest.h>

#include <sstream>

namespace dtsim::apps {
namespace {

using Clock = Progress::Clock;

// A clock the test moves by hand, so nothing depends on real time.
struct FakeClock {
  Clock::time_point now{};
  std::function<Clock::time_point()> fn() {
    return [this] { return now; };
  }
};

TEST(Progress, CountsWhatIsDone) {
  std::ostringstream out;
  FakeClock clock;
  Progress p(10, "work", false, out, clock.fn());
  p.advance(3);
  p.advance();
  EXPECT_EQ(p.done(), 4);
}

TEST(Progress, DisabledDrawsNothing) {
  std::ostringstream out;
  FakeClock clock;
  {
    Progress p(10, "work", false, out, clock.fn());
    clock.now += std::chrono::seconds(5);
    p.advance(10);
  }
  EXPECT_EQ(out.str(), "");
}

TEST(Progress, DrawsNothingInTheFirstSecond) {
  std::ostringstream out;
  FakeClock clock;
  Progress p(10, "work", true, out, clock.fn());
  clock.now += std::chrono::milliseconds(500);
  p.advance(10);
  p.finish();
  EXPECT_EQ(out.str(), "");
}

TEST(Progress, DrawsABarAfterASecond) {
  std::ostringstream out;
  FakeClock clock;
  Progress p(4, "sweep", true, out, clock.fn());
  clock.now += std::chrono::seconds(2);
  p.advance(4);
  EXPECT_NE(out.str().find("sweep ["), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("4/4"), std::string::npos) << out.str();
}

TEST(Progress, FinishErasesTheBar) {
  std::ostringstream out;
  FakeClock clock;
  Progress p(4, "sweep", true, out, clock.fn());
  clock.now += std::chrono::seconds(2);
  p.advance(4);
  p.finish();
  EXPECT_NE(out.str().rfind("\x1b[2K"), std::string::npos);
}

}  // namespace
}  // namespace dtsim::apps
