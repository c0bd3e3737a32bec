#include "sim/engine.h"

#include <stdexcept>

namespace dtsim::sim {
namespace {

inline uint64_t fnv1a_word(uint64_t h, uint64_t word) {
  for (int i = 0; i < 8; ++i) {
    h ^= (word >> (8 * i)) & 0xffu;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

void Engine::schedule_keyed(Time at, uint64_t key, EventHandler& handler, uint64_t payload) {
  if (at < now_) {
    throw std::logic_error("event scheduled in the past: at " + to_string(at) + ", now " +
                           to_string(now_));
  }
  if (key >= next_key_) throw std::logic_error("event scheduled with a key take_key() did not give");
  queue_.push(Event{at, key, &handler, payload});
}

uint64_t Engine::run(Time until) {
  stop_requested_ = false;
  uint64_t count = 0;
  Event e;
  while (queue_.pop_until(until, e)) {
    now_ = e.time;
    fingerprint_ = fnv1a_word(fnv1a_word(fingerprint_, static_cast<uint64_t>(e.time.ps())), e.key);
    ++executed_;
    ++count;
    e.handler->on_event(*this, e.payload);
    if (stop_requested_) return count;
    if (watch_ != nullptr && !watch_->keep_running(*this)) return count;
  }
  if (!queue_.empty() && until > now_ && until != Time::max()) now_ = until;
  return count;
}

uint64_t combine_fingerprints(std::span<const uint64_t> fingerprints) {
  uint64_t h = kEmptyFingerprint;
  for (uint64_t f : fingerprints) h = fnv1a_word(h, f);
  return h;
}

}  // namespace dtsim::sim
