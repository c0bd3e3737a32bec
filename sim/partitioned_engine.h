// PartitionedEngine: one model run spread over threads (conservative parallel discrete-event
// simulation), with the serial Engine's result. The model's sites are cut into partitions; each
// partition is an Engine of its own with its own queue and runs on its own thread. An event for a
// site of another partition must lie at least the lookahead after the moment it is scheduled (a
// packet or credit crossing a link of at least that latency), so time advances in windows: every
// partition runs its events before the earliest pending time plus the lookahead, then the events
// sent between partitions are handed over, and the next window starts.
//
// Keys are (scheduling site, its own sequence) (sim/event.h) and a site's counter lives in the
// partition that owns it, so every event gets the key it gets in a serial run, events run in the
// serial (time, key) order within each partition, and the fingerprints of the partitions add up
// to the serial run's. That holds for a model whose events touch only their own site's state, or
// state shared with sites that are always in the same partition, or state updated by operations
// whose order does not matter (sums, maxima).
//   sim::PartitionedEngine engines(owner_of_each_site, /*lookahead=*/Time::ns(500));
//   model.start(engines.engine_of(0));   // set-up events, scheduled from site 0's partition
//   engines.run();
//   uint64_t f = engines.fingerprint();  // equals the serial run's
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/engine.h"

namespace dtsim::sim {

// What the engines of one PartitionedEngine share: which partition owns each site, the lookahead
// and the events in transit between partitions.
struct PartitionTable {
  std::vector<uint32_t> owner;  // per site; sites past the end belong to partition 0
  uint32_t partitions = 1;
  Time lookahead;
  std::vector<std::unique_ptr<Engine>> engines;  // one per partition
  bool running = false;
  // outbox[from * partitions + to]: the events partition `from` sent to `to` this window. Only
  // `from` writes it while a window runs, and only `to` reads and empties it between windows.
  std::vector<std::vector<Event>> outbox;

  uint32_t partition_of(Site site) const { return site < owner.size() ? owner[site] : 0; }
  // Hands `e` to partition `to`: straight into its queue before the run, through the outbox
  // during it. Throws std::logic_error for an event inside the lookahead.
  void send(const Engine& from, uint32_t to, const Event& e);
};

class PartitionedEngine {
 public:
  // owner[s] is the partition of site s; partitions are numbered from 0 and none may be empty of
  // sites except by choice. lookahead must be positive when there is more than one partition.
  PartitionedEngine(std::vector<uint32_t> owner, Time lookahead);
  PartitionedEngine(const PartitionedEngine&) = delete;
  PartitionedEngine& operator=(const PartitionedEngine&) = delete;

  uint32_t partitions() const { return table_.partitions; }
  Engine& engine(uint32_t partition) { return *table_.engines.at(partition); }
  Engine& engine_of(Site site) { return engine(table_.partition_of(site)); }
  Time lookahead() const { return table_.lookahead; }

  // Runs every partition on a thread of its own (one partition: on this thread) until no events
  // are left; returns the number executed. An exception thrown by a model in any partition stops
  // every partition at the end of the window and is rethrown here (the lowest partition's first).
  // A model's stop() ends only its own partition's window. The watch, if set, is asked between
  // windows (with partition 0's engine); a false answer stops every partition there.
  uint64_t run();
  void set_watch(EngineWatch* watch) { watch_ = watch; }

  bool idle() const;
  Time now() const;  // the latest time any partition has reached
  uint64_t events_executed() const;
  uint64_t fingerprint() const;  // the serial run's: kEmptyFingerprint plus every partition's sum

 private:
  PartitionTable table_;
  EngineWatch* watch_ = nullptr;
};

}  // namespace dtsim::sim
