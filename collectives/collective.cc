#include "collectives/collective.h"

namespace dtsim::collectives {

std::string_view name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce:
      return "all_reduce";
    case CollectiveKind::all_gather:
      return "all_gather";
    case CollectiveKind::reduce_scatter:
      return "reduce_scatter";
    case CollectiveKind::broadcast:
      return "broadcast";
    case CollectiveKind::reduce:
      return "reduce";
    case CollectiveKind::all_to_all:
      return "all_to_all";
    case CollectiveKind::send_recv:
      return "send_recv";
    case CollectiveKind::gather:
      return "gather";
    case CollectiveKind::scatter:
      return "scatter";
    case CollectiveKind::hypercube:
      return "hypercube";
  }
  return "?";
}

bool point_to_point(CollectiveKind k) {
  return k == CollectiveKind::all_to_all || k == CollectiveKind::send_recv ||
         k == CollectiveKind::gather || k == CollectiveKind::scatter ||
         k == CollectiveKind::hypercube;
}

std::string_view name(Algorithm a) {
  switch (a) {
    case Algorithm::ring:
      return "ring";
    case Algorithm::tree:
      return "tree";
    case Algorithm::nvls:
      return "nvls";
    case Algorithm::nvls_tree:
      return "nvls_tree";
    case Algorithm::collnet_direct:
      return "collnet_direct";
    case Algorithm::collnet_chain:
      return "collnet_chain";
    case Algorithm::pat:
      return "pat";
    case Algorithm::halving_doubling:
      return "halving_doubling";
    case Algorithm::hierarchical:
      return "hierarchical";
    case Algorithm::pairwise:
      return "pairwise";
    case Algorithm::p2p:
      return "p2p";
  }
  return "?";
}

std::string_view name(Protocol p) {
  switch (p) {
    case Protocol::ll:
      return "ll";
    case Protocol::ll128:
      return "ll128";
    case Protocol::simple:
      return "simple";
  }
  return "?";
}

double busbw_factor(CollectiveKind k, int ranks) {
  const double n = ranks;
  switch (k) {
    case CollectiveKind::all_reduce:
      return 2.0 * (n - 1) / n;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all:
    case CollectiveKind::gather:
    case CollectiveKind::scatter:
    case CollectiveKind::hypercube:  // nccl-tests: busbw = algbw = size (n-1)/n / time
      return (n - 1) / n;
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce:
    case CollectiveKind::send_recv:
      return 1.0;
  }
  return 1.0;
}

}  // namespace dtsim::collectives
