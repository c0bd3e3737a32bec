#include "sim/partitioned_engine.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "sim/rng.h"

namespace dtsim::sim {
namespace {

// A randomized model whose state is kept per site: each site, when one of its events fires,
// draws from its own stream and sends one or two messages: to itself or its twin (sites 2k and
// 2k + 1, always in one partition, as a node's devices are) after a delay that is often zero, so
// events tie and chains of zero-delay events cross sites; or to any site after at least kLink. It folds what it sees (time,
// payload) into a trace of its own, so the test can compare what every site saw, not only the
// engine's fingerprint.
const Time kLink = Time::ns(1);

class SiteModel final : public EventHandler {
 public:
  SiteModel(uint64_t seed, sim::Site id, std::vector<std::unique_ptr<SiteModel>>& sites)
      : id_(id), rng_(seed, id), sites_(&sites) {}
  void on_event(Engine& engine, uint64_t payload) override {
    if (engine.site() != id_) throw std::logic_error("event ran at the wrong site");
    trace_ = trace_ * 0x100000001b3ULL + static_cast<uint64_t>(engine.now().ps()) * 31 + payload;
    ++seen_;
    if (payload == 0) return;  // a message's hop budget is spent
    const uint64_t fanout = 1 + rng_.below(2);
    for (uint64_t i = 0; i < fanout; ++i) {
      auto to = static_cast<sim::Site>(rng_.below(sites_->size()));
      Time delay = Time::ps(static_cast<int64_t>(rng_.below(3'000)));
      if (rng_.below(3) == 0) {
        to = id_ ^ static_cast<sim::Site>(rng_.below(2));  // itself or its twin
        if (rng_.below(2) == 0) delay = Time::zero();
      } else {
        delay += kLink;
      }
      engine.schedule_at_site(engine.now() + delay, to, *(*sites_)[to], payload - 1);
    }
  }
  uint64_t trace() const { return trace_; }
  uint64_t seen() const { return seen_; }

 private:
  sim::Site id_;
  Rng rng_;
  std::vector<std::unique_ptr<SiteModel>>* sites_;
  uint64_t trace_ = 0;
  uint64_t seen_ = 0;
};

struct Outcome {
  uint64_t fingerprint = 0;
  uint64_t executed = 0;
  Time end;
  std::vector<uint64_t> traces;
};

constexpr uint32_t kSites = 40;

std::vector<std::unique_ptr<SiteModel>> make_sites(uint64_t seed) {
  std::vector<std::unique_ptr<SiteModel>> sites;
  for (uint32_t i = 0; i < kSites; ++i) sites.push_back(std::make_unique<SiteModel>(seed, i, sites));
  return sites;
}

// Seeds at set-up come from site 0, as a model's start does.
void seed_events(Engine& engine, std::vector<std::unique_ptr<SiteModel>>& sites, uint64_t seed) {
  Rng start(seed, stream_id("start"));
  for (int i = 0; i < 30; ++i) {
    const auto to = static_cast<sim::Site>(start.below(sites.size()));
    engine.schedule_at_site(Time::ps(static_cast<int64_t>(start.below(5'000))), to, *sites[to], 12);
  }
}

Outcome collect(const std::vector<std::unique_ptr<SiteModel>>& sites, uint64_t fingerprint,
                uint64_t executed, Time end) {
  Outcome o{fingerprint, executed, end, {}};
  for (const auto& s : sites) o.traces.push_back(s->trace());
  return o;
}

Outcome run_serial(uint64_t seed) {
  auto sites = make_sites(seed);
  Engine engine;
  seed_events(engine, sites, seed);
  engine.run();
  return collect(sites, engine.fingerprint(), engine.events_executed(), engine.now());
}

Outcome run_partitioned(uint64_t seed, const std::vector<uint32_t>& owner) {
  auto sites = make_sites(seed);
  PartitionedEngine engines(owner, kLink);
  seed_events(engines.engine_of(0), sites, seed);
  const uint64_t ran = engines.run();
  EXPECT_EQ(ran, engines.events_executed());
  EXPECT_TRUE(engines.idle());
  return collect(sites, engines.fingerprint(), engines.events_executed(), engines.now());
}

void expect_same(const Outcome& serial, const Outcome& parallel) {
  EXPECT_EQ(parallel.executed, serial.executed);
  EXPECT_EQ(parallel.fingerprint, serial.fingerprint);
  EXPECT_EQ(parallel.end, serial.end);
  EXPECT_EQ(parallel.traces, serial.traces);
}

TEST(PartitionedEngine, EveryCutAndThreadCountGivesTheSerialRun) {
  for (uint64_t seed : {7, 2024}) {
    const Outcome serial = run_serial(seed);
    ASSERT_GT(serial.executed, 10'000u);
    for (uint32_t partitions : {1u, 2u, 3u, 4u, 8u}) {
      // Cuts of the twin pairs: contiguous blocks, pair k in partition k mod n, at random.
      std::vector<uint32_t> blocks(kSites);
      std::vector<uint32_t> striped(kSites);
      Rng shuffle(seed, partitions);
      std::vector<uint32_t> scattered(kSites);
      for (uint32_t i = 0; i < kSites; i += 2) {
        const uint32_t pair = i / 2;
        const uint32_t random = static_cast<uint32_t>(shuffle.below(partitions));
        for (uint32_t twin : {i, i + 1}) {
          blocks[twin] = pair * partitions / (kSites / 2);
          striped[twin] = pair % partitions;
          scattered[twin] = random;
        }
      }
      for (const auto* owner : {&blocks, &striped, &scattered}) {
        SCOPED_TRACE(testing::Message() << "seed " << seed << ", " << partitions << " partitions");
        expect_same(serial, run_partitioned(seed, *owner));
      }
    }
  }
}

// The sum that makes partitions add up must still see which events ran: a changed time or key
// changes it.
TEST(PartitionedEngine, FingerprintTellsDifferentRunsApart) {
  EXPECT_NE(run_serial(7).fingerprint, run_serial(8).fingerprint);
}

class Echo final : public EventHandler {
 public:
  void on_event(Engine& engine, uint64_t payload) override {
    if (payload == 1) engine.schedule_at_site(engine.now() + Time::ps(10), 1, *this, 0);
    if (payload == 2) throw std::runtime_error("model failed");
  }
};

TEST(PartitionedEngine, AnEventInsideTheLookaheadIsRefused) {
  Echo echo;
  PartitionedEngine engines({0, 1}, Time::ns(1));
  engines.engine_of(0).schedule_at_site(Time::ns(5), 0, echo, 1);
  EXPECT_THROW(engines.run(), std::logic_error);
}

TEST(PartitionedEngine, AModelErrorInAnyPartitionIsRethrown) {
  Echo echo;
  PartitionedEngine engines({0, 1, 1}, Time::ns(1));
  engines.engine_of(0).schedule_at_site(Time::ns(5), 2, echo, 2);
  engines.engine_of(0).schedule_at_site(Time::ns(50), 0, echo, 0);
  EXPECT_THROW(engines.run(), std::runtime_error);
}

TEST(PartitionedEngine, KeysOfASiteAreTakenOnlyInItsPartition) {
  Echo echo;
  PartitionedEngine engines({1, 0}, Time::ns(1));
  // Site 0 belongs to partition 1: partition 0 has no count for it.
  EXPECT_THROW(engines.engine(0).schedule_at_site(Time::ns(5), 1, echo, 0), std::logic_error);
  EXPECT_NO_THROW(engines.engine_of(0).schedule_at_site(Time::ns(5), 1, echo, 0));
}

TEST(PartitionedEngine, TwoPartitionsNeedAPositiveLookahead) {
  EXPECT_THROW(PartitionedEngine({0, 1}, Time::zero()), std::invalid_argument);
  EXPECT_NO_THROW(PartitionedEngine({0, 0}, Time::zero()));
}

}  // namespace
}  // namespace dtsim::sim
