#include "sim/run_watch.h"

#include <stdexcept>

namespace dtsim::sim {
namespace {

constexpr auto kSoonest = std::chrono::milliseconds(5);
constexpr auto kLatest = std::chrono::milliseconds(20);
constexpr uint64_t kMaxStride = uint64_t{1} << 20;

}  // namespace

WallDeadline::WallDeadline(double seconds) : limit_s_(seconds) {
  if (!(seconds > 0)) throw std::invalid_argument("a wall-clock limit must be positive");
  deadline_ = WallClock::now() + std::chrono::duration_cast<WallClock::duration>(std::chrono::duration<double>(seconds));
}

bool WallDeadline::passed(WallClock::time_point now) {
  if (expired()) return true;
  if (!deadline_ || now < *deadline_) return false;
  expired_.store(true, std::memory_order_relaxed);
  return true;
}

WallClock::time_point ClockSampler::read() {
  calls_ = 0;
  const WallClock::time_point now = WallClock::now();
  const auto since = now - last_;
  if (since < kSoonest && stride_ < kMaxStride) {
    stride_ *= 2;
  } else if (since > kLatest && stride_ > 1) {
    stride_ /= 2;
  }
  last_ = now;
  return now;
}

}  // namespace dtsim::sim
