// Engine throughput: self-rescheduling handlers, each event of which, when it fires, schedules its
// successor on the same handler after an exponential delay, so N events stay pending. Reports
// executed events per second on one core, handler call and fingerprint included. With one handler
// per event the handler objects add their own cache misses at large N; with one shared handler
// only the engine and its queue are measured. Results are in bench/sim.md.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sim/engine.h"
#include "sim/rng.h"

namespace dtsim::sim {
namespace {

constexpr double kMeanDelayPs = 1e6;

// Delays drawn once, so the handler costs one table read rather than a logarithm.
class Delays {
 public:
  Delays() : table_(kSize) {
    Rng rng(1, stream_id("engine-delays"));
    for (Time& t : table_) t = Time::ps(static_cast<int64_t>(rng.exponential(kMeanDelayPs)));
  }
  Time next() { return table_[i_++ & (kSize - 1)]; }

 private:
  static constexpr size_t kSize = size_t{1} << 16;
  std::vector<Time> table_;
  size_t i_ = 0;
};

class SelfRescheduling final : public EventHandler {
 public:
  explicit SelfRescheduling(Delays& delays) : delays_(&delays) {}
  void on_event(Engine& engine, uint64_t payload) override {
    ++fired_;
    engine.schedule_in(delays_->next(), *this, payload);
  }
  uint64_t fired() const { return fired_; }

 private:
  Delays* delays_;
  uint64_t fired_ = 0;
};

// Arguments: pending events, handler objects they are spread over.
void BM_EngineSelfRescheduling(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  const auto handler_count = static_cast<size_t>(state.range(1));
  Delays delays;
  std::vector<SelfRescheduling> handlers(handler_count, SelfRescheduling(delays));
  Engine engine;
  for (size_t i = 0; i < n; ++i) engine.schedule_in(delays.next(), handlers[i % handler_count], i);

  // Each iteration advances simulated time by a window that holds about 64k events at any N.
  const Time window =
      Time::ps(static_cast<int64_t>(65'536 * kMeanDelayPs / static_cast<double>(n)));
  uint64_t executed = 0;
  for (auto _ : state) executed += engine.run(engine.now() + window);
  state.SetItemsProcessed(static_cast<int64_t>(executed));
  benchmark::DoNotOptimize(engine.fingerprint());
}

BENCHMARK(BM_EngineSelfRescheduling)
    ->ArgNames({"pending", "handlers"})
    ->Args({1'000, 1'000})
    ->Args({100'000, 100'000})
    ->Args({1'000'000, 1'000'000})
    ->Args({1'000, 1})
    ->Args({100'000, 1})
    ->Args({1'000'000, 1});

}  // namespace
}  // namespace dtsim::sim
