// Placement: which GPU holds which coordinate of the parallel grid (tp, cp, dp, pp), and the
// communicators (TP group, DP group, ...) that follow from it. The order string names the
// dimensions innermost first, so "tp-cp-dp-pp" (the default, as Megatron-LM) puts a TP group on
// consecutive GPUs of one node.
//   Placement p(parallel, cluster.total_gpus());
//   collectives::Communicator tp = p.group(Dim::tp, p.gpu({0, 0, 3, 1}));
#pragma once

#include <array>
#include <string>

#include "collectives/cost_model.h"
#include "workloads/workload_spec.h"

namespace dtsim::workloads {

enum class Dim : int { tp = 0, cp = 1, dp = 2, pp = 3 };

struct Coord {
  std::array<int, 4> at{};  // indexed by Dim
  int& operator[](Dim d) { return at[static_cast<int>(d)]; }
  int operator[](Dim d) const { return at[static_cast<int>(d)]; }
};

class Placement {
 public:
  // Throws std::invalid_argument when the order string is not a permutation of tp, cp, dp, pp.
  Placement(const ParallelSpec& parallel, std::string_view order);

  int size(Dim d) const { return size_[static_cast<int>(d)]; }
  int gpu(const Coord& c) const;
  Coord coord(int gpu) const;
  // GPUs that differ from `gpu` only along `d`, in coordinate order.
  collectives::Communicator group(Dim d, int gpu) const;
  // Expert layers fold the stage's tp x cp x dp ranks into ep x (expert data parallel), experts
  // not split by TP: the expert-parallel group is `ep` consecutive ranks of that fold (tp
  // fastest, then cp, then dp); the expert-data-parallel group the ranks holding the same experts.
  collectives::Communicator ep_group(int gpu, int ep) const;
  collectives::Communicator expert_dp_group(int gpu, int ep) const;
  // A rank's position among its stage's tp x cp x dp ranks (tp fastest), and the coordinate
  // at position i of the same stage.
  int dense_index(const Coord& c) const;
  Coord with_dense_index(Coord c, int i) const;

 private:
  std::array<int, 4> size_{};
  std::array<int, 4> stride_{};
};

}  // namespace dtsim::workloads
