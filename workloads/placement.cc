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

collectives::Communicator Placement::ep_group(int g, int ep) const {
  Coord c = coord(g);
  const int base = (c[Dim::dp] / ep) * ep;
  collectives::Communicator comm;
  for (int i = 0; i < ep; ++i) {
    c[Dim::dp] = base + i;
    comm.ranks.push_back(gpu(c));
  }
  return comm;
}

collectives::Communicator Placement::expert_dp_group(int g, int ep) const {
  Coord c = coord(g);
  const int slot = c[Dim::dp] % ep;
  collectives::Communicator comm;
  for (int d = slot; d < size(Dim::dp); d += ep) {
    for (int cp = 0; cp < size(Dim::cp); ++cp) {
      for (int tp = 0; tp < size(Dim::tp); ++tp) {
        c[Dim::dp] = d;
        c[Dim::cp] = cp;
        c[Dim::tp] = tp;
        comm.ranks.push_back(gpu(c));
      }
    }
  }
  return comm;
}

}  // namespace dtsim::workloads
