// RadixEventQueue: pending events popped in (time, key) order, for a monotone scheduler, the
// engine's inner loop. Every pushed event must not come before the last popped one, which the
// engine guarantees: nothing is scheduled in the past and keys only grow.
//   RadixEventQueue q;
//   q.push(e);                          // e >= the last popped event
//   while (!q.empty()) { Event next = q.pop(); ... }
// A radix heap over the 128-bit value (time, key), with byte-wide digits: an event waits in the
// bucket named by the highest digit in which it differs from the last popped value, and that
// digit's value. Push is a bit scan and an append; when no event equals the reference, the lowest
// non-empty bucket is scanned for its minimum and spread into lower buckets. Each event moves a
// few times, always by sequential passes, where a heap's sift jumps across memory, so it wins
// most when many events are pending (bench/sim.md).
// A lowest bucket of at most kRunMax events is not spread but sorted into a run, popped from its
// end: a packet run's ports act in step, so a bucket often holds a crowd of events of one instant
// that spreading would move through several key digits one by one (bench/peers.md). For the same
// reason a larger bucket, spread, leaves the events of its minimum's instant in the run (up to
// kRunMax of them). Such crowds are mostly pushed in key order, and a bucket often holds a few
// of them, of nearby instants (a ring's senders' next finishes beside the arrivals they sent
// earlier): a run gathered in order is reversed and one of a few ascending sequences merged, not
// sorted. A run of many sites' events in no order (an all-to-all's, whose ports forward in rounds)
// is counted into place by site, each site's events already in order but for a few.
#pragma once

#include <array>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/block_arena.h"
#include "sim/event.h"

namespace dtsim::sim {

class RadixEventQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // The minimum; the queue must not be empty. Between pops this may scan a bucket; the engine
  // uses pop_until instead.
  const Event& top() const;

  void push(const Event& e) {
    ++size_;
    // While there is a run the reference is its greatest event: one not above it joins the run.
    if (!run_.empty() && !before(run_.front(), e)) {
      join_run(e);
      return;
    }
    assert(time_bits(e.time) > last_time_ ||
           (time_bits(e.time) == last_time_ && e.key >= last_key_));
    place(e);
  }

  // Pops the minimum into `out` if the queue holds one with time <= until; false otherwise.
  bool pop_until(Time until, Event& out) {
    if (equal_.empty()) {
      if (run_.empty()) return pop_from_buckets(until, out);
      if (run_.back().time > until) return false;
      out = run_.back();
      run_.pop_back();
      --size_;
      return true;
    }
    if (equal_.back().time > until) return false;
    out = equal_.back();
    equal_.pop_back();
    --size_;
    return true;
  }

  // The event popped next where the queue holds it in order already, null where finding it would
  // take a bucket's scan: a hint for prefetching, read without moving anything.
  const Event* next_if_ordered() const {
    if (!equal_.empty()) return &equal_.back();
    if (!run_.empty()) return &run_.back();
    return nullptr;
  }

  // The queue must not be empty.
  Event pop() {
    Event e;
    pop_until(Time::max(), e);
    return e;
  }

 private:
  // The 128-bit value (time, key) is read as digits of kDigitBits. An event that first differs
  // from the reference value in digit d sits in bucket d * kDigitValues + (its digit d), so
  // buckets in index order hold ever larger events. Events equal to the reference wait in
  // `equal_`. Wider digits mean fewer moves per event but more buckets; bytes beat nibbles and
  // single bits at every queue size in bench/sim.md.
  static constexpr int kDigitBits = 8;
  static constexpr int kDigitValues = 1 << kDigitBits;
  static constexpr int kDigitsPerWord = 64 / kDigitBits;
  static constexpr size_t kBuckets = 2 * kDigitsPerWord * kDigitValues;
  static constexpr size_t kWords = (kBuckets + 63) / 64;

  // Buckets are lists of fixed-size chunks drawn from one pool and returned to it when a bucket
  // is spread out, so after warm-up the queue neither allocates nor touches fresh pages (growing
  // per-bucket vectors kept the allocator busy, and page faults dominated at 1e6 pending). The
  // pool's chunks never move: they are carved kGroupChunks at a time from a BlockArena (the
  // ordinary heap, then huge-page blocks), so a queue that grows touches each page once, where an
  // array of chunks that doubled would copy itself into fresh pages. The pool keeps its peak size
  // until the queue is destroyed.
  static constexpr uint32_t kChunkEvents = 16;
  static constexpr size_t kGroupChunks = 64;
  // A bucket's chunks form a ring: the bucket names its last chunk (where events are appended),
  // whose `next` is the first, so a bucket is one pointer (the 4096 of them fill 32 KiB).
  struct Chunk {
    Event events[kChunkEvents];
    uint32_t count;
    Chunk* next;  // in a bucket's ring, or in the free list (null at its end)
  };

  // Time as an unsigned word with the same order, so bits compare as the signed times do.
  static uint64_t time_bits(Time t) { return static_cast<uint64_t>(t.ps()) ^ (uint64_t{1} << 63); }

  void set_last(const Event& e) {
    last_time_ = time_bits(e.time);
    last_key_ = e.key;
  }

  // The bucket for an event whose highest differing bit is `diff`'s top bit, in `word` (the
  // event's time or key); time digits rank above all key digits.
  static size_t digit_bucket(uint64_t diff, uint64_t word, int first_digit) {
    const int digit = (63 - std::countl_zero(diff)) / kDigitBits;
    const auto value = static_cast<size_t>((word >> (digit * kDigitBits)) & (kDigitValues - 1));
    return static_cast<size_t>(first_digit + digit) * kDigitValues + value;
  }

  void place(const Event& e) {
    const uint64_t t = time_bits(e.time);
    if (const uint64_t dt = t ^ last_time_; dt != 0) {
      append(digit_bucket(dt, t, kDigitsPerWord), e);
    } else if (const uint64_t dk = e.key ^ last_key_; dk != 0) {
      append(digit_bucket(dk, e.key, 0), e);
    } else {
      push_equal(e);
    }
  }
  // An event equal to the reference, which is rare: out of line, as append's new chunk is.
  [[gnu::noinline]] void push_equal(const Event& e) { equal_.push_back(e); }

  // The event into bucket b's last chunk; where the bucket is empty or its last chunk full, a new
  // chunk first (append_to_new_chunk, out of line: the common case then saves no register).
  void append(size_t b, const Event& e) {
    if ((occupied_[b / 64] & (uint64_t{1} << (b % 64))) == 0 || buckets_[b]->count == kChunkEvents) [[unlikely]] {
      append_to_new_chunk(b, e);
      return;
    }
    Chunk* const last = buckets_[b];
    last->events[last->count++] = e;
  }
  [[gnu::noinline]] void append_to_new_chunk(size_t b, const Event& e) {
    Chunk*& last = buckets_[b];
    const uint64_t bit = uint64_t{1} << (b % 64);
    Chunk* c = new_chunk();
    if ((occupied_[b / 64] & bit) == 0) {
      c->next = c;
      occupied_[b / 64] |= bit;
      occupied_words_ |= uint64_t{1} << (b / 64);
    } else {
      c->next = last->next;
      last->next = c;
    }
    last = c;
    last->events[last->count++] = e;
  }

  Chunk* new_chunk() {
    Chunk* c = free_;
    if (c != nullptr) {
      free_ = c->next;
    } else {
      c = fresh_chunk();
    }
    c->count = 0;
    return c;
  }
  Chunk* fresh_chunk();  // the next chunk never used, from a group taken from `arena_`
  // A bucket's chunks lie wherever the pool had them: the next one's lines are asked for while
  // the one before is read.
  static void prefetch_chunk(const Chunk* c) {
    const auto* line = reinterpret_cast<const char*>(c);
    for (size_t at = 0; at < sizeof(Chunk); at += 64) __builtin_prefetch(line + at);
  }
  void free_chunk(Chunk* c) {
    c->next = free_;
    free_ = c;
  }
  // The lowest non-empty bucket; the queue must hold an event outside `equal_`.
  size_t lowest_bucket() const;
  const Event& minimum_of(const Chunk* last) const;  // of the bucket whose last chunk it is
  // pop_until when no event equals the reference: if the minimum's time is <= until, it becomes
  // the reference and is popped, and the rest of its bucket moves to buckets below. The reference
  // only ever moves to an event being popped, because later pushes are only promised not to
  // precede the last popped event.
  bool pop_from_buckets(Time until, Event& out);
  void release_bucket(size_t b);
  void join_run(const Event& e);
  // How a run's events lie as gathered in push order: how many times one is below the one
  // before it (counted up to kMostBreaks), and where the first of those are, each the start of
  // an ascending sequence.
  struct Order {
    static constexpr uint32_t kMostBreaks = 8;
    uint32_t breaks = 0;
    std::array<size_t, kMostBreaks> starts{};
    void note_break(size_t at) {
      if (breaks < kMostBreaks) starts[breaks++] = at;
    }
  };
  // Sorts the run's events, just gathered in push order, greatest first (merged when a few
  // ascending sequences, counted by site or sorted otherwise), and makes its greatest the
  // reference.
  void make_run(const Order& order);
  // A run of many sequences, as a packet run's are: the events of one instant come from many
  // sites in no order, but each site's in the order of their sequence numbers, mostly (a site
  // numbers what it schedules as it schedules it; an event queued later under a key taken
  // earlier, Engine::take_key, comes after some with greater numbers). So the run is counted
  // into place by (instant, generation, site) alone, a stable counting sort over the few bits in
  // which those differ across the run (at most 22, in one or two passes), greatest first; an
  // insertion pass then moves the few events out of their site's order. False, the run as it
  // was, where the bits are too many, the instants more than kMostInstants, or the insertion
  // pass would move more than the run's size (the run is sorted then).
  bool count_by_site();
  static constexpr size_t kMostInstants = 16;
  static constexpr int kMostCountBits = 11;  // a pass's buckets: at most 2^11
  static constexpr size_t kCountMin = 64;     // a smaller run is sorted: fewer steps than buckets

  // The run: a lowest bucket's events, sorted greatest first, so the back is the next to pop.
  // Every event in the buckets is greater than all of them, and the reference is the greatest
  // (the front) from the run's making until the run is empty: the buckets stay valid for it,
  // as for any value of the bucket the run came from, and no pop moves it below a bucket's
  // range.
  static constexpr uint32_t kRunMax = 512;
  std::vector<Event> run_;
  std::vector<Event> merged_;  // make_run's merge, swapped with run_
  std::vector<Event> equal_;
  // Each bucket's last chunk, valid only while the bucket's bit in `occupied_` is set: a bucket
  // is never read otherwise, so the array is not written when the queue is made.
  std::array<Chunk*, kBuckets> buckets_;
  // Bit b of the bitmap is set while bucket b holds events, and bit w of the summary while word w
  // of the bitmap is not zero: finding the lowest bucket takes two bit scans.
  static_assert(kWords <= 64);
  std::array<uint64_t, kWords> occupied_{};
  uint64_t occupied_words_ = 0;
  BlockArena arena_;
  Chunk* free_ = nullptr;
  Chunk* spare_ = nullptr;  // the chunks of the last group not yet used: [spare_, spare_end_)
  Chunk* spare_end_ = nullptr;
  // The reference value: the last popped event, (Time min, 0) before the first pop; while there
  // is a run, the run's greatest event.
  uint64_t last_time_ = 0;  // in time_bits form
  uint64_t last_key_ = 0;
  size_t size_ = 0;
  // count_by_site's: its first pass of two, each event's (instant, generation, site) before and
  // after it, and its buckets' counts (last: the rest are read far more often).
  std::vector<Event> counted_;
  std::vector<uint32_t> digits_;
  std::vector<uint32_t> counted_digits_;
  std::array<uint32_t, (1 << kMostCountBits) + 1> counts_;
};

}  // namespace dtsim::sim
