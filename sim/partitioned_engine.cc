#include "sim/partitioned_engine.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

namespace dtsim::sim {
namespace {

// The windows' barrier: a generation count under a mutex, which a waiter first polls for a while
// (windows are short, and a thread that sleeps at every barrier pays a wake-up each time) and then
// sleeps on. Written with a mutex and a condition variable so that ThreadSanitizer sees its
// ordering, and in place of libstdc++ 12's std::barrier, which can hang.
class WindowBarrier {
 public:
  explicit WindowBarrier(uint32_t threads) : threads_(threads) {}

  void arrive_and_wait() {
    std::unique_lock lock(mutex_);
    const uint64_t generation = generation_;
    if (++arrived_ == threads_) {
      arrived_ = 0;
      ++generation_;
      published_.store(generation_, std::memory_order_release);
      lock.unlock();
      wake_.notify_all();
      return;
    }
    lock.unlock();
    for (int spin = 0; spin < kSpins; ++spin) {
      if (published_.load(std::memory_order_acquire) != generation) return;
    }
    lock.lock();
    wake_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  static constexpr int kSpins = 4'000;
  const uint32_t threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  uint32_t arrived_ = 0;
  uint64_t generation_ = 0;
  std::atomic<uint64_t> published_{0};
};

}  // namespace

void PartitionTable::send(const Engine& from, uint32_t to, const Event& e) {
  if (!running) {
    Engine& dest = *engines[to];
    if (e.time < dest.now_) {
      throw std::logic_error("event scheduled in the past of its partition: at " + to_string(e.time) +
                             ", now " + to_string(dest.now_));
    }
    dest.queue_.push(e);
    return;
  }
  if (e.time < from.now_ + lookahead) {
    throw std::logic_error("event for another partition inside the lookahead: at " +
                           to_string(e.time) + ", now " + to_string(from.now_) + ", lookahead " +
                           to_string(lookahead));
  }
  outbox[size_t{from.partition_} * partitions + to].push_back(e);
}

PartitionedEngine::PartitionedEngine(std::vector<uint32_t> owner, Time lookahead) {
  uint32_t partitions = 1;
  for (uint32_t p : owner) partitions = std::max(partitions, p + 1);
  if (partitions > 1 && lookahead <= Time::zero()) {
    throw std::invalid_argument("partitioned engine: the lookahead must be positive");
  }
  table_.owner = std::move(owner);
  table_.partitions = partitions;
  table_.lookahead = lookahead;
  table_.outbox.resize(size_t{partitions} * partitions);
  for (uint32_t p = 0; p < partitions; ++p) {
    auto engine = std::make_unique<Engine>();
    engine->partitioned_ = &table_;
    engine->partition_ = p;
    table_.engines.push_back(std::move(engine));
  }
}

uint64_t PartitionedEngine::run() {
  const uint32_t n = table_.partitions;
  const auto& engines = table_.engines;
  if (n == 1) {
    engines[0]->set_watch(watch_);
    return engines[0]->run();
  }

  const uint64_t executed_before = events_executed();
  std::vector<Time> next(n);
  std::vector<std::exception_ptr> errors(n);  // written by its own partition any time
  std::vector<char> failing(n, 0);            // errors[p] as published before the barrier
  bool stop = false;  // partition 0's watch said so; written before a barrier, read after
  WindowBarrier sync(n);
  const Time last_ps = Time::ps(1);

  // Each window: publish the next pending time and whether this partition failed; after the
  // barrier every thread computes the same window start (the least of them) and failure state
  // from what was published (never from `errors`, which a fast partition may set meanwhile); run
  // up to the window's end; after the second barrier take in the events the others sent here.
  auto work = [&](uint32_t p) {
    Engine& engine = *engines[p];
    for (;;) {
      next[p] = engine.next_time();
      failing[p] = errors[p] != nullptr;
      sync.arrive_and_wait();
      Time start = Time::max();
      bool failed = false;
      for (uint32_t q = 0; q < n; ++q) {
        start = std::min(start, next[q]);
        failed = failed || failing[q] != 0;
      }
      if (failed || stop || start == Time::max()) return;
      try {
        engine.run(start + table_.lookahead - last_ps);
      } catch (...) {
        errors[p] = std::current_exception();
      }
      sync.arrive_and_wait();
      try {
        for (uint32_t q = 0; q < n; ++q) {
          auto& box = table_.outbox[size_t{q} * n + p];
          for (const Event& e : box) engine.queue_.push(e);
          box.clear();
        }
        if (p == 0 && watch_ != nullptr) stop = !watch_->keep_running(engine);
      } catch (...) {
        errors[p] = std::current_exception();
      }
    }
  };

  table_.running = true;
  {
    std::vector<std::jthread> threads;
    threads.reserve(n - 1);
    for (uint32_t p = 1; p < n; ++p) threads.emplace_back(work, p);
    work(0);
  }
  table_.running = false;
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return events_executed() - executed_before;
}

bool PartitionedEngine::idle() const {
  return std::all_of(table_.engines.begin(), table_.engines.end(),
                     [](const auto& e) { return e->idle(); });
}

Time PartitionedEngine::now() const {
  Time t;
  for (const auto& e : table_.engines) t = std::max(t, e->now());
  return t;
}

uint64_t PartitionedEngine::events_executed() const {
  uint64_t total = 0;
  for (const auto& e : table_.engines) total += e->events_executed();
  return total;
}

uint64_t PartitionedEngine::fingerprint() const {
  uint64_t f = kEmptyFingerprint;
  for (const auto& e : table_.engines) f += e->fingerprint() - kEmptyFingerprint;
  return f;
}

}  // namespace dtsim::sim
