// Max-min fair rate allocation: given link capacities and flows that each cross a list of links,
// give every flow the largest rate such that no link is over capacity and no flow can gain without
// taking from a flow whose rate is no larger. FlowProblem holds the instance as flat CSR arrays
// (flow -> links and link -> flows) so the same buffers feed the CPU solver and the CUDA one.
//   flow::FlowProblem p;
//   p.capacity = {10e9, 10e9};                   // bytes per second, one entry per link
//   p.add_flow({{0, 1}});  p.add_flow({{1}});
//   p.build_link_index();
//   std::vector<double> rates(p.flow_count());
//   flow::CpuMaxMinSolver().solve(p, rates);     // rates == {5e9, 5e9}
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace dtsim::network::flow {

// Weights are counted in units of 2^-40: a weight of 1 is 2^40 units. A link's unfrozen weight is
// a sum of units (at most 2^64: 16.7 million flows of weight 1 on one link), converted to a double
// only to divide by; for weights of 1 that double is exactly the flow count.
inline constexpr double kWeightUnit = 0x1p-40;
inline constexpr uint64_t kUnitsPerWeight = uint64_t{1} << 40;
inline double weight_of_units(uint64_t units) { return static_cast<double>(units) * kWeightUnit; }

struct FlowProblem {
  std::vector<double> capacity;           // per link, bytes per second (>= 0)
  std::vector<uint32_t> flow_offsets{0};  // flow f crosses flow_links[flow_offsets[f] .. [f+1])
  std::vector<uint32_t> flow_links;
  std::vector<uint32_t> link_offsets;  // link l carries link_flows[link_offsets[l] .. [l+1])
  std::vector<uint32_t> link_flows;    // filled by build_link_index(), flows in ascending order
  // Per flow, its weight in the sharing (a flow of weight w gets w shares); empty while every
  // flow weighs 1, which is how unweighted problems stay exactly what they were. add_flow rounds
  // each weight to a whole number of kWeightUnit, so the solvers add weights up as integers
  // (weight_units): exactly, in any order, on the CPU and the GPU alike.
  std::vector<double> weight;

  size_t flow_count() const { return flow_offsets.size() - 1; }
  size_t link_count() const { return capacity.size(); }
  std::span<const uint32_t> links_of(size_t f) const {
    return {flow_links.data() + flow_offsets[f], flow_links.data() + flow_offsets[f + 1]};
  }
  std::span<const uint32_t> flows_on(size_t l) const {
    return {link_flows.data() + link_offsets[l], link_flows.data() + link_offsets[l + 1]};
  }

  // Appends a flow over `links` (each id < link_count(), no repeats) of `weight` > 0 (one
  // sub-flow of a transfer sprayed over k routes weighs 1/k, so the transfer as a whole gets one
  // share where it meets others). Returns its index.
  uint32_t add_flow(std::span<const uint32_t> links, double weight = 1.0);
  bool weighted() const { return !weight.empty(); }
  double weight_of(size_t f) const { return weight.empty() ? 1.0 : weight[f]; }
  uint64_t weight_units(size_t f) const;
  // A weight in the units add_flow keeps it in: a whole number of kWeightUnit, at least one.
  static uint64_t units_of(double w);
  // Empties the flows, keeping the capacities and the buffers' storage.
  void clear_flows();
  // Builds the link -> flows index from the flow -> links one; call after the last add_flow.
  void build_link_index();

 private:
  std::vector<uint32_t> cursor_;  // build_link_index's scratch, kept so a re-solve allocates nothing
};

// The one interface of every max-min solver (CPU here, CUDA in gpu_accel/). A flow that crosses no
// link is unconstrained: its rate is +infinity.
class FlowSolver {
 public:
  virtual ~FlowSolver() = default;
  virtual std::string_view name() const = 0;
  // Writes the max-min fair rate of every flow of `p` (whose link index is built) into `rates`,
  // which has p.flow_count() entries.
  virtual void solve(const FlowProblem& p, std::span<double> rates) = 0;
};

// Problems with at least this many flows go to a GPU solver when one is given; smaller ones stay
// on the CPU. Where a GPU last measured faster than the CPU (bench/network.md, "On a GPU").
inline constexpr size_t kAcceleratorMinFlows = 100'000;

// Progressive filling with exact bottleneck freezing. Each round every link that still carries
// unfrozen flows offers the fair share remaining_capacity / unfrozen_weight (the unfrozen flows'
// count when every flow weighs 1); the smallest share m is the next rate level; every unfrozen
// flow crossing a link whose share is m (within kTieTolerance, so links that tie up to rounding
// freeze together) is frozen at m times its weight, and each touched link's remaining capacity
// drops by m times the weight of its flows frozen this round. Rounds repeat until every flow is
// frozen. Weights are added up in integer units (FlowProblem), so the result does not depend on
// the order flows froze in; the CUDA solver performs the same arithmetic, which is what lets this
// solver be its oracle bit for bit.
class CpuMaxMinSolver final : public FlowSolver {
 public:
  std::string_view name() const override { return "cpu-max-min"; }
  void solve(const FlowProblem& p, std::span<double> rates) override;
  // The same filling over another layout of the flows and links (a View, progressive_filling.h,
  // which defines it): the flow model solves its persistent flows in place with it.
  template <typename View>
  void fill(const View& v, std::span<double> rates);
  // Rounds (distinct rate levels) the last solve took.
  uint32_t last_rounds() const { return last_rounds_; }

 private:
  // Scratch kept between solves so a re-solve does not allocate.
  std::vector<double> min_tree_;      // the shares' tournament tree (fill), root at 1
  std::vector<size_t> descend_;       // its nodes still to visit in a search for bottlenecks
  std::vector<uint32_t> candidates_;  // leaves that may tie, in a pass over them
  std::vector<uint32_t> position_;    // link -> its index in active_links_ or solo_links_ (its leaf)
  std::vector<uint32_t> bottlenecks_;
  std::vector<double> remaining_;
  std::vector<uint32_t> unfrozen_;
  std::vector<uint32_t> frozen_now_;
  std::vector<uint64_t> unfrozen_units_;    // weight of the link's unfrozen flows
  std::vector<uint64_t> frozen_units_now_;  // weight of its flows frozen this round
  std::vector<uint32_t> active_links_;
  std::vector<uint32_t> touched_;
  // Links that one flow crosses (fill): their shares' tree, the links in leaf order, which links
  // are such, and those whose flow froze this round.
  std::vector<double> solo_tree_;
  std::vector<uint32_t> solo_links_;
  std::vector<uint8_t> solo_;
  std::vector<uint32_t> touched_solo_;
  std::vector<uint8_t> frozen_;
  uint32_t last_rounds_ = 0;
};

// Links whose share is within this relative distance of the round's minimum freeze with it.
inline constexpr double kTieTolerance = 1e-12;

// Checks an allocation: returns the largest load / capacity over all links (1 means some link is
// exactly full). Used by tests and by the flow model's capacity guard.
double max_link_utilization(const FlowProblem& p, std::span<const double> rates);
// The same with the caller's scratch for the per-link loads (the flow model checks every solve).
double max_link_utilization(const FlowProblem& p, std::span<const double> rates, std::vector<double>& load);

}  // namespace dtsim::network::flow
