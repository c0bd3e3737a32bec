// The vocabulary of collectives: which operation, which algorithm and protocol NCCL would run it
// with, and the user's choices for them (`auto` lets the tuner pick, as NCCL does).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace dtsim::collectives {

enum class CollectiveKind {
  all_reduce,
  all_gather,
  reduce_scatter,
  broadcast,
  reduce,
  all_to_all,
  send_recv,
  gather,    // every rank's part to one root (nccl-tests gather_perf: grouped send/recv)
  scatter,   // one root's parts to every rank (nccl-tests scatter_perf)
  hypercube  // all_gather by recursive doubling over send/recv (nccl-tests hypercube_perf)
};
// pairwise (all_to_all) and p2p (send_recv, gather, scatter, hypercube) are what NCCL runs for
// those operations whatever NCCL_ALGO says; the tuner reports them so that every estimate names its
// algorithm.
enum class Algorithm {
  ring,
  tree,
  nvls,
  nvls_tree,
  collnet_direct,
  collnet_chain,
  pat,
  halving_doubling,
  hierarchical,
  pairwise,
  p2p
};
enum class Protocol { ll, ll128, simple };

struct CollectiveOptions {
  std::optional<Algorithm> algorithm;  // nullopt: auto
  std::optional<Protocol> protocol;    // nullopt: auto
  int channels = 0;                    // 0: auto
  // What auto may choose from, as NCCL_ALGO / NCCL_PROTO lists ("Ring,Tree", "^NVLS") restrict
  // NCCL's tuner; empty: everything. Not used when one algorithm or protocol is forced above.
  std::vector<Algorithm> algorithms;
  std::vector<Protocol> protocols;
  // NCCL_COLLNET_ENABLE: auto considers the CollNet algorithms only when it is set (NCCL's default
  // leaves them off, SHARP fabric or not); forcing or listing one runs it regardless.
  bool collnet = false;
};

std::string_view name(CollectiveKind k);
// Run as grouped send/recv whatever the algorithm choice: all_to_all, send_recv, gather, scatter,
// hypercube.
bool point_to_point(CollectiveKind k);
std::string_view name(Algorithm a);
std::string_view name(Protocol p);

// nccl-tests' bus bandwidth factor: busbw = algbw * factor(n).
double busbw_factor(CollectiveKind k, int ranks);

}  // namespace dtsim::collectives
