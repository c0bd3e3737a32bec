// Progress: a one-line progress bar on stderr for long runs. It draws only when enabled (the
// caller passes `!quiet && Progress::stderr_is_terminal()`) and only once the run has taken more
// than a second, so short runs and pipes stay clean. advance() is cheap enough for a hot loop:
// an atomic add, and a clock read only every 1024 calls.
//   Progress p(sizes.size(), "all_reduce sweep", !options.quiet && Progress::stderr_is_terminal());
//   for (...) { ...; p.advance(); }
//   p.finish();   // clears the line (the destructor does too)
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <string>

namespace dtsim::apps {

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
  // Erases the bar if one was drawn; later advances draw nothing.
  void finish();

  int64_t done() const { return done_.load(std::memory_order_relaxed); }
  static bool stderr_is_terminal();

 private:
  void maybe_draw(bool force);

  int64_t total_;
  std::string label_;
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

}  // namespace dtsim::apps
