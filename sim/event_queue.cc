#include "sim/event_queue.h"

namespace dtsim::sim {

void EventQueue::push(const Event& e) {
  heap_.push_back(e);
  sift_up(heap_.size() - 1, e);
}

Event EventQueue::pop() {
  Event top = heap_.front();
  Event last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0, last);
  return top;
}

Event EventQueue::replace_top(const Event& e) {
  Event top = heap_.front();
  sift_down(0, e);
  return top;
}

void EventQueue::sift_up(size_t i, Event e) {
  while (i > 0) {
    size_t parent = (i - 1) / kArity;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::sift_down(size_t i, Event e) {
  const size_t n = heap_.size();
  for (;;) {
    size_t first = i * kArity + 1;
    if (first >= n) break;
    size_t last = first + kArity < n ? first + kArity : n;
    size_t best = first;
    for (size_t c = first + 1; c < last; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], e)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = e;
}

}  // namespace dtsim::sim
