// Ring: NCCL's default for large messages. Every channel lays a ring through all ranks, crossing
// each node boundary once per direction on its own NIC (rings are laid across rails), so a ring
// edge inside a node runs at the scale-up rate and the edge between nodes shares the node's NICs
// with the other channels. all_reduce is a reduce-scatter then an all-gather: 2(n-1) steps of
// size/n; all_gather and reduce_scatter are n-1 such steps; broadcast and reduce pipeline the
// whole buffer down a chain of n-1 hops.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "collectives/algorithm_cost.h"
#include "collectives/lowerings.h"
#include "collectives/schedule.h"

namespace dtsim::collectives {

AlgoCost ring_cost(const HardwareView& hw, const CostQuery& q) {
  const int n = q.shape.ranks;
  const int nodes = q.shape.nodes;
  const int g = q.shape.ranks_per_node;
  AlgoCost c;
  c.latency_us = hw.params.base_latency_us(q.protocol);
  if (n <= 1) {
    c.algbw_gbytes = std::numeric_limits<double>::infinity();
    return c;
  }
  const bool all_reduce = q.kind == CollectiveKind::all_reduce;
  const bool chain = q.kind == CollectiveKind::broadcast || q.kind == CollectiveKind::reduce;
  const int steps = all_reduce ? 2 * (n - 1) : n - 1;
  const int inter_steps = nodes > 1 ? (all_reduce ? 2 * (nodes - 1) : nodes - 1) : 0;
  c.latency_us += (steps - inter_steps) * intra_step_us(hw, q.protocol) +
                  inter_steps * inter_step_us(hw, q.protocol);

  constexpr double inf = std::numeric_limits<double>::infinity();
  // Across nodes, one of a node's g ring edges per channel leaves through a NIC (over PCIe), and
  // the rings rotate which GPU that is, so each GPU's scale-up link carries (g - 1) / g of the
  // ring's traffic.
  const double intra_share = nodes > 1 && g > 1 ? static_cast<double>(g) / (g - 1) : 1.0;
  const double intra = g > 1 ? (g == 2 ? hw.intra_pair_bw : hw.intra_bw) * intra_share : inf;
  // On a torus, a dragonfly or 2:1 leaves the hop between nodes is priced by the fabric's links.
  const double inter = nodes > 1 ? hw.net_bw(q.shape, HardwareView::Pattern::ring) : inf;
  const double busbw =
      channel_capped(hw, q.protocol, q.channels, std::min(intra, inter), nodes > 1);
  c.algbw_gbytes = busbw / busbw_factor(q.kind, n);
  const double per_hop = chain ? q.bytes : q.bytes / n;
  c.fill_us = pipeline_fill_us(hw, q.protocol, steps, per_hop, q.channels, busbw);
  // Across nodes each channel's connection sends every step's chunk (a chain sends its whole
  // share down it once, in slots).
  if (nodes > 1) {
    const int channels = std::max(1, q.channels);
    c.window_us = net_window_us(
        hw, chain ? net_messages(q.protocol, 1, q.bytes / channels)
                  : net_messages(q.protocol, steps, q.bytes / (static_cast<double>(n) * channels)));
  }
  return c;
}

}  // namespace dtsim::collectives

// Lowering to transfers (schedule.h).

namespace dtsim::collectives {

// Channel c's ring visits each node's ranks rotated by c, so consecutive channels leave and enter
// a node through different GPUs and hence different NICs: NCCL lays its rings across the rails
// this way, and without it every channel would queue on one NIC pair.
std::vector<int> ring_order(const Communicator& comm, int channel, int ranks_per_node) {
  const int n = comm.size();
  std::vector<int> order(comm.ranks.begin(), comm.ranks.end());
  const int g = ranks_per_node;
  if (g <= 1 || n % g != 0 || n == g) return order;
  for (int base = 0; base < n; base += g) {
    for (int j = 0; j < g; ++j) {
      order[static_cast<size_t>(base + j)] = comm.ranks[static_cast<size_t>(base + (j + channel) % g)];
    }
  }
  return order;
}

int spread_channels(int channels, int ranks, int ranks_per_node, int nics_per_gpu) {
  const int g = ranks_per_node;
  if (g <= 1 || ranks <= g || channels <= g) return channels;  // at most one channel per NIC
  const int unit = g * std::max(1, nics_per_gpu);
  return (channels + unit - 1) / unit * unit;
}

namespace {

// Each channel's chain follows its ring from the root (comm.ranks[0]): root -> ... -> the rank
// before it, so channels leave and enter nodes through different GPUs as the rings do. Sliced,
// the buffer is cut into slices that follow each other down the chain: a slice leaves a rank
// once it has arrived there (and, for reduce, been added to the local one), and a hop carries a
// channel's slices in order, so the hops work at once on different slices; slices of about 256
// KiB, at most 32 per channel, as NCCL pipelines its chunks. Streamed, every hop carries its
// channel's whole share at once, the limit of infinitely fine slices.
Schedule chain_schedule(CollectiveKind kind, Bytes bytes, const Communicator& comm,
                        int tuned_channels, int ranks_per_node, int nics_per_gpu, bool streamed) {
  Schedule s;
  const int n = comm.size();
  if (n <= 1) return s;
  const int channels = spread_channels(tuned_channels, n, ranks_per_node, nics_per_gpu);
  auto nic_of = [&](int c) { return nic_slot(c, ranks_per_node, std::max(1, nics_per_gpu)); };
  const int slices =
      streamed
          ? 1
          : static_cast<int>(std::clamp<int64_t>(bytes.count() / channels / (256 * 1024), 1, 32));
  for (int c = 0; c < channels; ++c) {
    const Bytes per_channel = part_of(bytes, channels, c);
    const std::vector<int> ring = ring_order(comm, c, ranks_per_node);
    const auto root_at =
        static_cast<int>(std::find(ring.begin(), ring.end(), comm.ranks[0]) - ring.begin());
    auto at = [&](int i) { return ring[static_cast<size_t>((root_at + i) % n)]; };
    std::vector<uint32_t> prev_hop(static_cast<size_t>(slices), UINT32_MAX);
    for (int h = 0; h + 1 < n; ++h) {
      // reduce flows towards the root: last -> ... -> root; broadcast away from it.
      const int from = kind == CollectiveKind::reduce ? at(n - 1 - h) : at(h);
      const int to = kind == CollectiveKind::reduce ? at(n - 2 - h) : at(h + 1);
      uint32_t last_on_hop = UINT32_MAX;
      for (int j = 0; j < slices; ++j) {
        std::vector<uint32_t> deps;
        if (!streamed && prev_hop[static_cast<size_t>(j)] != UINT32_MAX)
          deps.push_back(prev_hop[static_cast<size_t>(j)]);
        if (last_on_hop != UINT32_MAX) deps.push_back(last_on_hop);
        const Bytes piece = part_of(per_channel, slices, j);
        const Bytes reduce = kind == CollectiveKind::reduce ? piece : Bytes(0);
        last_on_hop = s.add(from, to, piece, deps, reduce, h, c, nic_of(c));
        prev_hop[static_cast<size_t>(j)] = last_on_hop;
      }
    }
  }
  return s;
}

}  // namespace

Schedule streamed_chain_schedule(CollectiveKind kind, Bytes bytes, const Communicator& comm,
                                 int channels, int ranks_per_node, int nics_per_gpu) {
  return chain_schedule(kind, bytes, comm, channels, ranks_per_node, nics_per_gpu, true);
}

Schedule ring_schedule(CollectiveKind kind, Bytes bytes, const Communicator& comm,
                       int tuned_channels, int ranks_per_node, int nics_per_gpu) {
  Schedule s;
  const int n = comm.size();
  if (n <= 1) return s;
  const int channels = spread_channels(tuned_channels, n, ranks_per_node, nics_per_gpu);
  auto nic_of = [&](int c) { return nic_slot(c, ranks_per_node, std::max(1, nics_per_gpu)); };
  if (kind == CollectiveKind::broadcast || kind == CollectiveKind::reduce) {
    return chain_schedule(kind, bytes, comm, tuned_channels, ranks_per_node, nics_per_gpu, false);
  }
  const bool all_reduce = kind == CollectiveKind::all_reduce;
  const int steps = all_reduce ? 2 * (n - 1) : n - 1;
  const int reducing_steps = kind == CollectiveKind::all_gather ? 0 : n - 1;
  // Ring position r sends chunk (r - step) mod n of its channel at every step, in the
  // reduce-scatter and the all-gather alike.
  auto chunk = [&](int c, int r, int st) {
    return part_of(bytes, int64_t{n} * channels, int64_t{c} * n + ((r - st) % n + n) % n);
  };
  for (int c = 0; c < channels; ++c) {
    const std::vector<int> ring = ring_order(comm, c, ranks_per_node);
    // last_into[r]: the transfer that last delivered into ring position r.
    std::vector<uint32_t> last_into(static_cast<size_t>(n), UINT32_MAX);
    for (int st = 0; st < steps; ++st) {
      std::vector<uint32_t> now(static_cast<size_t>(n));
      for (int r = 0; r < n; ++r) {
        std::vector<uint32_t> deps;
        if (last_into[static_cast<size_t>(r)] != UINT32_MAX)
          deps.push_back(last_into[static_cast<size_t>(r)]);
        const int next = (r + 1) % n;
        const Bytes b = chunk(c, r, st);
        now[static_cast<size_t>(next)] =
            s.add(ring[static_cast<size_t>(r)], ring[static_cast<size_t>(next)], b, deps,
                  st < reducing_steps ? b : Bytes(0), st, c, nic_of(c));
      }
      last_into = now;
    }
  }
  return s;
}

}  // namespace dtsim::collectives
