// EventQueue: pending events, popped in (time, key) order, with no constraint on what is pushed.
// An implicit 4-ary min-heap: sift-down touches half the levels a binary heap does. The engine
// uses RadixEventQueue, which is faster but needs pushes that never precede the last pop.
#pragma once

#include <cstddef>
#include <vector>

#include "sim/event.h"

namespace dtsim::sim {

class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  void reserve(size_t n) { heap_.reserve(n); }
  const Event& top() const { return heap_.front(); }

  void push(const Event& e);
  Event pop();
  // pop() then push(e), in one sift: returns the old minimum.
  Event replace_top(const Event& e);

 private:
  static constexpr size_t kArity = 4;
  void sift_up(size_t i, Event e);
  void sift_down(size_t i, Event e);
  std::vector<Event> heap_;
};

}  // namespace dtsim::sim
