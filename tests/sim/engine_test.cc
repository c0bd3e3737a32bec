#include "sim/engine.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/rng.h"

namespace dtsim::sim {
namespace {

// Records (time, payload) of every call, and optionally asks the engine to stop at one payload.
class Recorder final : public EventHandler {
 public:
  void on_event(Engine& engine, uint64_t payload) override {
    calls.emplace_back(engine.now(), payload);
    if (payload == stop_at) engine.stop();
  }
  std::vector<std::pair<Time, uint64_t>> calls;
  uint64_t stop_at = UINT64_MAX;
};

TEST(Engine, RunsEventsInTimeOrderAndAdvancesNow) {
  Engine engine;
  Recorder r;
  engine.schedule_at(Time::us(3), r, 3);
  engine.schedule_at(Time::us(1), r, 1);
  engine.schedule_at(Time::us(2), r, 2);
  EXPECT_EQ(engine.run(), 3u);
  ASSERT_EQ(r.calls.size(), 3u);
  EXPECT_EQ(r.calls[0], std::make_pair(Time::us(1), uint64_t{1}));
  EXPECT_EQ(r.calls[1], std::make_pair(Time::us(2), uint64_t{2}));
  EXPECT_EQ(r.calls[2], std::make_pair(Time::us(3), uint64_t{3}));
  EXPECT_EQ(engine.now(), Time::us(3));
  EXPECT_TRUE(engine.idle());
}

TEST(Engine, EqualTimesRunInScheduleOrder) {
  Engine engine;
  Recorder r;
  for (uint64_t p : {4, 2, 9, 1}) engine.schedule_at(Time::ns(5), r, p);
  engine.run();
  ASSERT_EQ(r.calls.size(), 4u);
  EXPECT_EQ(r.calls[0].second, 4u);
  EXPECT_EQ(r.calls[1].second, 2u);
  EXPECT_EQ(r.calls[2].second, 9u);
  EXPECT_EQ(r.calls[3].second, 1u);
}

// A key taken before other events are scheduled sorts its event before theirs at an equal time,
// and the fingerprint is that of scheduling it when the key was taken.
TEST(Engine, KeyedEventSortsAsIfScheduledWhenItsKeyWasTaken) {
  Engine keyed;
  Recorder r;
  const uint64_t key = keyed.take_key();
  keyed.schedule_at(Time::ns(5), r, 2);
  keyed.schedule_keyed(Time::ns(5), key, r, 1);
  keyed.run();
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].second, 1u);
  EXPECT_EQ(r.calls[1].second, 2u);

  Engine plain;
  plain.schedule_at(Time::ns(5), r, 1);
  plain.schedule_at(Time::ns(5), r, 2);
  plain.run();
  EXPECT_EQ(keyed.fingerprint(), plain.fingerprint());
}

TEST(Engine, KeyNotTakenIsRefused) {
  Engine engine;
  Recorder r;
  EXPECT_THROW(engine.schedule_keyed(Time::ns(5), 0, r), std::logic_error);
}

// An event scheduled for the running instant comes after the event that scheduled it and every
// other event of that instant already queued, whatever the sites: site 9 queues A (at site 3) and
// C (at site 5) for 1 us; A, running, queues B for the same instant from site 3, whose key's site
// is below A's and C's. The order is A, C, B.
TEST(Engine, AZeroDelayEventRunsAfterItsCauseWhateverTheSites) {
  struct Chain final : EventHandler {
    void on_event(Engine& engine, uint64_t payload) override {
      order.push_back(payload);
      if (payload == 0) {
        engine.schedule_at_site(Time::us(1), 3, *this, 'A');
        engine.schedule_at_site(Time::us(1), 5, *this, 'C');
      }
      if (payload == 'A') engine.schedule_in(Time::zero(), *this, 'B');
    }
    std::vector<uint64_t> order;
  } chain;
  Engine engine;
  engine.schedule_at_site(Time::zero(), 9, chain, 0);
  engine.run();
  EXPECT_EQ(chain.order, (std::vector<uint64_t>{0, 'A', 'C', 'B'}));
}

TEST(Engine, RunUntilLeavesLaterEventsQueued) {
  Engine engine;
  Recorder r;
  for (int us : {1, 2, 3, 5, 8}) engine.schedule_at(Time::us(us), r, static_cast<uint64_t>(us));
  EXPECT_EQ(engine.run(Time::us(3)), 3u);  // an event exactly at `until` runs
  EXPECT_EQ(engine.pending(), 2u);
  EXPECT_EQ(engine.now(), Time::us(3));
  EXPECT_EQ(engine.run(Time::us(4)), 0u);
  EXPECT_EQ(engine.now(), Time::us(4));
  EXPECT_EQ(engine.run(), 2u);
  EXPECT_EQ(r.calls.back().first, Time::us(8));
  EXPECT_EQ(engine.events_executed(), 5u);
}

TEST(Engine, EventsScheduledAtNowAfterRunUntilRunFirst) {
  Engine engine;
  Recorder r;
  engine.schedule_at(Time::us(1), r, 1);
  engine.schedule_at(Time::us(10), r, 10);
  engine.run(Time::us(4));
  engine.schedule_in(Time::zero(), r, 4);
  engine.schedule_in(Time::us(1), r, 5);
  engine.run();
  ASSERT_EQ(r.calls.size(), 4u);
  EXPECT_EQ(r.calls[1], std::make_pair(Time::us(4), uint64_t{4}));
  EXPECT_EQ(r.calls[2], std::make_pair(Time::us(5), uint64_t{5}));
  EXPECT_EQ(r.calls[3], std::make_pair(Time::us(10), uint64_t{10}));
}

TEST(Engine, RunUntilBeforeNowRunsNothingAndKeepsTime) {
  Engine engine;
  Recorder r;
  engine.schedule_at(Time::us(2), r, 1);
  engine.schedule_at(Time::us(9), r, 2);
  engine.run(Time::us(5));
  EXPECT_EQ(engine.run(Time::us(1)), 0u);
  EXPECT_EQ(engine.now(), Time::us(5));
}

TEST(Engine, StopReturnsAfterTheCurrentEvent) {
  Engine engine;
  Recorder r;
  r.stop_at = 2;
  for (uint64_t p = 1; p <= 4; ++p) engine.schedule_at(Time::ns(static_cast<double>(p)), r, p);
  EXPECT_EQ(engine.run(), 2u);
  EXPECT_EQ(engine.now(), Time::ns(2));
  EXPECT_EQ(engine.pending(), 2u);
  EXPECT_EQ(engine.run(), 2u);  // a later run() resumes
  EXPECT_TRUE(engine.idle());
}

TEST(Engine, SchedulingInThePastIsAnError) {
  Engine engine;
  Recorder r;
  engine.schedule_at(Time::us(5), r);
  engine.run();
  EXPECT_THROW(engine.schedule_at(Time::us(4), r), std::logic_error);
  EXPECT_THROW(engine.schedule_in(Time::ps(-1), r), std::logic_error);
  EXPECT_NO_THROW(engine.schedule_at(Time::us(5), r));
}

// A randomized model: each node, when it fires, sends to a random node after a random delay,
// often zero so that many events tie; every node draws from its own stream.
class Node final : public EventHandler {
 public:
  Node(uint64_t seed, uint64_t id, std::vector<std::unique_ptr<Node>>& nodes)
      : rng_(seed, id), nodes_(&nodes) {}
  void on_event(Engine& engine, uint64_t payload) override {
    if (payload == 0) return;  // a message's hop budget is spent
    const uint64_t fanout = 1 + rng_.below(2);
    for (uint64_t i = 0; i < fanout; ++i) {
      Node& to = *(*nodes_)[rng_.below(nodes_->size())];
      const Time delay =
          rng_.below(4) == 0 ? Time::zero() : Time::ps(static_cast<int64_t>(rng_.below(1'000)));
      engine.schedule_in(delay, to, payload - 1);
    }
  }

 private:
  Rng rng_;
  std::vector<std::unique_ptr<Node>>* nodes_;
};

struct ModelRun {
  uint64_t fingerprint;
  uint64_t executed;
};

ModelRun run_model(uint64_t seed) {
  std::vector<std::unique_ptr<Node>> nodes;
  for (uint64_t i = 0; i < 50; ++i) nodes.push_back(std::make_unique<Node>(seed, i, nodes));
  Engine engine;
  Rng start(seed, stream_id("start"));
  for (int i = 0; i < 20; ++i) {
    engine.schedule_at(Time::ps(static_cast<int64_t>(start.below(100))),
                       *nodes[start.below(nodes.size())], 9);
  }
  engine.run();
  return {engine.fingerprint(), engine.events_executed()};
}

TEST(EngineDeterminism, SameSeedGivesTheSameFingerprintEveryRun) {
  const ModelRun first = run_model(2024);
  ASSERT_GT(first.executed, 1'000u);
  for (int i = 0; i < 100; ++i) {
    const ModelRun again = run_model(2024);
    ASSERT_EQ(again.fingerprint, first.fingerprint) << "run " << i;
    ASSERT_EQ(again.executed, first.executed) << "run " << i;
  }
}

TEST(EngineDeterminism, ADifferentSeedChangesTheFingerprint) {
  EXPECT_NE(run_model(2024).fingerprint, run_model(2025).fingerprint);
}

TEST(EngineDeterminism, SwappingTwoEventsChangesTheFingerprint) {
  Recorder r;
  Engine a;
  a.schedule_at(Time::us(1), r);
  a.schedule_at(Time::us(2), r);
  a.run();
  Engine b;
  b.schedule_at(Time::us(2), r);
  b.schedule_at(Time::us(1), r);
  b.run();
  EXPECT_EQ(a.events_executed(), b.events_executed());
  EXPECT_NE(a.fingerprint(), b.fingerprint());
}

TEST(EngineDeterminism, FingerprintCoversEveryExecutedEvent) {
  Recorder r;
  Engine a;
  a.schedule_at(Time::us(1), r);
  a.run();
  const uint64_t after_one = a.fingerprint();
  a.schedule_at(Time::us(1), r);
  a.run();
  EXPECT_NE(a.fingerprint(), after_one);
}

// Runs on separate engines (a sweep's rows) combine into one fingerprint that depends on each
// run and on their order.
TEST(EngineDeterminism, CombinedFingerprintsDependOnEachRunAndTheirOrder) {
  EXPECT_EQ(combine_fingerprints({}), kEmptyFingerprint);
  EXPECT_EQ(Engine().fingerprint(), kEmptyFingerprint);
  const std::vector<uint64_t> runs = {1, 2, 3};
  const uint64_t combined = combine_fingerprints(runs);
  EXPECT_EQ(combine_fingerprints(runs), combined);
  EXPECT_NE(combine_fingerprints(std::vector<uint64_t>{2, 1, 3}), combined);
  EXPECT_NE(combine_fingerprints(std::vector<uint64_t>{1, 2, 4}), combined);
  EXPECT_NE(combine_fingerprints(std::vector<uint64_t>{1, 2}), combined);
}

}  // namespace
}  // namespace dtsim::sim
