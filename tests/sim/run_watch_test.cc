// Watching a run from outside: an EngineWatch stops the engine where it says so, and the
// wall-clock pieces behind --max-wall keep their promises.
#include "sim/run_watch.h"

#include <gtest/gtest.h>

#include "sim/engine.h"

namespace dtsim::sim {
namespace {

struct Counter final : EventHandler {
  int calls = 0;
  void on_event(Engine&, uint64_t) override { ++calls; }
};

// Says stop once it has seen `budget` events.
struct Budget final : EngineWatch {
  uint64_t budget;
  explicit Budget(uint64_t b) : budget(b) {}
  bool keep_running(const Engine& e) override { return e.events_executed() < budget; }
};

TEST(EngineWatch, StopsTheRunWhereItSaysAndTheRestStaysQueued) {
  Engine engine;
  Counter counter;
  for (int i = 1; i <= 10; ++i) engine.schedule_at(Time::us(i), counter);
  Budget budget(4);
  engine.set_watch(&budget);
  EXPECT_EQ(engine.run(), 4u);
  EXPECT_EQ(counter.calls, 4);
  EXPECT_EQ(engine.now(), Time::us(4));
  EXPECT_EQ(engine.pending(), 6u);
  engine.set_watch(nullptr);
  EXPECT_EQ(engine.run(), 6u);
  EXPECT_EQ(counter.calls, 10);
}

// A watch changes nothing in a run it lets finish: the same events in the same order.
TEST(EngineWatch, AWatchThatLetsTheRunGoChangesNothing) {
  auto fingerprint = [](EngineWatch* watch) {
    Engine engine;
    Counter counter;
    for (int i = 0; i < 50; ++i) engine.schedule_at(Time::ns((i * 7919) % 101), counter, i);
    engine.set_watch(watch);
    engine.run();
    return engine.fingerprint();
  };
  Budget generous(1000);
  EXPECT_EQ(fingerprint(nullptr), fingerprint(&generous));
}

TEST(WallDeadline, NoLimitNeverPasses) {
  WallDeadline none;
  EXPECT_FALSE(none.has_limit());
  EXPECT_FALSE(none.passed(WallClock::now() + std::chrono::hours(1000)));
  EXPECT_FALSE(none.expired());
}

TEST(WallDeadline, OncePassedStaysPassed) {
  WallDeadline d(5.0);
  const auto start = WallClock::now();
  EXPECT_TRUE(d.has_limit());
  EXPECT_EQ(d.limit_s(), 5.0);
  EXPECT_FALSE(d.passed(start));
  EXPECT_FALSE(d.expired());
  EXPECT_TRUE(d.passed(start + std::chrono::seconds(6)));
  EXPECT_TRUE(d.expired());
  EXPECT_TRUE(d.passed(start));  // another engine's earlier clock read: still passed
  EXPECT_THROW(WallDeadline(0.0), std::invalid_argument);
}

// Calls in quick succession read the clock less and less often; the first call reads it.
TEST(ClockSampler, ReadsTheClockOnFewerCallsWhenTheyComeFast) {
  ClockSampler clock;
  EXPECT_TRUE(clock.sample().has_value());
  int reads = 0;
  for (int i = 0; i < 100000; ++i) reads += clock.sample().has_value() ? 1 : 0;
  EXPECT_GE(reads, 1);
  EXPECT_LT(reads, 100);
}

}  // namespace
}  // namespace dtsim::sim
