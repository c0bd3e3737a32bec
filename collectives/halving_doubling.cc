// Recursive halving-doubling (all_reduce; Rabenseifner): log2(n) rounds of reduce-scatter with
// the partner at distance n/2, n/4, ... exchanging half of what remains, then the mirror
// all-gather. The same bytes as a ring in 2 log2(n) latencies; the early, large exchanges go
// to far partners, so across nodes they run at the NIC rate. Not an NCCL algorithm: the tuner
// uses it only when asked.
//
// nccl-tests' hypercube_perf runs the doubling half alone as an all_gather over grouped
// send/recv: each rank puts its part in place, then in round k exchanges everything it holds
// (2^k parts of size/n) with the rank 2^k away, near partners first.
#include <algorithm>
#include <cmath>
#include <vector>

#include "collectives/algorithm_cost.h"
#include "collectives/lowerings.h"
#include "collectives/schedule.h"

namespace dtsim::collectives {

AlgoCost halving_doubling_cost(const HardwareView& hw, const CostQuery& q) {
  const int n = q.shape.ranks;
  const int g = q.shape.ranks_per_node;
  AlgoCost c;
  c.latency_us = hw.params.base_latency_us(q.protocol);
  const int rounds = n > 1 ? static_cast<int>(std::ceil(std::log2(n))) : 0;
  double bw_time_us = 0;
  double remaining = q.bytes;
  for (int r = 0, dist = std::max(1, n / 2); r < rounds; ++r, dist = std::max(1, dist / 2)) {
    remaining /= 2;
    const bool remote = dist >= g && q.shape.nodes > 1;
    const double bw =
        channel_capped(hw, q.protocol, q.channels, remote ? hw.gpu_net_bw : hw.intra_bw, remote);
    const double step = remote ? inter_step_us(hw, q.protocol) : intra_step_us(hw, q.protocol);
    // One round of halving and its mirror round of doubling move the same bytes.
    bw_time_us += 2.0 * remaining / (bw * 1e3);
    c.latency_us += 2.0 * step;
  }
  c.algbw_gbytes = bw_time_us > 0 ? q.bytes / (bw_time_us * 1e3) : 1e30;
  return c;
}

AlgoCost hypercube_cost(const HardwareView& hw, const CostQuery& q) {
  const int n = q.shape.ranks;
  const int g = q.shape.ranks_per_node;
  const auto& p = hw.params;
  AlgoCost c;
  double bw_time_us = 0;
  for (int mask = 1; mask < n; mask *= 2) {
    // A round's partners share a rail across nodes (the same place in their nodes), so every GPU
    // sends through its own NIC.
    const bool remote = mask >= g && q.shape.nodes > 1;
    const double link = remote ? std::min(hw.single_nic_bw, hw.gpu_net_bw)
                               : (g == 2 ? hw.intra_pair_bw : hw.intra_bw) * p.p2p_efficiency;
    const double bw = link * p.bandwidth_fraction(q.protocol) * 1e3;  // bytes per us
    const double bytes = q.bytes * mask / n;
    c.latency_us +=
        p.p2p_latency + (remote ? inter_step_us(hw, q.protocol) : intra_step_us(hw, q.protocol));
    bw_time_us += bytes / bw;
    c.fill_us += p2p_fill_us(p, remote, bytes, bw);  // each round's fill, as send_recv
  }
  c.algbw_gbytes = bw_time_us > 0 ? q.bytes / (bw_time_us * 1e3) : 1e30;
  return c;
}

}  // namespace dtsim::collectives

// Lowering to transfers (schedule.h).

namespace dtsim::collectives {

Schedule halving_doubling_schedule(Bytes bytes, const Communicator& comm, int channels) {
  Schedule s;
  const int n = comm.size();
  if (n <= 1) return s;
  int rounds = 0;
  while ((1 << rounds) < n) ++rounds;
  for (int c = 0; c < channels; ++c) {
    const Bytes buffer = part_of(bytes, channels, c);
    // The part of the channel's buffer rank `r` holds after `level` halvings: each halving cuts
    // the part in two, and the rank keeps the half its next bit (from the top) names.
    auto held = [&](int r, int level) {
      Bytes part = buffer;
      for (int l = 0; l < level; ++l) part = part_of(part, 2, (r >> (rounds - 1 - l)) & 1);
      return part;
    };
    std::vector<uint32_t> last_into(static_cast<size_t>(n), UINT32_MAX);
    // Round at `level` (1..rounds) between ranks `dist` apart: a halving sends each partner the
    // half it keeps and reduces it there; a doubling sends each partner the half the sender holds.
    auto round = [&](int dist, int level, bool reduce, int step) {
      std::vector<uint32_t> now(static_cast<size_t>(n));
      for (int r = 0; r < n; ++r) {
        std::vector<uint32_t> deps;
        if (last_into[static_cast<size_t>(r)] != UINT32_MAX)
          deps.push_back(last_into[static_cast<size_t>(r)]);
        const int p = r ^ dist;
        const Bytes size = held(reduce ? p : r, level);
        now[static_cast<size_t>(p)] =
            s.add(comm.ranks[static_cast<size_t>(r)], comm.ranks[static_cast<size_t>(p)],
                  size, deps, reduce ? size : Bytes(0), step, c);
      }
      last_into = now;
    };
    for (int r = 0; r < rounds; ++r) round(n >> (r + 1), r + 1, true, r);
    for (int r = rounds - 1; r >= 0; --r) round(n >> (r + 1), r + 1, false, 2 * rounds - 1 - r);
  }
  return s;
}

Schedule hypercube_schedule(Bytes bytes, const Communicator& comm, int channels) {
  Schedule s;
  const int n = comm.size();
  if (n <= 1) return s;
  for (int c = 0; c < channels; ++c) {
    // Rank r holds parts [r & ~(mask-1), +mask) before round `mask` and sends them all to r ^ mask,
    // once what it received in the round before has arrived.
    std::vector<uint32_t> last_into(static_cast<size_t>(n), UINT32_MAX);
    int step = 0;
    for (int mask = 1; mask < n; mask *= 2, ++step) {
      std::vector<uint32_t> now(static_cast<size_t>(n), UINT32_MAX);
      for (int r = 0; r < n; ++r) {
        const int p = r ^ mask;
        if (p >= n) continue;
        Bytes held(0);
        for (int part = r & ~(mask - 1); part < std::min(n, (r & ~(mask - 1)) + mask); ++part)
          held = held + part_of(part_of(bytes, n, part), channels, c);
        std::vector<uint32_t> deps;
        if (last_into[static_cast<size_t>(r)] != UINT32_MAX)
          deps.push_back(last_into[static_cast<size_t>(r)]);
        now[static_cast<size_t>(p)] =
            s.add(comm.ranks[static_cast<size_t>(r)], comm.ranks[static_cast<size_t>(p)], held,
                  deps, Bytes(0), step, c);
      }
      last_into = now;
    }
  }
  return s;
}

}  // namespace dtsim::collectives
