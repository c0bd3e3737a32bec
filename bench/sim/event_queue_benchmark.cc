// Hold-model benchmark of the event queues: with N events pending, each operation pops the minimum
// and pushes a successor at its time plus an exponential increment, the pattern of a discrete-event
// engine in steady state. std::priority_queue (a binary heap) is the baseline on the same machine.
// Results and the command that produced them are in bench/sim.md.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <queue>
#include <vector>

#include "sim/event.h"
#include "sim/event_queue.h"
#include "sim/radix_event_queue.h"
#include "sim/rng.h"

namespace dtsim::sim {
namespace {

constexpr double kMeanIncrementPs = 1e6;

// A fixed table of increments, so every queue sees the same times and the RNG's cost is not timed.
class Increments {
 public:
  Increments() : table_(kSize) {
    Rng rng(1, stream_id("hold-increments"));
    for (Time& t : table_) t = Time::ps(static_cast<int64_t>(rng.exponential(kMeanIncrementPs)));
  }
  Time next() { return table_[i_++ & (kSize - 1)]; }

 private:
  static constexpr size_t kSize = size_t{1} << 16;
  std::vector<Time> table_;
  size_t i_ = 0;
};

struct Later {
  bool operator()(const Event& a, const Event& b) const { return before(b, a); }
};

// The baseline: the standard library's binary heap with the same (time, key) order.
class BinaryHeapQueue {
 public:
  void push(const Event& e) { heap_.push(e); }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
};

template <class Queue>
void fill(Queue& q, int64_t n, Increments& inc) {
  for (int64_t i = 0; i < n; ++i) {
    q.push(Event{inc.next(), static_cast<uint64_t>(i), nullptr, 0});
  }
}

template <class Queue>
void BM_HoldPopPush(benchmark::State& state) {
  const int64_t n = state.range(0);
  Increments inc;
  Queue q;
  fill(q, n, inc);
  auto key = static_cast<uint64_t>(n);
  for (auto _ : state) {
    Event e = q.pop();
    e.time = e.time + inc.next();
    e.key = key++;
    q.push(e);
  }
  state.SetItemsProcessed(state.iterations());
}

// The d-ary heap's one-sift hold: the successor replaces the minimum in place.
void BM_HoldReplaceTop_DaryHeap(benchmark::State& state) {
  const int64_t n = state.range(0);
  Increments inc;
  EventQueue q;
  fill(q, n, inc);
  auto key = static_cast<uint64_t>(n);
  for (auto _ : state) {
    Event e = q.top();
    e.time = e.time + inc.next();
    e.key = key++;
    benchmark::DoNotOptimize(q.replace_top(e));
  }
  state.SetItemsProcessed(state.iterations());
}

void pending_sizes(benchmark::internal::Benchmark* b) {
  b->Arg(1'000)->Arg(100'000)->Arg(1'000'000);
}

BENCHMARK(BM_HoldPopPush<BinaryHeapQueue>)->Apply(pending_sizes);
BENCHMARK(BM_HoldPopPush<EventQueue>)->Apply(pending_sizes);
BENCHMARK(BM_HoldReplaceTop_DaryHeap)->Apply(pending_sizes);
BENCHMARK(BM_HoldPopPush<RadixEventQueue>)->Apply(pending_sizes);

}  // namespace
}  // namespace dtsim::sim
