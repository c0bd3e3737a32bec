#include "network/flow/team_filling_host.h"

#include <atomic>
#include <barrier>
#include <cassert>
#include <limits>
#include <stdexcept>
#include <thread>

namespace dtsim::network::flow {
namespace {

// What the threads of one host team share.
struct HostTeamShared {
  explicit HostTeamShared(uint32_t threads) : barrier(threads), mins(threads) {}
  std::barrier<> barrier;
  std::vector<double> mins;
};

// One thread's view of the team (team_filling.h's Team).
class HostTeam {
 public:
  HostTeam(HostTeamShared& shared, uint32_t rank) : shared_(shared), rank_(rank) {}
  uint32_t size() const { return static_cast<uint32_t>(shared_.mins.size()); }
  uint32_t rank() const { return rank_; }
  void sync() { shared_.barrier.arrive_and_wait(); }
  double min(double v) {
    shared_.mins[rank_] = v;
    sync();
    double m = v;
    for (const double x : shared_.mins) m = x < m ? x : m;
    sync();  // nobody writes a slot again before every thread has read them all
    return m;
  }
  uint32_t add(uint32_t* x, uint32_t v) { return std::atomic_ref(*x).fetch_add(v, std::memory_order_relaxed); }
  team::Units add(team::Units* x, team::Units v) {
    return std::atomic_ref(*x).fetch_add(v, std::memory_order_relaxed);
  }
  uint32_t read(const uint32_t* flag) {
    return std::atomic_ref(*const_cast<uint32_t*>(flag)).load(std::memory_order_relaxed);
  }
  bool claim(uint32_t* flag) {
    uint32_t expected = 0;
    return std::atomic_ref(*flag).compare_exchange_strong(expected, 1, std::memory_order_relaxed);
  }
  static double infinity() { return std::numeric_limits<double>::infinity(); }

 private:
  HostTeamShared& shared_;
  uint32_t rank_;
};

// The team's view of a FlowProblem (pointers into it).
team::Problem team_problem(const FlowProblem& p) {
  return {.flows = static_cast<uint32_t>(p.flow_count()),
          .links = static_cast<uint32_t>(p.link_count()),
          .capacity = p.capacity.data(),
          .flow_offsets = p.flow_offsets.data(),
          .flow_links = p.flow_links.data(),
          .link_offsets = p.link_offsets.data(),
          .link_flows = p.link_flows.data(),
          .weight = p.weighted() ? p.weight.data() : nullptr};
}

}  // namespace

HostTeamSolver::HostTeamSolver(uint32_t threads) : threads_(threads) {
  if (threads == 0) throw std::invalid_argument("HostTeamSolver: a team needs a thread");
}

void HostTeamSolver::solve(const FlowProblem& p, std::span<double> rates) {
  if (p.link_offsets.size() != p.link_count() + 1 || rates.size() != p.flow_count()) {
    throw std::invalid_argument("HostTeamSolver: link index not built or rates mis-sized");
  }
  const size_t links = p.link_count();
  remaining_.resize(links);
  share_.resize(links);
  unfrozen_units_.resize(links);
  frozen_units_now_.resize(links);
  bottlenecks_.resize(links);
  entry_start_.resize(links + 1);
  touched_.resize(links);
  frozen_.resize(p.flow_count());
  uint32_t list_sizes[2] = {0, 0};
  const team::Scratch s{.remaining = remaining_.data(),
                         .share = share_.data(),
                         .unfrozen_units = unfrozen_units_.data(),
                         .frozen_units_now = frozen_units_now_.data(),
                         .frozen = frozen_.data(),
                         .bottlenecks = bottlenecks_.data(),
                         .entry_start = entry_start_.data(),
                         .touched = touched_.data(),
                         .list_sizes = list_sizes,
                         .rates = rates.data(),
                         .counts = &counts_};
  const team::Problem problem = team_problem(p);
  HostTeamShared shared(threads_);
  {
    std::vector<std::jthread> others;
    for (uint32_t t = 1; t < threads_; ++t) {
      others.emplace_back([&, t] {
        HostTeam b(shared, t);
        team::fill(b, problem, s);
      });
    }
    HostTeam b(shared, 0);
    team::fill(b, problem, s);
  }  // the jthreads join here
}

}  // namespace dtsim::network::flow
