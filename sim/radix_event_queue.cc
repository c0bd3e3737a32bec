#include "sim/radix_event_queue.h"

#include <algorithm>
#include <array>

namespace dtsim::sim {

RadixEventQueue::Chunk* RadixEventQueue::fresh_chunk() {
  if (spare_ == spare_end_) {
    spare_ = static_cast<Chunk*>(arena_.take(sizeof(Chunk) * kGroupChunks));
    spare_end_ = spare_ + kGroupChunks;
  }
  return spare_++;
}

size_t RadixEventQueue::lowest_bucket() const {
  const auto word = static_cast<size_t>(std::countr_zero(occupied_words_));
  return word * 64 + static_cast<size_t>(std::countr_zero(occupied_[word]));
}

const Event& RadixEventQueue::minimum_of(const Chunk* last) const {
  const Chunk* c = last->next;
  const Event* best = &c->events[0];
  for (;; c = c->next) {
    for (uint32_t i = 0; i < c->count; ++i) {
      if (before(c->events[i], *best)) best = &c->events[i];
    }
    if (c == last) return *best;
  }
}

const Event& RadixEventQueue::top() const {
  if (!equal_.empty()) return equal_.back();
  if (!run_.empty()) return run_.back();
  return minimum_of(buckets_[lowest_bucket()]);
}

void RadixEventQueue::join_run(const Event& e) {
  if (before(e, run_.back())) {  // below every event of the run: popped first
    run_.push_back(e);
    return;
  }
  const auto at = std::upper_bound(run_.begin(), run_.end(), e,
                                   [](const Event& a, const Event& z) { return before(z, a); });
  run_.insert(at, e);
}

void RadixEventQueue::release_bucket(size_t b) {
  occupied_[b / 64] &= ~(uint64_t{1} << (b % 64));
  if (occupied_[b / 64] == 0) occupied_words_ &= ~(uint64_t{1} << (b / 64));
}

bool RadixEventQueue::pop_from_buckets(Time until, Event& out) {
  if (size_ == 0) return false;
  const size_t b = lowest_bucket();
  Chunk* const last = buckets_[b];
  Chunk* const first = last->next;

  // With few events pending, the lowest bucket usually holds one event: pop it where it lies.
  if (first == last && last->count == 1) {
    const Event& only = last->events[0];
    if (only.time > until) return false;
    set_last(only);
    out = only;
    release_bucket(b);
    free_chunk(last);
    --size_;
    return true;
  }

  // A small bucket: sorted into the run, its least popped (or none, if that lies past `until`).
  uint32_t in_bucket = 0;
  for (const Chunk* c = first; in_bucket <= kRunMax; c = c->next) {
    in_bucket += c->count;
    if (c == last) break;
  }
  if (in_bucket <= kRunMax) {
    release_bucket(b);
    // Events of one instant are often pushed in key order (a crowd of ports scheduling in the
    // order they run): such a bucket needs reversing, not sorting.
    Order order;
    for (Chunk* c = first;;) {
      prefetch_chunk(c->next);
      for (uint32_t i = 0; i < c->count; ++i) {
        if (!run_.empty() && before(c->events[i], run_.back())) order.note_break(run_.size());
        run_.push_back(c->events[i]);
      }
      Chunk* const next = c->next;
      const bool end = c == last;
      free_chunk(c);
      if (end) break;
      c = next;
    }
    make_run(order);
    return pop_until(until, out);
  }

  const Event& best = minimum_of(last);
  if (best.time > until) return false;
  const Time at = best.time;
  set_last(best);

  // Every event in bucket b agrees with the new reference on all digits above b's, so each moves
  // to a strictly lower bucket, but for the events of the minimum's instant: they become the run
  // (a crowd of one instant, which spreading would move through the key digits one by one), and
  // its greatest the reference, which moves no other event's bucket (their times all differ from
  // `at` in the same digits as before); a crowd of more than kRunMax is spread by key after all,
  // from the moment it passes kRunMax, so the run never grows past it (a crowd of 16k completions
  // gathered whole would touch as many fresh pages as the chunks it came from). Where an event
  // lands depends only on the reference, and a bucket's order among its events on nothing the
  // queue pops by, so spreading the crowd in the pass leaves the order of pops as it was.
  // A chunk is freed once read, so the moves can reuse it while it is still in cache.
  release_bucket(b);
  Order order;
  bool crowd = false;  // more than kRunMax events of the instant `at`: spread by key
  for (Chunk* c = first;;) {
    prefetch_chunk(c->next);
    for (uint32_t i = 0; i < c->count; ++i) {
      const Event& e = c->events[i];
      if (e.time != at || crowd) {
        place(e);
      } else if (run_.size() < kRunMax) {
        if (!run_.empty() && before(e, run_.back())) order.note_break(run_.size());
        run_.push_back(e);
      } else {  // too large a run for join_run's insertions
        for (const Event& r : run_) place(r);
        run_.clear();
        place(e);
        crowd = true;
      }
    }
    Chunk* const next = c->next;
    const bool end = c == last;
    free_chunk(c);
    if (end) break;
    c = next;
  }
  if (crowd) {  // the minimum, equal to the reference, waits in `equal_`
    out = equal_.back();
    equal_.pop_back();
    --size_;
    return true;
  }
  make_run(order);
  return pop_until(until, out);
}

void RadixEventQueue::make_run(const Order& order) {
  const auto less = [](const Event& a, const Event& z) { return before(a, z); };
  if (order.breaks == 0) {
    std::reverse(run_.begin(), run_.end());
  } else if (order.breaks >= Order::kMostBreaks) {
    if (run_.size() < kCountMin || !count_by_site()) {
      std::sort(run_.begin(), run_.end(), [](const Event& a, const Event& z) { return before(z, a); });
    }
  } else {
    // A few ascending sequences: merged pairwise, each pass halving their number, the last pass
    // from their ends, greatest first.
    std::array<size_t, Order::kMostBreaks + 1> bounds{};
    size_t sequences = order.breaks + 1;
    std::copy_n(order.starts.begin(), order.breaks, bounds.begin() + 1);
    bounds[sequences] = run_.size();
    merged_.resize(run_.size());
    const auto at = [](std::vector<Event>& v, size_t i) { return v.begin() + static_cast<std::ptrdiff_t>(i); };
    while (sequences > 2) {
      size_t kept = 0;
      for (size_t i = 0; i < sequences; i += 2) {
        const size_t from = bounds[i];
        const size_t mid = bounds[std::min(i + 1, sequences)];
        const size_t to = bounds[std::min(i + 2, sequences)];
        std::merge(at(run_, from), at(run_, mid), at(run_, mid), at(run_, to), at(merged_, from), less);
        bounds[kept++] = from;
      }
      bounds[kept] = run_.size();
      sequences = kept;
      run_.swap(merged_);
    }
    const Event* a = run_.data() + bounds[1];  // one past the first sequence's greatest
    const Event* b = run_.data() + run_.size();
    const Event* const a_first = run_.data();
    const Event* const b_first = a;
    Event* to = merged_.data();
    while (a != a_first && b != b_first) *to++ = before(*(b - 1), *(a - 1)) ? *--a : *--b;
    while (a != a_first) *to++ = *--a;
    while (b != b_first) *to++ = *--b;
    run_.swap(merged_);
  }
  set_last(run_.front());
}

bool RadixEventQueue::count_by_site() {
  const size_t n = run_.size();
  constexpr int kSourceBits = kGenerationBits + kSiteBits;
  constexpr uint32_t kSourceMask = (uint32_t{1} << kSourceBits) - 1;
  static_assert(kSourceBits + std::bit_width(kMostInstants - 1) <= 32);
  // The run's instants, in the order first met; each event's index among them and its source,
  // (generation, site), the key above the sequence number; the range of the sources.
  std::array<Time, kMostInstants> instants;
  size_t count = 0;
  size_t last = 0;
  uint32_t low = UINT32_MAX;
  uint32_t high = 0;
  digits_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Time t = run_[i].time;
    if (count == 0 || instants[last] != t) {
      last = 0;
      while (last < count && instants[last] != t) ++last;
      if (last == count) {
        if (count == kMostInstants) return false;
        instants[count++] = t;
      }
    }
    const auto source = static_cast<uint32_t>(run_[i].key >> kSequenceBits);
    low = std::min(low, source);
    high = std::max(high, source);
    if (high - low >= uint32_t{1} << (2 * kMostCountBits)) return false;
    digits_[i] = (static_cast<uint32_t>(last) << kSourceBits) | source;
  }
  std::array<uint32_t, kMostInstants> rank{};
  for (size_t a = 0; a < count; ++a) {
    for (size_t z = 0; z < count; ++z) rank[a] += instants[z] < instants[a] ? 1 : 0;
  }
  const int source_bits = std::bit_width(high - low);
  const int bits = std::bit_width(count - 1) + source_bits;
  if (bits > 2 * kMostCountBits) return false;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t d = digits_[i];
    digits_[i] = (rank[d >> kSourceBits] << source_bits) | ((d & kSourceMask) - low);
  }
  // A stable counting pass over the digit of `width` bits at `shift`, from `from` to `to`; the
  // last pass places greatest first.
  const auto pass = [&](const std::vector<Event>& from, const std::vector<uint32_t>& from_digits,
                        std::vector<Event>& to, std::vector<uint32_t>* to_digits, int shift, int width,
                        bool greatest_first) {
    const uint32_t buckets = uint32_t{1} << width;
    const uint32_t mask = buckets - 1;
    std::fill_n(counts_.begin(), buckets + 1, 0);
    for (size_t i = 0; i < n; ++i) ++counts_[((from_digits[i] >> shift) & mask) + 1];
    for (uint32_t b = 1; b <= buckets; ++b) counts_[b] += counts_[b - 1];
    to.resize(n);
    if (to_digits != nullptr) to_digits->resize(n);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t at = counts_[(from_digits[i] >> shift) & mask]++;
      const size_t place = greatest_first ? n - 1 - at : at;
      to[place] = from[i];
      if (to_digits != nullptr) (*to_digits)[place] = from_digits[i];
    }
  };
  if (bits <= kMostCountBits) {
    pass(run_, digits_, merged_, nullptr, 0, std::max(bits, 1), true);
  } else {
    const int first = bits / 2;
    pass(run_, digits_, counted_, &counted_digits_, 0, first, false);
    pass(counted_, counted_digits_, merged_, nullptr, first, bits - first, true);
  }
  // Greatest first by (instant, generation, site), and within each by push order reversed: an
  // insertion pass puts the events of one site and instant in their keys' order.
  Event* const e = merged_.data();
  size_t moves = 0;
  for (size_t j = 1; j < n; ++j) {
    if (!before(e[j - 1], e[j])) continue;
    const Event held = e[j];
    size_t k = j;
    for (; k > 0 && before(e[k - 1], held); --k) e[k] = e[k - 1];
    e[k] = held;
    moves += j - k;
    if (moves > n) return false;
  }
  run_.swap(merged_);
  return true;
}

}  // namespace dtsim::sim
