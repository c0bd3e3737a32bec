#include "validation/replay_plan.h"

#include <fmt/format.h>

#include <bit>

#include "sim/error.h"

namespace dtsim::validation {

ReplayPlan make_replay_plan(collectives::CollectiveKind kind, Bytes min, Bytes max, int factor,
                            int ranks) {
  using K = collectives::CollectiveKind;
  if (ranks < 1) throw InputError(SourceLocation{}, "ranks", "expected at least one rank");
  if (min.count() <= 0 || max < min)
    throw InputError(SourceLocation{}, "workload.min_bytes",
                     fmt::format("expected 0 < min_bytes <= max_bytes, got {} and {}",
                                 min.count(), max.count()));
  if (factor < 2)
    throw InputError(SourceLocation{}, "workload.step_factor", "expected a factor of at least 2");
  if (kind == K::hypercube && !std::has_single_bit(static_cast<unsigned>(ranks)))
    throw InputError(SourceLocation{}, "ranks",
                     fmt::format("hypercube needs a power-of-two rank count, got {}", ranks));
  ReplayPlan plan;
  plan.collective = kind;
  plan.ranks = ranks;
  constexpr int64_t kElem = 4;
  bool split = kind == K::all_gather || kind == K::reduce_scatter || kind == K::all_to_all ||
               kind == K::gather || kind == K::scatter || kind == K::hypercube;
  int64_t last = -1;
  for (int64_t size = min.count(); size <= max.count(); size *= factor) {
    int64_t count = size / kElem;
    if (split) count -= count % ranks;
    if (count > 0 && count * kElem != last) {
      ReplayStep s;
      s.size_bytes = count * kElem;
      last = s.size_bytes;
      switch (kind) {
        case K::all_gather:
        case K::hypercube:
        case K::gather:  // the root receives every rank's part
          s.call_count = count / ranks;
          s.send_count = s.call_count;
          s.recv_count = count;
          break;
        case K::reduce_scatter:
        case K::scatter:  // the root sends every rank its part
          s.call_count = count / ranks;
          s.send_count = count;
          s.recv_count = s.call_count;
          break;
        case K::all_to_all:
          s.call_count = count / ranks;
          s.send_count = s.recv_count = count;
          break;
        default:
          s.call_count = s.send_count = s.recv_count = count;
      }
      plan.steps.push_back(s);
    }
    if (size > max.count() / factor) break;
  }
  return plan;
}

int64_t count_wrong(collectives::CollectiveKind kind, int rank, int ranks, int root,
                    const ReplayStep& step, const std::vector<float>& received) {
  int64_t wrong = 0;
  for (int64_t i = 0; i < step.recv_count; ++i) {
    float expect = replay_expected(kind, rank, ranks, root, step.call_count, i);
    if (i >= static_cast<int64_t>(received.size()) || received[static_cast<size_t>(i)] != expect)
      ++wrong;
  }
  return wrong;
}

MeasuredPoint replay_point(const ReplayPlan& plan, const ReplayStep& step, double time_us,
                           Placement placement, int64_t wrong) {
  MeasuredPoint p;
  p.size_bytes = step.size_bytes;
  p.count = step.size_bytes / 4;
  p.time_us = time_us;
  p.algbw_gbps = time_us > 0 ? static_cast<double>(step.size_bytes) / time_us / 1e3 : 0;
  p.busbw_gbps = p.algbw_gbps * collectives::busbw_factor(plan.collective, plan.ranks);
  p.placement = placement;
  p.wrong = wrong;
  return p;
}

}  // namespace dtsim::validation
