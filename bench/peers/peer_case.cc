#include "bench/peers/peer_case.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "sim/rng.h"
#include "topology/catalog.h"
#include "topology/node_template.h"
#include "topology/topology_file.h"

namespace dtsim::bench::peers {

std::optional<Pattern> parse_pattern(std::string_view s) {
  if (s == "all-to-all") return Pattern::all_to_all;
  if (s == "permutation") return Pattern::permutation;
  if (s == "ring") return Pattern::ring;
  return std::nullopt;
}

std::string_view name(Pattern p) {
  switch (p) {
    case Pattern::all_to_all:
      return "all-to-all";
    case Pattern::permutation:
      return "permutation";
    case Pattern::ring:
      return "ring";
  }
  return "all-to-all";
}

topology::ClusterSpec peer_cluster_spec(const PeerCaseSpec& spec) {
  topology::ClusterSpec s = *topology::find_node_preset("hgx-h100");
  s.nodes = spec.hosts;
  s.gpus_per_node = 1;
  s.scale_up.domain_gpus = 1;
  s.nic.count = 1;
  s.nic.bandwidth = spec.nic;
  s.fabric.kind = topology::FabricKind::fat_tree;
  s.fabric.tiers = 2;
  s.fabric.radix = 64;
  s.fabric.oversubscription = 1;
  s.fabric.link.bandwidth = spec.nic;
  if (spec.link_latency) s.fabric.link.latency = *spec.link_latency;
  s.fabric.routing = spec.routing;
  return s;
}

std::unique_ptr<topology::Cluster> peer_cluster(const PeerCaseSpec& spec) {
  if (!spec.bare_hosts) return topology::build_cluster(peer_cluster_spec(spec));
  // A node of one part, the GPU, which is also its fabric port: the fat-tree cables it to a leaf.
  topology::NodeTemplate host;
  host.parts.push_back({.kind = topology::DeviceKind::gpu, .name = "gpu0", .local = 0});
  host.nics.push_back(0);
  host.gpus = 1;
  return topology::build_nodes_and_fabric(peer_cluster_spec(spec), host);
}

std::vector<network::Transfer> peer_flows(const PeerCaseSpec& spec) {
  sim::Rng rng(spec.seed, sim::stream_id("bench/peers"));
  std::vector<std::pair<int, int>> pairs;
  const int n = spec.hosts;
  if (spec.pattern == Pattern::all_to_all) {
    pairs.reserve(static_cast<size_t>(n) * static_cast<size_t>(n - 1));
    for (int s = 0; s < n; ++s) {
      for (int d = 0; d < n; ++d) {
        if (s != d) pairs.emplace_back(s, d);
      }
    }
  } else if (spec.pattern == Pattern::ring) {
    for (int s = 0; s < n; ++s) pairs.emplace_back(s, (s + 1) % n);
  } else {
    // A uniform shuffle, then each fixed point swapped with its neighbour's target: a derangement
    // (no host sends to itself) that is still a permutation.
    std::vector<int> to(static_cast<size_t>(n));
    std::iota(to.begin(), to.end(), 0);
    for (size_t i = to.size(); i > 1; --i) std::swap(to[i - 1], to[rng.below(i)]);
    for (size_t i = 0; n > 1 && i < to.size(); ++i) {
      if (to[i] == static_cast<int>(i)) std::swap(to[i], to[(i + 1) % to.size()]);
    }
    for (int s = 0; s < n; ++s) pairs.emplace_back(s, to[static_cast<size_t>(s)]);
  }
  std::vector<network::Transfer> flows;
  flows.reserve(pairs.size());
  for (const auto& [src, dst] : pairs) {
    flows.push_back({.src_gpu = src, .dst_gpu = dst, .bytes = spec.bytes, .flow_hash = rng.next()});
  }
  return flows;
}

}  // namespace dtsim::bench::peers
