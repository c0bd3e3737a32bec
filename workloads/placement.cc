#include "workloads/placement.h"

#include <stdexcept>

namespace dtsim::workloads {
namespace {

Dim parse_dim(std::string_view s) {
  if (s == "tp") return Dim::tp;
  if (s == "cp") return Dim::cp;
  if (s == "dp") return Dim::dp;
  if (s == "pp") return Dim::pp;
  throw std::invalid_argument("placement: expected tp, cp, dp or pp, got '" + std::string(s) + "'");
}

}  // namespace

Placement::Placement(const ParallelSpec& parallel, std::string_view order) {
  size_ = {parallel.tp, parallel.cp, parallel.dp, parallel.pp};
  std::array<bool, 4> seen{};
  int stride = 1;
  size_t pos = 0;
  int count = 0;
  while (pos <= order.size()) {
    size_t end = order.find('-', pos);
    if (end == std::string_view::npos) end = order.size();
    const Dim d = parse_dim(order.substr(pos, end - pos));
    const int i = static_cast<int>(d);
    if (seen[i]) throw std::invalid_argument("placement: dimension repeated in '" + std::string(order) + "'");
    seen[i] = true;
    stride_[i] = stride;
    stride *= size_[i];
    ++count;
    pos = end + 1;
  }
  if (count != 4) throw std::invalid_argument("placement: order must name tp, cp, dp and pp once each");
}

int Placement::gpu(const Coord& c) const {
  int g = 0;
  for (int i = 0; i < 4; ++i) g += c.at[i] * stride_[i];
  return g;
}

Coord Placement::coord(int gpu) const {
  Coord c;
  for (int i = 0; i < 4; ++i) c.at[i] = (gpu / stride_[i]) % size_[i];
  return c;
}

collectives::Communicator Placement::group(Dim d, int g) const {
  Coord c = coord(g);
  collectives::Communicator comm;
  comm.ranks.reserve(size(d));
  for (int i = 0; i < size(d); ++i) {
    c[d] = i;
    comm.ranks.push_back(gpu(c));
  }
  return comm;
}

// Expert layers regroup a pipeline stage's tp x cp x dp ranks (Megatron-Core's parallel folding,
// experts not split by TP): numbered tp fastest, then cp, then dp, consecutive runs of ep ranks
// form the expert-parallel groups and ranks ep apart the expert-data-parallel ones.
int Placement::dense_index(const Coord& c) const {
  return c[Dim::tp] + size(Dim::tp) * (c[Dim::cp] + size(Dim::cp) * c[Dim::dp]);
}

Coord Placement::with_dense_index(Coord c, int i) const {
  c[Dim::tp] = i % size(Dim::tp);
  i /= size(Dim::tp);
  c[Dim::cp] = i % size(Dim::cp);
  c[Dim::dp] = i / size(Dim::cp);
  return c;
}

collectives::Communicator Placement::ep_group(int g, int ep) const {
  const Coord c = coord(g);
  const int base = dense_index(c) / ep * ep;
  collectives::Communicator comm;
  for (int i = 0; i < ep; ++i) comm.ranks.push_back(gpu(with_dense_index(c, base + i)));
  return comm;
}

collectives::Communicator Placement::expert_dp_group(int g, int ep) const {
  const Coord c = coord(g);
  const int n = size(Dim::tp) * size(Dim::cp) * size(Dim::dp);
  collectives::Communicator comm;
  for (int i = dense_index(c) % ep; i < n; i += ep) comm.ranks.push_back(gpu(with_dense_index(c, i)));
  return comm;
}

}  // namespace dtsim::workloads
