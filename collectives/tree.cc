// Tree (all_reduce): inside each node the ranks form a chain; across nodes NCCL builds two
// complementary binary trees (a double binary tree), each carrying half the data, so every node
// is a leaf in one of them. Data is reduced up and broadcast down, pipelined in slices.
// Per rank the chain carries the buffer up and down (2x the bytes per direction of a middle
// rank), and each node sends the buffer once (2 nodes) or twice (interior in one tree) into the
// network: tree wins where the network, not NVLink, is the bottleneck, and at latency, because
// it needs log2(nodes) network steps instead of 2(nodes-1).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "collectives/algorithm_cost.h"
#include "collectives/lowerings.h"
#include "collectives/schedule.h"

namespace dtsim::collectives {

AlgoCost tree_cost(const HardwareView& hw, const CostQuery& q) {
  const int nodes = q.shape.nodes;
  const int g = q.shape.ranks_per_node;
  const int levels = nodes > 1 ? static_cast<int>(std::ceil(std::log2(nodes))) : 0;
  AlgoCost c;
  c.latency_us =
      hw.params.base_latency_us(q.protocol) +
      2.0 * ((g - 1) * intra_step_us(hw, q.protocol) + levels * inter_step_us(hw, q.protocol));
  if (q.shape.ranks <= 1) {
    c.algbw_gbytes = std::numeric_limits<double>::infinity();
    return c;
  }
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double chain = g > 1 ? (g == 2 ? hw.intra_pair_bw : hw.intra_bw / 2.0) : inf;
  const double net =
      nodes > 1 ? hw.net_bw(q.shape, HardwareView::Pattern::tree) / (nodes == 2 ? 1.0 : 2.0) : inf;
  const double per_channel =
      q.protocol == Protocol::ll
          ? channel_rate(hw.params, Protocol::ll, nodes > 1, hw.compute_capability) / 2.0
          : (nodes > 1 ? hw.params.tree_net_channel_bandwidth : hw.params.tree_channel_bandwidth);
  const double algbw = std::min(std::min(chain, net) * hw.params.bandwidth_fraction(q.protocol),
                                per_channel * q.channels);
  c.algbw_gbytes = algbw;
  const int hops = 2 * (g - 1 + levels);
  c.fill_us = pipeline_fill_us(hw, q.protocol, hops, q.bytes, q.channels, algbw);
  return c;
}

}  // namespace dtsim::collectives

// Lowering to transfers (schedule.h).

namespace dtsim::collectives {

// A chain inside each node reduces to its first rank; node leaders form a binary tree (tree
// position k's children are 2k+1 and 2k+2) that reduces to the root and broadcasts back; each
// chain then broadcasts inside its node. Every channel carries bytes/channels. Half the channels
// run the tree with its nodes in order (node k at position k), the other half mirrored (node
// nodes-1-k at position k): the nodes that are interior in one are leaves in the other, NCCL's
// double binary tree, so every node sends and receives about the same bytes.
namespace {

// Slices a channel's share is cut into so that the hops of the chain and the tree overlap, as
// NCCL pipelines its chunks: each slice moves on once it has arrived, and a link carries a
// channel's slices in order. At most 16, and none smaller than 64 KiB.
int tree_slices(Bytes piece) {
  return static_cast<int>(std::clamp<int64_t>(piece.count() / (64 * 1024), 1, 16));
}

}  // namespace

Schedule tree_schedule(Bytes bytes, const Communicator& comm, int tuned_channels, int ranks_per_node,
                       int nics_per_gpu) {
  Schedule s;
  const int n = comm.size();
  if (n <= 1) return s;
  const int g = std::max(1, std::min(ranks_per_node, n));
  const int nodes = (n + g - 1) / g;
  // Both trees on every NIC: more channels than ranks per node run as a multiple of twice
  // the channels one round over every GPU's NICs takes (spread_channels), so each NIC carries as
  // many mirrored channels as plain ones.
  const int nics = std::max(1, nics_per_gpu);
  const int round = g * nics;
  const int channels = nodes > 2 && tuned_channels > g ? (tuned_channels + 2 * round - 1) / (2 * round) * (2 * round)
                                                       : spread_channels(tuned_channels, n, g, nics);
  auto locals = [&](int node) { return std::min(g, n - node * g); };
  const int slices = tree_slices(Bytes(bytes.count() / channels));
  constexpr uint32_t kNone = UINT32_MAX;
  for (int c = 0; c < channels; ++c) {
    // Channel c enters and leaves each node through local GPU c (mod the node's size) and that
    // GPU's NIC slot (c / g) mod its NICs, so the channels spread over the node's NICs as NCCL's
    // trees do. Tree position k holds node k, or node nodes-1-k in the mirrored tree; the parity flips
    // every round over the NICs so that a NIC's channels alternate between the two trees.
    const bool mirrored = nodes > 2 && (c + c / round) % 2 == 1;
    const int nic = nic_slot(c, g, nics);
    const Bytes piece = part_of(bytes, channels, c);
    Bytes slice;
    auto node_at = [&](int position) { return mirrored ? nodes - 1 - position : position; };
    auto size_at = [&](int position) { return locals(node_at(position)); };
    // Across nodes the chain starts at the channel's GPU (its NIC); inside one node every channel
    // runs the same chain, as NCCL's NVSwitch tree graphs do: its middle GPUs carry the buffer up
    // and down, 2 x S through their links, the figure the forced-tree measurements show.
    const int rotation = nodes > 1 ? c : 0;
    auto rank = [&](int position, int i) {
      const int node = node_at(position);
      return comm.ranks[static_cast<size_t>(node * g + (i + rotation) % locals(node))];
    };
    // prev[hop]: this channel's previous slice on that hop, which the next slice follows.
    std::vector<uint32_t> prev;
    size_t hop = 0;
    auto add = [&](int src, int dst, std::vector<uint32_t> deps, Bytes reduce, int step) {
      if (hop == prev.size()) prev.push_back(kNone);
      if (prev[hop] != kNone) deps.push_back(prev[hop]);
      const uint32_t t = s.add(src, dst, slice, deps, reduce, step, c, nic);
      prev[hop++] = t;
      return t;
    };
    for (int j = 0; j < slices; ++j) {
      hop = 0;
      slice = part_of(piece, slices, j);
      std::vector<std::vector<uint32_t>> ready(static_cast<size_t>(nodes));
      for (int k = nodes - 1; k >= 0; --k) {
        std::vector<uint32_t> deps;
        for (int i = size_at(k) - 1; i >= 1; --i) deps = {add(rank(k, i), rank(k, i - 1), deps, slice, 0)};
        ready[static_cast<size_t>(k)] = deps;
        for (int child : {2 * k + 1, 2 * k + 2}) {
          if (child >= nodes) continue;
          ready[static_cast<size_t>(k)].push_back(
              add(rank(child, 0), rank(k, 0), ready[static_cast<size_t>(child)], slice, 1));
        }
      }
      std::vector<std::vector<uint32_t>> down(static_cast<size_t>(nodes));
      down[0] = ready[0];
      for (int k = 0; k < nodes; ++k) {
        for (int child : {2 * k + 1, 2 * k + 2}) {
          if (child >= nodes) continue;
          down[static_cast<size_t>(child)] = {
              add(rank(k, 0), rank(child, 0), down[static_cast<size_t>(k)], Bytes(0), 2)};
        }
        std::vector<uint32_t> deps = down[static_cast<size_t>(k)];
        for (int i = 0; i + 1 < size_at(k); ++i) deps = {add(rank(k, i), rank(k, i + 1), deps, Bytes(0), 3)};
      }
    }
  }
  return s;
}

}  // namespace dtsim::collectives
