// An event is a time, a stable ordering key, the handler to call, one and a half words of payload
// and the site where it runs (40 bytes). It owns nothing, so queues move events by value and the
// hot path never allocates.
// Handlers are objects the caller owns (a GPU stream, a link, a collective in flight); the
// payload says which of its pending things fired.
//
// A site is a place in the model whose state its events own (the packet model's sites are the
// cluster's devices; models that do not say run everything at site 0). The key is the site that
// scheduled the event and that site's own count of events it has scheduled (under a generation,
// below), so the order of events at one time depends on what each site did, never on how sites
// are spread over the partitions of a parallel run (sim/partitioned_engine.h). For a model with
// one site the order is the order of scheduling, as with a plain counter.
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

using Site = uint32_t;

// A key is (generation, scheduling site, that site's sequence number), high bits first. The
// generation orders the events of one instant by cause: an event scheduled for the instant that
// is running (zero delay) is one generation after the event that scheduled it, so it sorts after
// that event and every other of its generation, whatever the sites (a site's number says nothing
// about when it acts). Events scheduled for a later instant are of generation 0.
inline constexpr int kGenerationBits = 8;
inline constexpr int kSiteBits = 20;
inline constexpr int kSequenceBits = 64 - kGenerationBits - kSiteBits;
inline constexpr Site kMaxSites = Site{1} << kSiteBits;
inline constexpr uint64_t kMaxGeneration = (uint64_t{1} << kGenerationBits) - 1;
inline constexpr uint64_t make_key(Site site, uint64_t sequence) {
  return (uint64_t{site} << kSequenceBits) | sequence;
}
inline constexpr Site key_site(uint64_t key) {
  return static_cast<Site>((key >> kSequenceBits) & (kMaxSites - 1));
}
inline constexpr uint64_t key_sequence(uint64_t key) {
  return key & ((uint64_t{1} << kSequenceBits) - 1);
}
inline constexpr uint64_t key_generation(uint64_t key) { return key >> (kSequenceBits + kSiteBits); }
inline constexpr uint64_t with_generation(uint64_t key, uint64_t generation) {
  return key | (generation << (kSequenceBits + kSiteBits));
}

struct Event {
  Time time;
  uint64_t key = 0;  // ties at equal time break by key: a stable, deterministic number
  EventHandler* handler = nullptr;
  uint64_t payload = 0;
  Site site = 0;  // where it runs: events it schedules are keyed by this site
  uint32_t aux = 0;  // a second, smaller word of payload (fills what would be padding)
};

// Strict order used by every queue: time, then key. Keys are unique within one engine.
inline bool before(const Event& a, const Event& b) {
  return a.time < b.time || (a.time == b.time && a.key < b.key);
}

}  // namespace dtsim::sim
