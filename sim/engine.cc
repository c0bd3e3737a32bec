#include "sim/engine.h"

#include <stdexcept>
#include <string>

#include "sim/partitioned_engine.h"

namespace dtsim::sim {
namespace {

inline uint64_t fnv1a_word(uint64_t h, uint64_t word) {
  for (int i = 0; i < 8; ++i) {
    h ^= (word >> (8 * i)) & 0xffu;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// SplitMix64's finalizer: every input bit moves about half the output bits.
inline uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

uint32_t Engine::partition_of(Site site) const {
  return partitioned_ != nullptr ? partitioned_->partition_of(site) : 0;
}

void Engine::grow_sequences() {
  if (site_ >= kMaxSites) throw std::logic_error("site " + std::to_string(site_) + " out of range");
  sequence_.resize(size_t{site_} + 1, 0);
}

void Engine::foreign_key() {
  throw std::logic_error("event scheduled with a key take_key() did not give");
}

void Engine::enqueue_slow(Time at, uint64_t key, Site site, EventHandler& handler, uint64_t payload,
                          uint32_t aux) {
  if (at < now_) {
    throw std::logic_error("event scheduled in the past: at " + to_string(at) + ", now " +
                           to_string(now_));
  }
  if (site >= kMaxSites) throw std::logic_error("site " + std::to_string(site) + " out of range");
  if (at == now_) {  // caused by the event running now: after it and its whole generation
    const uint64_t generation = generation_ + 1;
    if (generation > kMaxGeneration) {
      throw std::logic_error("more than " + std::to_string(kMaxGeneration) +
                             " generations of zero-delay events at " + to_string(at));
    }
    key = with_generation(key, generation);
  }
  const Event e{at, key, &handler, payload, site, aux};
  if (partitioned_ != nullptr) {
    if (const Site from = key_site(key); partitioned_->partition_of(from) != partition_) {
      throw std::logic_error("a key of site " + std::to_string(from) +
                             " taken outside the partition that owns it");
    }
    const uint32_t to = partitioned_->partition_of(site);
    if (to != partition_) {
      partitioned_->send(*this, to, e);
      return;
    }
  }
  queue_.push(e);
}

uint64_t Engine::run(Time until) {
  stop_requested_ = false;
  uint64_t count = 0;
  Event e;
  while (queue_.pop_until(until, e)) {
    now_ = e.time;
    site_ = e.site;
    aux_ = e.aux;
    key_ = e.key;
    generation_ = key_generation(e.key);
    fingerprint_ += mix(mix(static_cast<uint64_t>(e.time.ps()) ^ e.key) + e.site);
    ++executed_;
    ++count;
    e.handler->on_event(*this, e.payload);
    if (stop_requested_ || (watch_ != nullptr && !watch_->keep_running(*this))) {
      site_ = 0;
      return count;
    }
  }
  site_ = 0;
  if (!queue_.empty() && until > now_ && until != Time::max()) now_ = until;
  return count;
}

uint64_t combine_fingerprints(std::span<const uint64_t> fingerprints) {
  uint64_t h = kEmptyFingerprint;
  for (uint64_t f : fingerprints) h = fnv1a_word(h, f);
  return h;
}

}  // namespace dtsim::sim
