// PeerCase: one fabric and one flow list that dtsim and a peer simulator (SimGrid) both run: N
// one-GPU hosts with one NIC each on a non-blocking 2-tier fat-tree under ECMP, every flow
// started at t = 0. The fabric is dtsim's cluster graph; a peer reads its links and each flow's
// route from it (network::transfer_route, the route dtsim's flow model gives the flow), so both
// simulators put the same flows on the same links.
//   const PeerCaseSpec spec{.hosts = 64, .pattern = Pattern::all_to_all};
//   auto cluster = topology::build_cluster(peer_cluster_spec(spec));
//   std::vector<network::Transfer> flows = peer_flows(spec);
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "network/network_model.h"
#include "sim/units.h"
#include "topology/cluster_spec.h"

namespace dtsim::bench::peers {

enum class Pattern {
  all_to_all,   // every host sends to every other host: N (N - 1) flows
  permutation,  // every host sends to one other, a random derangement: N flows
};
std::optional<Pattern> parse_pattern(std::string_view s);
std::string_view name(Pattern p);

struct PeerCaseSpec {
  int hosts = 64;
  Pattern pattern = Pattern::all_to_all;
  Bytes bytes = Bytes(1'000'000);        // per flow
  Bandwidth nic = Bandwidth::gbps(100);  // every NIC and fabric link, per direction
  uint64_t seed = 1;                     // the permutation and the flows' ECMP hashes
  // The share of line rate links carry in both simulators (dtsim's FlowModelOptions::
  // link_efficiency; SimGrid's link bandwidths are scaled by it). 1: the bare fabric.
  network::LinkEfficiency efficiency;
};

// `hosts` nodes of one GPU and one NIC, on a 2-tier fat-tree of radix-64 switches (up to 2,048
// hosts) with as many uplinks as downlinks, its links as fast as the NICs, routed by ECMP.
topology::ClusterSpec peer_cluster_spec(const PeerCaseSpec& spec);

// The case's flows, each with its own ECMP hash from `seed`, in a fixed order (source-major).
std::vector<network::Transfer> peer_flows(const PeerCaseSpec& spec);

}  // namespace dtsim::bench::peers
