#include "runner/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>

namespace dtsim::runner {
namespace {

// Below this a run is short enough that a bar would only flicker.
constexpr auto kQuietPeriod = std::chrono::seconds(1);
constexpr auto kRedrawEvery = std::chrono::milliseconds(100);
constexpr int64_t kCallsPerClockRead = 1024;
constexpr int kBarWidth = 30;

}  // namespace

Progress::Progress(int64_t total, std::string label, bool enabled)
    : Progress(total, std::move(label), enabled, std::cerr, [] { return Clock::now(); }) {}

Progress::Progress(int64_t total, std::string label, bool enabled, std::ostream& out,
                   std::function<Clock::time_point()> now)
    : total_(std::max<int64_t>(total, 0)),
      label_(std::move(label)),
      enabled_(enabled),
      out_(&out),
      now_(std::move(now)),
      start_(enabled ? now_() : Clock::time_point{}),
      last_draw_(start_) {}

Progress::~Progress() { finish(); }

bool Progress::stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

void Progress::advance(int64_t n) {
  done_.fetch_add(n, std::memory_order_relaxed);
  if (!enabled_) return;
  const int64_t calls = calls_.fetch_add(1, std::memory_order_relaxed) + 1;
  // Few, long steps (a sweep's sizes) read the clock every time; many short ones every 1024th.
  if (total_ > kCallsPerClockRead && calls % kCallsPerClockRead != 0 && done() < total_) return;
  maybe_draw(false);
}

void Progress::set_note(std::string note) {
  if (!enabled_) return;
  {
    std::lock_guard lock(draw_mutex_);
    note_ = std::move(note);
  }
  maybe_draw(false);
}

void Progress::maybe_draw(bool force) {
  std::unique_lock lock(draw_mutex_, std::try_to_lock);
  if (!lock.owns_lock() || finished_) return;
  const auto now = now_();
  if (now - start_ <= kQuietPeriod) return;
  if (!force && drawn_ && now - last_draw_ < kRedrawEvery) return;
  last_draw_ = now;
  drawn_ = true;
  const int64_t done_now = std::min(done(), total_);
  const double fraction = total_ > 0 ? static_cast<double>(done_now) / static_cast<double>(total_) : 0.0;
  const int filled = static_cast<int>(fraction * kBarWidth);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // Time left from the mean time per unit so far; unknown until the first unit is done.
  const std::string left =
      done_now > 0 && done_now < total_
          ? fmt::format(", {:.0f}s left", elapsed / static_cast<double>(done_now) *
                                              static_cast<double>(total_ - done_now))
          : "";
  *out_ << fmt::format("\r{} [{}{}] {}/{} {:3.0f}% {:.1f}s{}{}{}", label_, std::string(static_cast<size_t>(filled), '#'),
                       std::string(static_cast<size_t>(kBarWidth - filled), ' '), done_now / units_per_item_,
                       total_ / units_per_item_, fraction * 100, elapsed, left, note_.empty() ? "" : ", ", note_)
        << "\x1b[K" << std::flush;
}

void Progress::finish() {
  std::lock_guard lock(draw_mutex_);
  if (finished_) return;
  finished_ = true;
  // Erase the bar so that whatever comes next on the terminal starts on a clean line.
  if (drawn_) *out_ << "\r\x1b[2K" << std::flush;
}

}  // namespace dtsim::runner
