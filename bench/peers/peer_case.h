// PeerCase: one fabric and one flow list that dtsim and a peer simulator (SimGrid, ns-3) both
// run: N one-GPU hosts with one NIC each on a non-blocking 2-tier fat-tree under ECMP (or
// spraying), every flow started at t = 0. The fabric is dtsim's cluster graph; a peer reads its
// links from it, and SimGrid each flow's route too (network::transfer_route, the route dtsim's
// flow model gives the flow), so both simulators put the same flows on the same links.
//   const PeerCaseSpec spec{.hosts = 64, .pattern = Pattern::all_to_all};
//   std::unique_ptr<topology::Cluster> cluster = peer_cluster(spec);
//   std::vector<network::Transfer> flows = peer_flows(spec);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "network/network_model.h"
#include "sim/units.h"
#include "topology/cluster.h"
#include "topology/cluster_spec.h"

namespace dtsim::bench::peers {

enum class Pattern {
  all_to_all,   // every host sends to every other host: N (N - 1) flows
  permutation,  // every host sends to one other, a random derangement: N flows
  ring,         // host i sends to host i + 1 (mod N): N flows, no link shared
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
  // Every fabric link's latency, NIC cables included; unset: the preset's (500 ns).
  std::optional<Time> link_latency;
  topology::Routing routing = topology::Routing::ecmp;
  // A host is its GPU alone, cabled straight to its leaf as an ns-3 node with one point-to-point
  // device is (peer_cluster). Otherwise a node of the hgx-h100 preset cut down to one GPU and one
  // NIC, whose PCIe links and NIC add 2.5 us to a route.
  bool bare_hosts = false;
};

// `hosts` nodes of one GPU and one NIC, on a 2-tier fat-tree of radix-64 switches (32 hosts a
// leaf, 32 spines, up to 2,048 hosts) with as many uplinks as downlinks, its links as fast as the
// NICs, routed by `routing`.
topology::ClusterSpec peer_cluster_spec(const PeerCaseSpec& spec);

// The cluster graph of peer_cluster_spec: build_cluster's, or with bare_hosts the same fabric
// cabled to GPUs that are their nodes' only device.
std::unique_ptr<topology::Cluster> peer_cluster(const PeerCaseSpec& spec);

// The case's flows, each with its own ECMP hash from `seed`, in a fixed order (source-major).
std::vector<network::Transfer> peer_flows(const PeerCaseSpec& spec);

}  // namespace dtsim::bench::peers
