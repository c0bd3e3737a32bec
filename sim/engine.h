// Engine: the serial discrete-event scheduler. Owners of EventHandler objects schedule events;
// run() pops them in (time, key) order, advances now() and calls each handler, until the queue is
// empty or the next event lies past a stop time. It also folds every executed event's time and key
// into a fingerprint, so a regression test sees any change in event order.
//   sim::Engine engine;
//   engine.schedule_in(Time::us(1), stream, /*payload=*/op_index);
//   engine.run();                       // or run(Time::ms(5)) to stop at 5 ms
//   fmt::print("{:016x}\n", engine.fingerprint());
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/radix_event_queue.h"

namespace dtsim::sim {

// FNV-1a's offset basis: the fingerprint of an engine that has run nothing.
inline constexpr uint64_t kEmptyFingerprint = 0xcbf29ce484222325ULL;

class Engine;

// Something that watches a run from outside the model: run() calls it after every executed
// event, and a false answer stops the run there, as stop() would (a wall-clock limit). It must not
// schedule events; it reads now(), events_executed() and the models it knows of (progress).
class EngineWatch {
 public:
  virtual ~EngineWatch() = default;
  virtual bool keep_running(const Engine& engine) = 0;
};

class Engine {
 public:
  Time now() const { return now_; }
  // The site of the event being executed (site 0 outside run()).
  Site site() const { return site_; }
  // This engine's partition of a PartitionedEngine (0 for an engine of its own).
  uint32_t partition() const { return partition_; }
  bool partitioned() const { return partitioned_ != nullptr; }
  // The partition that owns `site` (0 for an engine of its own).
  uint32_t partition_of(Site site) const;

  // Schedules `handler.on_event(payload)` at `at` (>= now()), at the current site. The tie-break
  // key is the current site's schedule counter, which is deterministic for a deterministic model.
  void schedule_at(Time at, EventHandler& handler, uint64_t payload = 0) {
    enqueue(at, take_key(), site_, handler, payload, 0);
  }
  void schedule_in(Time delay, EventHandler& handler, uint64_t payload = 0) {
    schedule_at(now_ + delay, handler, payload);
  }
  // The same at another site. In a partitioned run an event for a site of another partition must
  // lie at least the lookahead after now() (sim/partitioned_engine.h).
  [[gnu::always_inline]] void schedule_at_site(Time at, Site site, EventHandler& handler, uint64_t payload = 0,
                                               uint32_t aux = 0) {
    enqueue(at, take_key(), site, handler, payload, aux);
  }
  // The aux word of the event being executed (sim/event.h): what a message between partitions
  // carries beside its payload.
  uint32_t aux() const { return aux_; }
  // The (generation, site, sequence) key of the event being executed: where it sorts among the
  // events of its instant.
  uint64_t key() const { return key_; }
  // A tie-break key taken now for an event queued later: scheduled with schedule_keyed, the event
  // sorts among events of its time as if schedule_at had queued it when the key was taken, so a
  // model that holds a FIFO of future events and queues only its head keeps the order it would
  // have had with every event queued.
  [[gnu::always_inline]] uint64_t take_key() {
    if (site_ >= sequence_.size()) grow_sequences();
    return make_key(site_, sequence_[site_]++);
  }
  // Schedules with a key from take_key() (checked: std::logic_error otherwise). `at` must not lie
  // before now(); at now() the event is of the next generation (sim/event.h), so it runs after the
  // one being executed.
  [[gnu::always_inline]] void schedule_keyed(Time at, uint64_t key, EventHandler& handler, uint64_t payload = 0) {
    const Site from = key_site(key);
    if (key_generation(key) != 0 || from >= sequence_.size() || key_sequence(key) >= sequence_[from]) {
      foreign_key();
    }
    enqueue(at, key, site_, handler, payload, 0);
  }

  // Runs events with time <= until; returns the number executed by this call. Events later than
  // `until` stay queued and now() becomes `until` if the queue still holds events (time never
  // moves backwards: an `until` before now() runs nothing).
  uint64_t run(Time until = Time::max());
  // Asks run() to return after the event being executed.
  void stop() { stop_requested_ = true; }
  // Calls `watch` (null: none) after every event; it must outlive the runs it watches.
  void set_watch(EngineWatch* watch) { watch_ = watch; }

  bool idle() const { return queue_.empty(); }
  size_t pending() const { return queue_.size(); }
  // The time of the next queued event; Time::max() when idle.
  Time next_time() const { return queue_.empty() ? Time::max() : queue_.top().time; }
  // The event after the one being executed where the queue knows it without work (null
  // otherwise), so that a handler can prefetch what that event will read. An event scheduled by
  // the running one may still come before it.
  const Event* upcoming() const { return queue_.next_if_ordered(); }
  uint64_t events_executed() const { return executed_; }
  // A hash of the (time, key, site) of every executed event. Events run in (time, key) order, so
  // the set of those triples fixes the trace; the hash is a sum over events, which a partitioned
  // run can add up across its partitions to the serial run's value.
  uint64_t fingerprint() const { return fingerprint_; }

 private:
  friend class PartitionedEngine;
  friend struct PartitionTable;
  void grow_sequences();  // makes room for the current site's counter
  [[noreturn]] static void foreign_key();
  // Queues an event whose key this engine took: stamps its generation and hands it to the
  // partition that owns `site`. An event of a later instant on an engine of its own goes straight
  // to the queue; the rest (checks that throw, zero delay, partitions) take enqueue_slow.
  [[gnu::always_inline]] void enqueue(Time at, uint64_t key, Site site, EventHandler& handler, uint64_t payload,
                                      uint32_t aux) {
    if (at > now_ && site < kMaxSites && partitioned_ == nullptr) [[likely]] {
      queue_.push(Event{at, key, &handler, payload, site, aux});
      return;
    }
    enqueue_slow(at, key, site, handler, payload, aux);
  }
  void enqueue_slow(Time at, uint64_t key, Site site, EventHandler& handler, uint64_t payload,
                    uint32_t aux);
  // The radix queue relies on what schedule_at enforces: nothing is scheduled before now().
  RadixEventQueue queue_;
  Time now_;
  Site site_ = 0;
  uint32_t aux_ = 0;
  uint64_t key_ = 0;
  uint64_t generation_ = 0;  // of the event being executed, or the last one
  std::vector<uint64_t> sequence_;  // per site: events it has scheduled
  uint64_t executed_ = 0;
  uint64_t fingerprint_ = kEmptyFingerprint;
  bool stop_requested_ = false;
  EngineWatch* watch_ = nullptr;
  // Set by a PartitionedEngine: which partition this is, and where events for other sites go.
  struct PartitionTable* partitioned_ = nullptr;
  uint32_t partition_ = 0;
};

// One fingerprint for several independent runs, each on its own engine (the rows of a sweep run
// in parallel): FNV-1a over their fingerprints in the order given, so it depends on each run's
// event trace and on their order, never on which thread ran which.
uint64_t combine_fingerprints(std::span<const uint64_t> fingerprints);

}  // namespace dtsim::sim
