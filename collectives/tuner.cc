#include "collectives/tuner.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <string>
#include <vector>

#include "sim/error.h"

namespace dtsim::collectives {
namespace {

// What NCCL itself chooses among, per operation (halving-doubling and hierarchical are dtsim's
// own and run only when asked for).
std::span<const Algorithm> nccl_candidates(CollectiveKind kind) {
  static constexpr std::array kAllReduce = {Algorithm::ring,           Algorithm::tree,
                                            Algorithm::nvls,           Algorithm::nvls_tree,
                                            Algorithm::collnet_direct, Algorithm::collnet_chain};
  static constexpr std::array kGatherScatter = {Algorithm::ring, Algorithm::pat, Algorithm::nvls};
  static constexpr std::array kRooted = {Algorithm::ring};
  static constexpr std::array kAllToAll = {Algorithm::pairwise};
  static constexpr std::array kSendRecv = {Algorithm::p2p};
  switch (kind) {
    case CollectiveKind::all_reduce:
      return kAllReduce;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      return kGatherScatter;
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce:
      return kRooted;
    case CollectiveKind::all_to_all:
      return kAllToAll;
    case CollectiveKind::send_recv:
    case CollectiveKind::gather:
    case CollectiveKind::scatter:
    case CollectiveKind::hypercube:
      return kSendRecv;
  }
  return kRooted;
}

constexpr std::array kProtocols = {Protocol::ll, Protocol::ll128, Protocol::simple};

bool is_power_of_two(int n) {
  return n > 0 && std::has_single_bit(static_cast<unsigned>(n));
}

// NCCL's ring search keeps at most MAXCHANNELS / 2 = 16 ring paths (init.cc:
// ringGraph->maxChannels) and ncclTopoDupChannels doubles them only up to that bound, so a ring
// that crosses nodes runs 16 channels, each leaving a domain through its own NIC, however many
// NICs the domain has (a GB200 NVL72 rack has 72).
constexpr int kRingSearchMaxChannels = 16;

// Across more than two rack-scale NVLink domains (MNNVL, more than 8 GPUs a domain) NCCL runs the
// ring where it has one, not NVLS-tree or the tree. CoreWeave's GB200 NVL72 all_reduce over 20
// racks costs 4.4-5.2 ms more than its bytes at every size from 512 MB to 16 GB: 2(n - 1) = 2,878
// ring steps at 1.6-1.8 us (NCCL's LL128 NVLink step is 1.9 us), where NVLS-tree's five tree
// levels cost tens of microseconds; over 2 racks the same system runs NVLS-tree, as NCCL's model
// prices NVLS-tree's inter-node rate double on at most two nodes (tuning.cc) and switches its
// per-channel tables to the N4+ column beyond (docs/validation-errors.md, "By class"). Named
// explicitly, either still runs there.
bool nccl_runs_ring_across_racks(const HardwareView& hw, const CommShape& shape) {
  return hw.domain_gpus > 8 && shape.nodes > 2;
}

}  // namespace

std::string algorithm_unsupported(const HardwareView& hw, CollectiveKind kind, Algorithm algo,
                                  const CommShape& shape) {
  using K = CollectiveKind;
  const bool ar = kind == K::all_reduce;
  const bool ag_rs = kind == K::all_gather || kind == K::reduce_scatter;
  const std::string op(name(kind));
  switch (algo) {
    case Algorithm::ring:
      if (point_to_point(kind)) return "ring does not run " + op;
      return {};
    case Algorithm::tree:
      if (!ar) return "tree runs only all_reduce, not " + op;
      return {};
    case Algorithm::nvls:
      if (!ar && !ag_rs) return "nvls runs all_reduce, all_gather and reduce_scatter, not " + op;
      if (!hw.nvswitch) return "nvls needs an NVSwitch scale-up fabric (scale_up.kind: nvswitch)";
      if (hw.compute_capability < 90)
        return "nvls needs compute capability >= 90 (Hopper), the GPU has " +
               std::to_string(hw.compute_capability);
      if (shape.nodes > 1) return "nvls spans one NVLink domain; across nodes use nvls_tree";
      if (shape.ranks < 2) return "nvls needs at least 2 ranks";
      return {};
    case Algorithm::nvls_tree:
      if (!ar) return "nvls_tree runs only all_reduce, not " + op;
      if (!hw.nvswitch || hw.compute_capability < 90)
        return "nvls_tree needs NVSwitch and compute capability >= 90";
      if (shape.nodes < 2)
        return "nvls_tree needs more than one node (NCCL disables it on a single node)";
      return {};
    case Algorithm::collnet_direct:
    case Algorithm::collnet_chain:
      if (!ar) return std::string(name(algo)) + " runs only all_reduce here, not " + op;
      if (!hw.sharp)
        return std::string(name(algo)) + " needs in-network reduction (cluster.fabric.sharp: true)";
      if (shape.nodes < 2) return std::string(name(algo)) + " needs more than one node";
      if (algo == Algorithm::collnet_direct && (!hw.nvswitch || shape.ranks_per_node > 8)) {
        return "collnet_direct needs an NVSwitch node with at most 8 GPUs";
      }
      return {};
    case Algorithm::pat:
      if (!ag_rs) return "pat runs all_gather and reduce_scatter, not " + op;
      if (shape.ranks_per_node != 1 || shape.nodes < 2)
        return "pat needs exactly one GPU per node (and more than one node)";
      return {};
    case Algorithm::halving_doubling:
      if (!ar) return "halving_doubling runs only all_reduce, not " + op;
      if (!is_power_of_two(shape.ranks))
        return "halving_doubling needs a power-of-two rank count, got " +
               std::to_string(shape.ranks);
      return {};
    case Algorithm::hierarchical:
      if (!ar) return "hierarchical runs only all_reduce, not " + op;
      return {};
    case Algorithm::pairwise:
      if (kind != K::all_to_all) return "pairwise exchange runs only all_to_all";
      return {};
    case Algorithm::p2p:
      if (!point_to_point(kind) || kind == K::all_to_all)
        return "p2p runs only send_recv, gather, scatter and hypercube";
      if (kind == K::hypercube && !is_power_of_two(shape.ranks))
        return "hypercube needs a power-of-two rank count, got " + std::to_string(shape.ranks);
      return {};
  }
  return "unknown algorithm";
}

std::string protocol_unsupported(const HardwareView& hw, Algorithm algo, Protocol proto,
                                 const CommShape& shape) {
  const bool simple_only = algo == Algorithm::nvls || algo == Algorithm::nvls_tree ||
                           algo == Algorithm::collnet_direct || algo == Algorithm::collnet_chain ||
                           algo == Algorithm::pat;
  if (simple_only && proto != Protocol::simple) {
    return std::string(name(algo)) + " runs only the simple protocol";
  }
  if (proto == Protocol::ll128) {
    // NCCL enables LL128 only on NVLink paths inside a node, with a GPUDirect path to the NIC
    // across nodes, on Volta and later.
    if (shape.ranks_per_node > 1 && hw.intra_class != LinkClass::nvlink) {
      return "ll128 needs NVLink between the GPUs of a node (NCCL disables it over PCIe)";
    }
    if (shape.nodes > 1 && !hw.ll128_net_ok)
      return "ll128 needs a GPUDirect network path (not host-staged sockets)";
    if (hw.compute_capability < 70) return "ll128 needs compute capability >= 70";
  }
  return {};
}

AlgoCost algorithm_cost(const HardwareView& hw, Algorithm algo, const CostQuery& q) {
  switch (algo) {
    case Algorithm::ring:
      return ring_cost(hw, q);
    case Algorithm::tree:
      return tree_cost(hw, q);
    case Algorithm::nvls:
      return nvls_cost(hw, q);
    case Algorithm::nvls_tree:
      return nvls_tree_cost(hw, q);
    case Algorithm::collnet_direct:
      return collnet_direct_cost(hw, q);
    case Algorithm::collnet_chain:
      return collnet_chain_cost(hw, q);
    case Algorithm::pat:
      return pat_cost(hw, q);
    case Algorithm::halving_doubling:
      return halving_doubling_cost(hw, q);
    case Algorithm::hierarchical:
      return hierarchical_cost(hw, q);
    case Algorithm::pairwise:
      return all_to_all_cost(hw, q);
    case Algorithm::p2p:
      return q.kind == CollectiveKind::send_recv   ? send_recv_cost(hw, q)
             : q.kind == CollectiveKind::hypercube ? hypercube_cost(hw, q)
                                                   : gather_scatter_cost(hw, q);
  }
  return ring_cost(hw, q);
}

namespace {

// "ring, tree": a list of choices, for messages.
template <class E>
std::string names_of(const std::vector<E>& list) {
  std::string out;
  for (const E& e : list) out += (out.empty() ? "" : ", ") + std::string(name(e));
  return out;
}

}  // namespace

Tuner::Tuner(const HardwareView& hw, const CollectiveOptions& options)
    : hw_(hw), options_(options) {
  if (options_.channels < 0 || options_.channels > 64) {
    throw InputError({}, "collectives.channels",
                     "expected auto or 1..64, got " + std::to_string(options_.channels));
  }
}

TunerChoice Tuner::choose(CollectiveKind kind, double bytes, const CommShape& shape) const {
  const bool p2p_like = point_to_point(kind);
  std::span<const Algorithm> algos = nccl_candidates(kind);
  Algorithm explicit_algo{};
  if (options_.algorithm && !p2p_like) {
    explicit_algo = *options_.algorithm;
    const auto why = algorithm_unsupported(hw_, kind, explicit_algo, shape);
    if (!why.empty()) {
      throw InputError({}, "collectives.algorithm",
                       std::string(name(explicit_algo)) + " cannot run " + std::string(name(kind)) +
                           " here: " + why);
    }
    algos = std::span<const Algorithm>(&explicit_algo, 1);
  }
  // Lists of what auto may choose (NCCL_ALGO=Ring,Tree, NCCL_PROTO=^LL128) narrow NCCL's own.
  std::vector<Algorithm> allowed_algos;
  if (!options_.algorithm && !options_.algorithms.empty() && !p2p_like) {
    for (Algorithm a : algos)
      if (std::find(options_.algorithms.begin(), options_.algorithms.end(), a) !=
          options_.algorithms.end())
        allowed_algos.push_back(a);
    if (allowed_algos.empty()) {
      throw InputError({}, "collectives.algorithm",
                       "none of " + names_of(options_.algorithms) + " runs " +
                           std::string(name(kind)) + "; NCCL would run it with " +
                           names_of(std::vector<Algorithm>(algos.begin(), algos.end())));
    }
    algos = allowed_algos;
  }
  std::span<const Protocol> protos = kProtocols;
  if (options_.protocol) protos = std::span<const Protocol>(&*options_.protocol, 1);
  else if (!options_.protocols.empty())
    protos = options_.protocols;

  CostQuery q{kind, bytes, shape, Protocol::simple,
              options_.channels > 0 ? options_.channels : hw_.default_channels};
  TunerChoice best;
  best.time_us = std::numeric_limits<double>::infinity();
  std::string last_refusal;
  std::string algorithm_refusal;  // why the last candidate NCCL would consider cannot run
  bool tried = false;
  // NCCL runs CollNet only with NCCL_COLLNET_ENABLE=1, unless the algorithm was named.
  const bool collnet_off = !options_.algorithm && options_.algorithms.empty() && !options_.collnet;
  // Where NCCL's tuner would weigh the ring against NVLS-tree (no single algorithm named).
  const bool ring_weighed =
      !options_.algorithm && std::find(algos.begin(), algos.end(), Algorithm::ring) != algos.end();
  const int tuned_channels = q.channels;
  for (Algorithm a : algos) {
    if (collnet_off && (a == Algorithm::collnet_direct || a == Algorithm::collnet_chain)) continue;
    if (ring_weighed && (a == Algorithm::nvls_tree || a == Algorithm::tree) &&
        nccl_runs_ring_across_racks(hw_, shape))
      continue;
    if (!options_.algorithm || p2p_like) {
      const auto why = algorithm_unsupported(hw_, kind, a, shape);
      if (!why.empty()) {
        algorithm_refusal = why;
        continue;
      }
    }
    tried = true;
    q.channels = a == Algorithm::ring && shape.nodes > 1 && options_.channels == 0
                     ? std::min(tuned_channels, kRingSearchMaxChannels)
                     : tuned_channels;
    for (Protocol p : protos) {
      const auto why = protocol_unsupported(hw_, a, p, shape);
      if (!why.empty()) {
        last_refusal = why;
        continue;
      }
      q.protocol = p;
      const double t = algorithm_cost(hw_, a, q).time_us(bytes);
      if (t < best.time_us) best = {a, p, q.channels, t};
    }
  }
  if (!tried) {
    throw InputError({}, "collectives.algorithm",
                     (allowed_algos.empty() ? std::string("no algorithm")
                                            : "none of " + names_of(allowed_algos)) +
                         " can run " + std::string(name(kind)) + " here: " + algorithm_refusal);
  }
  if (best.time_us == std::numeric_limits<double>::infinity()) {
    const std::string proto = options_.protocol            ? std::string(name(*options_.protocol))
                              : options_.protocols.empty() ? "auto"
                                                           : names_of(options_.protocols);
    throw InputError({}, "collectives.protocol",
                     proto + " cannot run " + std::string(name(kind)) + " here: " + last_refusal);
  }
  return best;
}

}  // namespace dtsim::collectives
