// Progress: silent for short runs and when disabled; a bar after the first second.
#include "runner/progress.h"

#include <gtest/gtest.h>

#include <sstream>

namespace dtsim::runner {
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

// A sweep's rows advance by thousandths of their bytes: the line counts whole rows, the bar and
// the estimate of the time left follow the thousandths, and the note follows the bar.
TEST(Progress, CountsItemsOfManyUnitsWithANote) {
  std::ostringstream out;
  FakeClock clock;
  Progress p(3000, "sweep", true, out, clock.fn());
  p.set_units_per_item(1000);
  clock.now += std::chrono::seconds(2);
  p.advance(1500);
  p.set_note("1.5 ms simulated");
  const std::string line = out.str();
  EXPECT_NE(line.find("1/3  50%"), std::string::npos) << line;
  EXPECT_NE(line.find("2s left, 1.5 ms simulated"), std::string::npos) << line;
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
}  // namespace dtsim::runner
