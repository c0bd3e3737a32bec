// Progress: a one-line progress bar on stderr for long runs. It draws only when enabled (the
// caller passes `!quiet && Progress::stderr_is_terminal()`) and only once the run has taken more
// than a second, so short runs and pipes stay clean. advance() is cheap enough for a hot loop:
// an atomic add, and a clock read only every 1024 calls.
//   Progress p(sizes.size(), "all_reduce sweep", !options.quiet && Progress::stderr_is_terminal());
//   for (...) { ...; p.advance(); }
//   p.set_note("1.2 ms simulated");  // shown after the bar at its next redraw
//   p.finish();   // clears the line (the destructor does too)
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <string>

namespace dtsim::runner {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  Progress(int64_t total, std::string label, bool enabled);
  // For tests: draws to `out` and reads time from `now`.
  Progress(int64_t total, std::string label, bool enabled, std::ostream& out,
           std::function<Clock::time_point()> now);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Records `n` more units done; may be called from several threads.
  void advance(int64_t n = 1);
  // Counts whole items of `units` units each (the bar still moves by units): a sweep's rows
  // advance by the thousandths of their bytes delivered and the line reads rows done. Set before
  // the first advance.
  void set_units_per_item(int64_t units) { units_per_item_ = units > 0 ? units : 1; }
  // A short text after the bar (the simulated time a run has reached), drawn now if a redraw is
  // due; from any thread.
  void set_note(std::string note);
  // Erases the bar if one was drawn; later advances draw nothing.
  void finish();

  int64_t done() const { return done_.load(std::memory_order_relaxed); }
  static bool stderr_is_terminal();

 private:
  void maybe_draw(bool force);

  int64_t total_;
  std::string label_;
  std::string note_;
  int64_t units_per_item_ = 1;
  bool enabled_;
  std::ostream* out_;
  std::function<Clock::time_point()> now_;
  Clock::time_point start_;
  Clock::time_point last_draw_;
  std::atomic<int64_t> done_{0};
  std::atomic<int64_t> calls_{0};
  std::mutex draw_mutex_;
  bool drawn_ = false;
  bool finished_ = false;
};

}  // namespace dtsim::runner
