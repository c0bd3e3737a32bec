// CpuMaxMinSolver's progressive filling written as the program of one team of threads that share
// memory and barriers: a GPU thread block (gpu_accel/max_min_solver.cu) or threads of this host
// (team_filling_host.h), one source for both, so the host run is the GPU kernel's twin.
//
// A round does work only where the round's level reaches: every thread scans its share of the
// links for the smallest fair share m (a team-wide minimum), the links within the tie tolerance of
// m are listed, and the team walks those links' flow lists together (each bottleneck link's list
// is walked once in the whole solve, as each flow is frozen once); a flow frozen now charges its
// links, and only the links it touched get their remaining capacity and share updated. The rates
// are CpuMaxMinSolver's bit for bit: the same levels, ties, products and divisions, with weights
// summed as integer units so the order atomics land in changes nothing.
//
// A Team is the execution context:
//   uint32_t size(), rank();        // threads in the team, this thread's index
//   void sync();                    // a barrier every thread of the team reaches
//   double min(double v);           // the team's minimum of v (every thread calls it)
//   uint32_t add(uint32_t* x, uint32_t v);  Units add(Units* x, Units v);  // atomic, old value
//   uint32_t read(const uint32_t* flag);  // a flag another thread may be claiming
//   bool claim(uint32_t* flag);     // atomically 0 -> 1: true for the one thread that turned it
//   static double infinity();
// This header compiles under nvcc (the functions become __device__) and any C++20 compiler.
#pragma once

#include <cstdint>

#include "network/flow/max_min_solver.h"

#ifdef __CUDACC__
#define DTSIM_TEAM_FN __device__
#else
#define DTSIM_TEAM_FN
#endif

namespace dtsim::network::flow::team {

// A weight in units of kWeightUnit (FlowProblem), in the type CUDA's 64-bit atomics take.
using Units = unsigned long long;
static_assert(sizeof(Units) == sizeof(uint64_t));
// Entries of the bottleneck links' flow lists a thread holds at once, so that their dependent
// reads (flow id, frozen flag, path) are in flight together rather than one after another.
inline constexpr uint32_t kEntriesInFlight = 4;

// The instance, FlowProblem's CSR arrays where the team can read them.
struct Problem {
  uint32_t flows = 0;
  uint32_t links = 0;
  const double* capacity = nullptr;      // [links]
  const uint32_t* flow_offsets = nullptr;  // [flows + 1]
  const uint32_t* flow_links = nullptr;    // [pairs]
  const uint32_t* link_offsets = nullptr;  // [links + 1]
  const uint32_t* link_flows = nullptr;    // [pairs]
  const double* weight = nullptr;          // [flows], or null when every flow weighs 1
};

// What the work of one solve came to; deterministic (it does not depend on how threads
// interleave), so the host twin states what the GPU kernel does.
struct Counts {
  uint64_t rounds = 0;
  uint64_t link_scans = 0;       // links whose share a round's minimum read (links x rounds)
  uint64_t bottlenecks = 0;      // bottleneck links listed over all rounds
  uint64_t entries = 0;          // their flow-list entries walked
  uint64_t charges = 0;          // link updates after a round (touched links, summed over rounds)
};

// The team's working memory, every array visible to all its threads.
struct Scratch {
  double* remaining = nullptr;         // [links] capacity not yet given to frozen flows
  double* share = nullptr;             // [links] remaining over unfrozen weight; infinity once none
  Units* unfrozen_units = nullptr;     // [links]
  Units* frozen_units_now = nullptr;   // [links] weight frozen on the link this round
  uint32_t* frozen = nullptr;          // [flows] 1 once frozen
  uint32_t* bottlenecks = nullptr;     // [links] this round's bottleneck links
  uint32_t* entry_start = nullptr;     // [links + 1] their flow lists' starts in the round's walk
  uint32_t* touched = nullptr;         // [links] links a flow frozen this round crosses
  uint32_t* list_sizes = nullptr;      // [2]: bottlenecks, touched
  double* rates = nullptr;             // [flows] the result
  Counts* counts = nullptr;            // written by thread 0; null: not counted
};

DTSIM_TEAM_FN inline double weight_of(Units u) { return static_cast<double>(u) * kWeightUnit; }

DTSIM_TEAM_FN inline Units units_of(const Problem& p, uint32_t f) {
  return p.weight == nullptr ? kUnitsPerWeight : static_cast<Units>(p.weight[f] / kWeightUnit);
}

template <typename Team>
DTSIM_TEAM_FN void fill(Team& b, const Problem& p, const Scratch& s) {
  const uint32_t threads = b.size();
  const uint32_t me = b.rank();
  const double inf = Team::infinity();

  for (uint32_t l = me; l < p.links; l += threads) {
    s.remaining[l] = p.capacity[l];
    s.frozen_units_now[l] = 0;
    const uint32_t count = p.link_offsets[l + 1] - p.link_offsets[l];
    s.unfrozen_units[l] = p.weight == nullptr ? count * kUnitsPerWeight : 0;
  }
  for (uint32_t f = me; f < p.flows; f += threads) {
    const bool crosses_nothing = p.flow_offsets[f] == p.flow_offsets[f + 1];
    s.frozen[f] = crosses_nothing ? 1 : 0;
    s.rates[f] = crosses_nothing ? inf : 0.0;
  }
  if (me == 0 && s.counts != nullptr) *s.counts = Counts{};
  b.sync();
  if (p.weight != nullptr) {
    for (uint32_t f = me; f < p.flows; f += threads) {
      const Units u = units_of(p, f);
      for (uint32_t i = p.flow_offsets[f]; i < p.flow_offsets[f + 1]; ++i) b.add(&s.unfrozen_units[p.flow_links[i]], u);
    }
    b.sync();
  }
  for (uint32_t l = me; l < p.links; l += threads) {
    s.share[l] = s.unfrozen_units[l] > 0 ? s.remaining[l] / weight_of(s.unfrozen_units[l]) : inf;
  }
  b.sync();

  for (;;) {
    // Both lists were last read before the previous round's final barrier, and are next written
    // after the barrier in min().
    if (me == 0) {
      s.list_sizes[0] = 0;
      s.list_sizes[1] = 0;
    }
    double local = inf;
    for (uint32_t l = me; l < p.links; l += threads) local = s.share[l] < local ? s.share[l] : local;
    const double m = b.min(local);  // a barrier: every thread sees the same m
    if (!(m < inf)) break;
    const double threshold = m * (1.0 + kTieTolerance);
    for (uint32_t l = me; l < p.links; l += threads) {
      if (s.share[l] <= threshold) s.bottlenecks[b.add(&s.list_sizes[0], 1u)] = l;
    }
    b.sync();
    const uint32_t listed = s.list_sizes[0];
    if (me == 0) {
      // Each link is a bottleneck once, so this serial pass costs the links over the whole solve.
      uint32_t at = 0;
      for (uint32_t i = 0; i < listed; ++i) {
        s.entry_start[i] = at;
        const uint32_t l = s.bottlenecks[i];
        at += p.link_offsets[l + 1] - p.link_offsets[l];
      }
      s.entry_start[listed] = at;
    }
    b.sync();

    // The round's walk: entry e of the concatenated bottleneck lists, threads striding over it,
    // each holding kEntriesInFlight entries at once.
    const uint32_t entries = s.entry_start[listed];
    for (uint32_t base = me; base < entries; base += threads * kEntriesInFlight) {
      uint32_t flow[kEntriesInFlight];
      for (uint32_t k = 0; k < kEntriesInFlight; ++k) {
        const uint32_t e = base + k * threads;
        flow[k] = ~0u;
        if (e >= entries) continue;
        uint32_t lo = 0;  // the last bottleneck whose list starts at or before e
        uint32_t hi = listed;
        while (hi - lo > 1) {
          const uint32_t mid = (lo + hi) / 2;
          if (s.entry_start[mid] <= e) lo = mid; else hi = mid;
        }
        flow[k] = p.link_flows[p.link_offsets[s.bottlenecks[lo]] + (e - s.entry_start[lo])];
      }
      for (uint32_t k = 0; k < kEntriesInFlight; ++k) {
        const uint32_t f = flow[k];
        if (f == ~0u || b.read(&s.frozen[f]) != 0 || !b.claim(&s.frozen[f])) continue;
        const Units u = units_of(p, f);
        s.rates[f] = m * weight_of(u);
        for (uint32_t i = p.flow_offsets[f]; i < p.flow_offsets[f + 1]; ++i) {
          const uint32_t l = p.flow_links[i];
          if (b.add(&s.frozen_units_now[l], u) == 0) s.touched[b.add(&s.list_sizes[1], 1u)] = l;
        }
      }
    }
    b.sync();

    // Capacity drops by m per unit of weight frozen, once per touched link (CpuMaxMinSolver's).
    const uint32_t touched = s.list_sizes[1];
    for (uint32_t i = me; i < touched; i += threads) {
      const uint32_t l = s.touched[i];
      const Units u = s.frozen_units_now[l];
      const double left = s.remaining[l] - m * weight_of(u);
      s.remaining[l] = left > 0 ? left : 0;
      s.unfrozen_units[l] -= u;
      s.frozen_units_now[l] = 0;
      s.share[l] = s.unfrozen_units[l] > 0 ? s.remaining[l] / weight_of(s.unfrozen_units[l]) : inf;
    }
    if (me == 0 && s.counts != nullptr) {
      Counts& c = *s.counts;
      ++c.rounds;
      c.link_scans += p.links;
      c.bottlenecks += listed;
      c.entries += entries;
      c.charges += touched;
    }
    b.sync();
  }
}

// Bytes of per-link state (share and frozen weight) a GPU keeps in an SM's shared memory when the
// links fit there.
inline constexpr uint64_t kOnChipBytesPerLink = sizeof(double) + sizeof(Units);

// Bytes a solve uploads: the instance's arrays, both link indexes included.
inline uint64_t upload_bytes(uint64_t flows, uint64_t links, uint64_t pairs, bool weighted) {
  return links * 8 + (flows + 1) * 4 + (links + 1) * 4 + pairs * 4 * 2 + (weighted ? flows * 8 : 0);
}

// Bytes a solve moves through device memory, from its counts: reads and writes of whole elements,
// an atomic counted as a read and a write. With `on_chip`, the links' shares and frozen weights
// sit in the SM's shared memory (the array every round scans and the one every frozen flow's
// links add to), and their traffic is left out. An estimate of traffic, not of time: a round's
// reads depend on one another, so a solve of many small rounds waits on latency.
inline uint64_t bytes_moved(uint64_t flows, uint64_t links, uint64_t pairs, bool weighted, const Counts& c,
                            bool on_chip) {
  const uint64_t w = weighted ? 1 : 0;
  const uint64_t off = on_chip ? 0 : 1;
  const uint64_t init = links * (8 + 8 + 8 + 8 + off * 16) + flows * (8 + 4 + 8) + w * (flows * 8 + pairs * (4 + 16));
  const uint64_t scans = off * c.link_scans * 8 * 2;
  const uint64_t listing = c.bottlenecks * (4 + 8 + 4 + 4) + c.entries * (4 + 4 + 4);
  const uint64_t freezing = flows * (8 + 8 + 8 + w * 8) + pairs * (4 + off * 16);
  const uint64_t charging = c.charges * (4 + 16 + 16 + off * 24);
  return init + scans + listing + freezing + charging;
}

}  // namespace dtsim::network::flow::team
