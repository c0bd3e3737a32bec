// An event is a time, a stable ordering key, the handler to call and one word of payload. It is
// 32 bytes and owns nothing, so queues move events by value and the hot path never allocates.
// Handlers are objects the caller owns (a GPU stream, a link, a collective in flight); the
// payload says which of its pending things fired.
#pragma once

#include <cstdint>

#include "sim/units.h"

namespace dtsim::sim {

class Engine;

class EventHandler {
 public:
  virtual void on_event(Engine& engine, uint64_t payload) = 0;

 protected:
  ~EventHandler() = default;
};

struct Event {
  Time time;
  uint64_t key = 0;  // ties at equal time break by key: a stable, deterministic number
  EventHandler* handler = nullptr;
  uint64_t payload = 0;
};

// Strict order used by every queue: time, then key. Keys are unique within one engine.
inline bool before(const Event& a, const Event& b) {
  return a.time < b.time || (a.time == b.time && a.key < b.key);
}

}  // namespace dtsim::sim
