#include "sim/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <queue>
#include <vector>

#include "sim/radix_event_queue.h"
#include "sim/rng.h"

namespace dtsim::sim {
namespace {

Event at(int64_t ps, uint64_t key) {
  return Event{Time::ps(ps), key, nullptr, key};
}

template <class Queue>
std::vector<Event> drain(Queue& q) {
  std::vector<Event> out;
  while (!q.empty()) out.push_back(q.pop());
  return out;
}

::testing::AssertionResult same_order(const std::vector<Event>& got,
                                      const std::vector<Event>& want) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure()
           << "popped " << got.size() << " events, expected " << want.size();
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].time != want[i].time || got[i].key != want[i].key) {
      return ::testing::AssertionFailure()
             << "pop " << i << " gave (" << got[i].time.ps() << ", " << got[i].key
             << "), expected (" << want[i].time.ps() << ", " << want[i].key << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

template <class Queue>
class EventQueueTest : public ::testing::Test {};
using Queues = ::testing::Types<EventQueue, RadixEventQueue>;
TYPED_TEST_SUITE(EventQueueTest, Queues);

TYPED_TEST(EventQueueTest, PopsRandomEventsInTimeThenKeyOrder) {
  Rng rng(7, stream_id("queue-random"));
  std::vector<uint64_t> keys(20'000);
  std::iota(keys.begin(), keys.end(), uint64_t{0});
  std::shuffle(keys.begin(), keys.end(), rng);
  std::vector<Event> events;
  events.reserve(keys.size());
  // A narrow range of times, negative ones included, so many events tie and the key decides.
  for (uint64_t key : keys)
    events.push_back(at(static_cast<int64_t>(rng.below(2'000)) - 1'000, key));

  TypeParam q;
  for (const Event& e : events) q.push(e);
  EXPECT_EQ(q.size(), events.size());
  std::sort(events.begin(), events.end(), before);
  EXPECT_TRUE(same_order(drain(q), events));
}

TYPED_TEST(EventQueueTest, TiesAtEqualTimeBreakByKey) {
  TypeParam q;
  for (uint64_t key : {5, 3, 9, 1, 7}) q.push(at(100, key));
  q.push(at(99, 100));
  EXPECT_TRUE(same_order(
      drain(q), {at(99, 100), at(100, 1), at(100, 3), at(100, 5), at(100, 7), at(100, 9)}));
}

TYPED_TEST(EventQueueTest, TopIsTheNextEventToPop) {
  TypeParam q;
  q.push(at(30, 1));
  q.push(at(10, 2));
  q.push(at(20, 3));
  EXPECT_EQ(q.top().key, 2u);
  q.pop();
  EXPECT_EQ(q.top().key, 3u);
  EXPECT_EQ(q.pop().key, 3u);
}

TYPED_TEST(EventQueueTest, ExtremeTimesAndKeysKeepTheirOrder) {
  TypeParam q;
  const uint64_t big = UINT64_MAX;
  q.push(at(INT64_MAX, 0));
  q.push(at(0, big));
  q.push(at(INT64_MIN, big));
  q.push(at(0, big - 1));
  q.push(at(INT64_MIN, 0));
  EXPECT_TRUE(same_order(drain(q), {at(INT64_MIN, 0), at(INT64_MIN, big), at(0, big - 1),
                                    at(0, big), at(INT64_MAX, 0)}));
}

// Pushes `initial` into `q` and a binary heap, then pops `pops` events from both, each the same,
// pushing after each pop the events `next(popped, q.size())` gives into both.
template <class Queue, class Next>
void hold_against_a_heap(Queue& q, const std::vector<Event>& initial, int pops, Next next) {
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return before(b, a); }
  };
  std::priority_queue<Event, std::vector<Event>, Later> reference;
  for (const Event& e : initial) {
    q.push(e);
    reference.push(e);
  }
  for (int i = 0; i < pops; ++i) {
    const Event got = q.pop();
    const Event want = reference.top();
    reference.pop();
    ASSERT_EQ(got.time, want.time) << "at pop " << i;
    ASSERT_EQ(got.key, want.key) << "at pop " << i;
    for (const Event& e : next(got, q.size())) {
      q.push(e);
      reference.push(e);
    }
  }
  EXPECT_EQ(q.size(), reference.size());
}

// The engine's pattern: pop the minimum, then push events no earlier than it, many at equal
// times, with growing keys. Checked against a binary heap at every pop.
TYPED_TEST(EventQueueTest, HoldSequenceMatchesABinaryHeap) {
  TypeParam q;
  Rng rng(11, stream_id("queue-hold"));
  uint64_t key = 0;
  std::vector<Event> initial;
  for (int i = 0; i < 1'000; ++i) initial.push_back(at(static_cast<int64_t>(rng.below(1'000'000)), key++));
  hold_against_a_heap(q, initial, 200'000, [&](const Event& got, size_t pending) {
    // Zero, one or two successors, so the queue size wanders; delays span 1 ps to 2^40 ps.
    std::vector<Event> next;
    const uint64_t successors = rng.below(3) + (pending < 10 ? 1 : 0);
    for (uint64_t s = 0; s < successors; ++s) {
      const uint64_t shift = rng.below(41);
      const auto delay = static_cast<int64_t>(rng.below(2) == 0 ? 0 : rng.below(uint64_t{1} << shift));
      next.push_back(at(got.time.ps() + delay, key++));
    }
    return next;
  });
}

// A packet run's pattern: ports in step, so crowds of events share an instant, their keys in no
// order (a key names the scheduling site first); an event for the instant being run has a key
// above every other of it (the engine's next generation). Checked against a binary heap.
TYPED_TEST(EventQueueTest, CrowdsAtOneInstantMatchABinaryHeap) {
  TypeParam q;
  Rng rng(13, stream_id("queue-crowds"));
  uint64_t now_key = uint64_t{1} << 63;  // keys of events for the running instant: above the rest
  const auto random_key = [&] { return rng.below(uint64_t{1} << 62); };
  std::vector<Event> initial;
  for (int i = 0; i < 600; ++i) initial.push_back(at(static_cast<int64_t>(rng.below(8)) * 327'680, random_key()));
  hold_against_a_heap(q, initial, 200'000, [&](const Event& got, size_t pending) {
    std::vector<Event> next;
    const uint64_t successors = rng.below(3) + (pending < 300 ? 1 : 0);
    for (uint64_t s = 0; s < successors; ++s) {
      const uint64_t kind = rng.below(8);
      const int64_t delay =
          kind == 0 ? 0 : kind < 4 ? 327'680 : static_cast<int64_t>(rng.below(4) + 1) * 1'000'000 + 327'680;
      next.push_back(at(got.time.ps() + delay, delay == 0 ? ++now_key : random_key()));
    }
    return next;
  });
}

// Crowds of one instant pushed in key order, as a packet run's ports in step schedule them, some
// above the radix queue's run size (kRunMax, 512) and sharing buckets with other instants, and some
// pushed out of order.
TYPED_TEST(EventQueueTest, CrowdsPushedInKeyOrderMatchABinaryHeap) {
  TypeParam q;
  Rng rng(17, stream_id("queue-ordered-crowds"));
  uint64_t next_key = 1;
  std::vector<Event> initial;
  for (int i = 0; i < 300; ++i) initial.push_back(at(0, next_key++));
  for (int i = 0; i < 400; ++i) initial.push_back(at(327'680, next_key++));
  for (int i = 0; i < 100; ++i) initial.push_back(at(1'000'000, next_key++));
  hold_against_a_heap(q, initial, 200'000, [&](const Event& got, size_t /*pending*/) {
    const uint64_t kind = rng.below(16);
    const int64_t delay = kind < 10 ? 327'680 : kind < 15 ? 1'000'000 : static_cast<int64_t>(rng.below(3)) * 65'536;
    const uint64_t key = kind == 15 ? (rng.below(uint64_t{1} << 20) << 40) | next_key++ : next_key++;
    return std::vector<Event>{at(got.time.ps() + delay, delay == 0 ? (uint64_t{1} << 63) + next_key++ : key)};
  });
}

// Batches of a few crowds, each pushed in key order, of nearby instants (one radix bucket) and
// keys that interleave: the radix queue merges such ascending sequences into its run, and sorts
// a batch of more than it merges (1 to 12 sequences here). Checked against a binary heap.
TYPED_TEST(EventQueueTest, CrowdsOfSeveralOrderedSequencesMatchABinaryHeap) {
  TypeParam q;
  Rng rng(19, stream_id("queue-sequences"));
  uint64_t serial = 0;
  const auto batch = [&](int64_t from) {
    std::vector<Event> out;
    const uint64_t sequences = rng.below(12) + 1;
    for (uint64_t s = 0; s < sequences; ++s) {
      const int64_t instant = from + static_cast<int64_t>(rng.below(4)) * 16'960;
      const uint64_t first = rng.below(1'000);
      const uint64_t events = rng.below(80) + 1;
      for (uint64_t j = 0; j < events; ++j) out.push_back(at(instant, ((first + j) << 24) | (serial++ & 0xffffff)));
    }
    return out;
  };
  hold_against_a_heap(q, batch(0), 100'000, [&](const Event& got, size_t pending) {
    return pending == 0 ? batch(got.time.ps() + 1'000'000) : std::vector<Event>{};
  });
}

// A packet run's keys: each event is keyed by the site that scheduled it and that site's own
// count, sites in step at a few nearby instants, so a radix bucket holds many sites' events in no
// order, each site's mostly in the order of its count; now and then a site queues an event under a
// key it took earlier (a port's finish), after events it numbered later. Sites numbered 0-149
// (the radix queue counts such a run by site in one pass), 0-29,999 (two passes), spread over
// 2^20 (too many bits: sorted); sites whose events come in no order, 150 of them (a few out of
// place) and 3 (too many: sorted). Checked against a binary heap.
template <class Queue>
void hold_sites_in_step(uint64_t sites, uint64_t site_stride, bool shuffled, uint64_t seed) {
  Queue q;
  Rng rng(seed, stream_id("queue-sites"));
  std::vector<uint64_t> sequence(sites, 0);
  std::vector<uint64_t> held(sites, UINT64_MAX);  // a key taken earlier, queued at the site's next turn
  const auto key_of = [&](uint64_t site) {
    return make_key(static_cast<Site>(site * site_stride), shuffled ? rng.below(1 << 20) : sequence[site]++);
  };
  // Zero-delay events are of the generation after the popped one's, as the engine keys them.
  const auto successors = [&](int64_t now, uint64_t generation, uint64_t site) {
    std::vector<Event> out;
    const uint64_t kind = rng.below(16);
    const int64_t lattice = 327'680 * static_cast<int64_t>(rng.below(3) + 1) + static_cast<int64_t>(rng.below(2));
    if (held[site] != UINT64_MAX) {
      out.push_back(at(now + lattice, held[site]));
      held[site] = UINT64_MAX;
    }
    if (kind == 0) {
      held[site] = key_of(site);
    } else if (kind == 1) {
      out.push_back(at(now, with_generation(key_of(site), std::min(generation + 1, kMaxGeneration))));
    } else {
      out.push_back(at(now + 1'000'000 + lattice, key_of(site)));
      if (kind < 6) out.push_back(at(now + lattice, key_of(site)));
    }
    return out;
  };
  std::vector<Event> initial;
  for (uint64_t s = 0; s < sites && initial.size() < 2'000; ++s) initial.push_back(at(0, key_of(s)));
  hold_against_a_heap(q, initial, 150'000, [&](const Event& got, size_t pending) {
    const uint64_t generation = key_generation(got.key);
    std::vector<Event> next = successors(got.time.ps(), generation, rng.below(sites));
    if (pending < 500) {
      for (const Event& e : successors(got.time.ps(), generation, rng.below(sites))) next.push_back(e);
    }
    return next;
  });
}

TYPED_TEST(EventQueueTest, SitesInStepMatchABinaryHeap) {
  hold_sites_in_step<TypeParam>(150, 1, false, 29);
  hold_sites_in_step<TypeParam>(30'000, 1, false, 31);
  hold_sites_in_step<TypeParam>(300, 3'000, false, 37);
  hold_sites_in_step<TypeParam>(150, 1, true, 41);
  hold_sites_in_step<TypeParam>(3, 1, true, 43);
}

// A flow model's completions of one solve: crowds of hundreds to thousands of events of one
// instant, more than the radix queue sorts into a run (kRunMax, 512), sharing a bucket with
// events of nearby later instants, pushed in key order or shuffled; the next crowd arrives while
// the last drains, beside successors at and after the popped instant. Checked against a binary
// heap.
TYPED_TEST(EventQueueTest, CrowdsLargerThanARunMatchABinaryHeap) {
  TypeParam q;
  Rng rng(23, stream_id("queue-large-crowds"));
  uint64_t serial = 0;
  const auto crowd = [&](int64_t from) {
    std::vector<Event> out;
    const int64_t instant = from + static_cast<int64_t>(rng.below(1'000));
    const uint64_t events = 400 + rng.below(4'000);
    for (uint64_t j = 0; j < events; ++j) out.push_back(at(instant, serial++));
    for (uint64_t j = 0; j < 300; ++j) {
      out.push_back(at(instant + static_cast<int64_t>(rng.below(4'096)), serial++));
    }
    if (rng.below(2) == 0) {
      for (size_t j = out.size() - 1; j > 0; --j) std::swap(out[j], out[rng.below(j + 1)]);
    }
    return out;
  };
  hold_against_a_heap(q, crowd(0), 150'000, [&](const Event& got, size_t pending) {
    std::vector<Event> next;
    if (pending < 1'000 && rng.below(200) == 0) next = crowd(got.time.ps() + 1'000'000);
    if (pending == 0 || rng.below(4) == 0) {
      next.push_back(at(got.time.ps() + static_cast<int64_t>(rng.below(3)) * 4'096, serial++));
    }
    return next;
  });
}

TEST(RadixEventQueue, PopUntilLeavesLaterEventsAndAcceptsEarlierPushes) {
  RadixEventQueue q;
  q.push(at(10, 1));
  q.push(at(20, 2));
  Event e;
  ASSERT_TRUE(q.pop_until(Time::ps(12), e));
  EXPECT_EQ(e.key, 1u);
  EXPECT_FALSE(q.pop_until(Time::ps(12), e));
  EXPECT_EQ(q.size(), 1u);
  // After the failed pop, a push between the last pop and the pending minimum is still allowed
  // (the engine schedules at now() == until) and comes out first.
  q.push(at(12, 3));
  ASSERT_TRUE(q.pop_until(Time::ps(20), e));
  EXPECT_EQ(e.key, 3u);
  ASSERT_TRUE(q.pop_until(Time::ps(20), e));
  EXPECT_EQ(e.key, 2u);
  EXPECT_TRUE(q.empty());
}

TEST(RadixEventQueue, PopUntilOnAnEmptyQueueIsFalse) {
  RadixEventQueue q;
  Event e;
  EXPECT_FALSE(q.pop_until(Time::max(), e));
  q.push(at(1, 1));
  EXPECT_TRUE(q.pop_until(Time::max(), e));
  EXPECT_FALSE(q.pop_until(Time::max(), e));
}

TEST(RadixEventQueue, PeekingDoesNotMoveTheReference) {
  RadixEventQueue q;
  q.push(at(10, 1));
  q.push(at(1'000, 2));
  EXPECT_EQ(q.pop().key, 1u);
  EXPECT_EQ(q.top().key, 2u);
  q.push(at(500, 3));
  EXPECT_EQ(q.pop().key, 3u);
  EXPECT_EQ(q.pop().key, 2u);
}

TEST(RadixEventQueue, EventsEqualToTheLastPoppedArePopped) {
  RadixEventQueue q;
  q.push(at(10, 4));
  EXPECT_EQ(q.pop().key, 4u);
  q.push(at(10, 4));
  q.push(at(10, 5));
  EXPECT_EQ(q.pop().key, 4u);
  EXPECT_EQ(q.pop().key, 5u);
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace dtsim::sim
