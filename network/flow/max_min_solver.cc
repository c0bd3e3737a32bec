#include "network/flow/max_min_solver.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "network/flow/progressive_filling.h"

namespace dtsim::network::flow {

uint64_t FlowProblem::units_of(double w) {
  assert(w > 0 && w <= 0x1p20);
  return static_cast<uint64_t>(std::max(std::nearbyint(w / kWeightUnit), 1.0));
}

uint32_t FlowProblem::add_flow(std::span<const uint32_t> links, double w) {
  w = weight_of_units(units_of(w));
  if (w != 1.0 || !weight.empty()) {
    weight.resize(flow_count(), 1.0);  // the flows before the first weighted one weigh 1
    weight.push_back(w);
  }
  flow_links.insert(flow_links.end(), links.begin(), links.end());
  flow_offsets.push_back(static_cast<uint32_t>(flow_links.size()));
  return static_cast<uint32_t>(flow_count() - 1);
}

uint64_t FlowProblem::weight_units(size_t f) const {
  return weight.empty() ? kUnitsPerWeight : static_cast<uint64_t>(weight[f] / kWeightUnit);
}

void FlowProblem::clear_flows() {
  flow_offsets.assign(1, 0);
  flow_links.clear();
  weight.clear();
  link_offsets.clear();
  link_flows.clear();
}

void FlowProblem::build_link_index() {
  // Counting sort by link: flows land in ascending order within each link, so the index (and
  // everything computed from it) is a deterministic function of the flow list.
  const size_t links = link_count();
  link_offsets.assign(links + 1, 0);
  for (uint32_t l : flow_links) {
    assert(l < links);
    ++link_offsets[l + 1];
  }
  for (size_t l = 0; l < links; ++l) link_offsets[l + 1] += link_offsets[l];
  link_flows.resize(flow_links.size());
  cursor_.assign(link_offsets.begin(), link_offsets.end() - 1);
  for (size_t f = 0; f < flow_count(); ++f) {
    for (uint32_t l : links_of(f)) link_flows[cursor_[l]++] = static_cast<uint32_t>(f);
  }
}

namespace {
// FlowProblem's arrays as progressive filling's View (progressive_filling.h).
class CsrView {
 public:
  explicit CsrView(const FlowProblem& p) : p_(p) {}
  size_t flow_count() const { return p_.flow_count(); }
  size_t link_count() const { return p_.link_count(); }
  double capacity(uint32_t l) const { return p_.capacity[l]; }
  uint32_t flows_on_count(uint32_t l) const { return p_.link_offsets[l + 1] - p_.link_offsets[l]; }
  uint64_t units_on(uint32_t l) const {
    if (!p_.weighted()) return flows_on_count(l) * kUnitsPerWeight;
    uint64_t units = 0;
    for (uint32_t f : p_.flows_on(l)) units += p_.weight_units(f);
    return units;
  }
  template <typename Fn>
  void for_each_flow_on(uint32_t l, Fn&& fn) const {
    for (uint32_t f : p_.flows_on(l)) fn(f);
  }
  template <typename Fn>
  void for_each_link_of(uint32_t f, Fn&& fn) const {
    for (uint32_t l : p_.links_of(f)) fn(l);
  }
  bool crosses_nothing(uint32_t f) const { return p_.flow_offsets[f] == p_.flow_offsets[f + 1]; }
  uint64_t weight_units(uint32_t f) const { return p_.weight_units(f); }

 private:
  const FlowProblem& p_;
};
}  // namespace

void CpuMaxMinSolver::solve(const FlowProblem& p, std::span<double> rates) {
  assert(p.link_offsets.size() == p.link_count() + 1);
  fill(CsrView(p), rates);
}

double max_link_utilization(const FlowProblem& p, std::span<const double> rates) {
  std::vector<double> load;
  return max_link_utilization(p, rates, load);
}

double max_link_utilization(const FlowProblem& p, std::span<const double> rates, std::vector<double>& load) {
  load.assign(p.link_count(), 0.0);
  for (size_t f = 0; f < p.flow_count(); ++f) {
    for (uint32_t l : p.links_of(f)) load[l] += rates[f];
  }
  double worst = 0;
  for (size_t l = 0; l < p.link_count(); ++l) {
    if (load[l] == 0) continue;
    const double u =
        p.capacity[l] > 0 ? load[l] / p.capacity[l] : std::numeric_limits<double>::infinity();
    worst = std::max(worst, u);
  }
  return worst;
}

}  // namespace dtsim::network::flow
