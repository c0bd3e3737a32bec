// Wall-clock limits for long runs. A WallDeadline is shared by every engine of one run (the rows
// of a sweep run side by side): once its limit has passed it stays passed, so each engine's watch
// stops its run at its next clock read (--max-wall). A ClockSampler reads the clock about every
// 10 ms of work whatever one event costs (a packet hop and a max-min solve of many flows differ
// by orders of magnitude), so a watch called after every event costs a counter increment.
//   sim::WallDeadline deadline(30.0);           // seconds; WallDeadline{} has no limit
//   sim::ClockSampler clock;
//   if (auto now = clock.sample(); now && deadline.passed(*now)) stop...
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

namespace dtsim::sim {

using WallClock = std::chrono::steady_clock;

class WallDeadline {
 public:
  WallDeadline() = default;  // no limit
  // A limit of `seconds` (> 0) from now.
  explicit WallDeadline(double seconds);

  bool has_limit() const { return deadline_.has_value(); }
  double limit_s() const { return limit_s_; }
  // Whether the limit has passed at `now`; once it has, it has for every caller, on every thread.
  bool passed(WallClock::time_point now);
  // Whether some caller has seen it pass.
  bool expired() const { return expired_.load(std::memory_order_relaxed); }

 private:
  std::optional<WallClock::time_point> deadline_;
  double limit_s_ = 0;
  std::atomic<bool> expired_{false};
};

class ClockSampler {
 public:
  ClockSampler() : last_(WallClock::now()) {}
  // The time, on about one call in every stride (none on the others); the stride doubles while
  // reads come less than 5 ms apart and halves while they come more than 20 ms apart.
  std::optional<WallClock::time_point> sample() {
    if (skip()) return std::nullopt;
    return read();
  }
  // sample() in two steps, for a caller called after every event (no optional to pass through
  // its frame): true on the calls sample() would answer with nothing; on the others the caller
  // calls read().
  bool skip() { return ++calls_ < stride_; }
  // The time, with the stride fitted to how long the calls since the last read took.
  WallClock::time_point read();

 private:
  uint64_t calls_ = 0;
  uint64_t stride_ = 1;
  WallClock::time_point last_;
};

}  // namespace dtsim::sim
