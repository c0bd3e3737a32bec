#include "network/flow/flow_model.h"

#include <algorithm>
#include <cmath>

namespace dtsim::network {

namespace {
// The time to drain `bytes` at `rate`, rounded up to the next picosecond with the same slack as
// Bandwidth::transfer_time, so a lone flow lands on exactly the analytical model's time.
// Time::max() when the flow would never finish (zero rate) or not within Time's range.
Time drain_time(double bytes, double rate) {
  if (bytes <= 0) return Time::zero();
  if (!(rate > 0)) return Time::max();
  const double ps = std::ceil(bytes / rate * 1e12 - 1e-6);
  if (!(ps < 9e18)) return Time::max();
  return Time::ps(static_cast<int64_t>(std::max(ps, 0.0)));
}
}  // namespace

FlowNetworkModel::FlowNetworkModel(const topology::Cluster& cluster, FlowModelOptions options)
    : cluster_(cluster), options_(std::move(options)), dense_link_(cluster.links().size(), -1) {}

void FlowNetworkModel::start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done,
                             uint64_t payload) {
  std::vector<std::vector<topology::LinkId>> paths = transfer_paths(cluster_, t);
  if (paths.empty()) {  // to itself, or no bytes: only the route's latency (empty_message_latency)
    delivered_ += t.bytes;
    engine.schedule_in(empty_message_latency(cluster_, t), done, payload);
    return;
  }
  const uint64_t transfer = next_transfer_++;
  open_subflows_.emplace(transfer, OpenTransfer{static_cast<uint32_t>(paths.size()), Time::zero()});
  for (size_t i = 0; i < paths.size(); ++i) {
    ActiveFlow f;
    f.latency = route_latency(cluster_, paths[i]);
    f.path = std::move(paths[i]);
    f.bytes = spray_share(t.bytes, i, paths.size());
    f.anchor_remaining = f.bytes.as_double();
    f.anchor_time = engine.now();
    f.done = &done;
    f.payload = payload;
    f.transfer = transfer;
    f.weight = 1.0 / static_cast<double>(paths.size());
    f.max_rate = t.max_rate;
    if (options_.host_staged_rate > 0 && cluster_.node_of(t.src_gpu) == cluster_.node_of(t.dst_gpu)) {
      f.staged_pair = int64_t{t.src_gpu} * cluster_.gpu_count() + t.dst_gpu;
    }
    flows_.push_back(std::move(f));
  }
  // Defer the solve: every start within the window joins one solve (with no window, those of
  // this instant). A solve already due within the window takes this start too.
  const Time now = engine.now();
  const Time window = options_.completion_window;
  if (!(live_at_ >= now && live_at_ - now <= window)) schedule(engine, now + window);
}

void FlowNetworkModel::schedule(sim::Engine& engine, Time at) {
  live_at_ = at;
  engine.schedule_at(at, *this, ++generation_);
}

void FlowNetworkModel::on_event(sim::Engine& engine, uint64_t payload) {
  if (payload != generation_) return;  // superseded by a later start
  live_at_ = Time::max();
  const Time now = engine.now();
  // Flows retired here leave the solve now, up to a window before they drain: the others gain
  // their share that much early (measured: a 256 MiB all_gather over 144 GB200 GPUs 0.27% faster
  // than with no window; starting the new rates at the last retiree's drain instead made it
  // 0.31%, so the difference is the order of a wave's flows, not freed bandwidth).
  complete_drained(engine);
  solve(now);
  // Flows that started since the last solve had no rate until this one: it applies from their
  // start (their anchor), so a lone flow lands on exactly the analytical model's time whatever
  // the window. One that would have drained already leaves now, and the others are solved again
  // without it.
  while (complete_drained(engine)) solve(now);
  schedule_next_completion(engine);
}

Time FlowNetworkModel::drain_at(const ActiveFlow& f) {
  if (!(f.rate > 0)) return Time::max();
  const Time left = drain_time(f.anchor_remaining, f.rate);
  return left == Time::max() || left > Time::max() - f.anchor_time ? Time::max() : f.anchor_time + left;
}

bool FlowNetworkModel::complete_drained(sim::Engine& engine) {
  // A flow is done when it drains by the end of the completion window at its present rate
  // (drain instants are rounded up to whole picoseconds, so what remains at the instant is
  // rounding only): it leaves the solve now, and its transfer still completes at the instant it
  // drains, so only the flows beside it gain its share up to a window early. The flows of one
  // wave of a collective drain picoseconds apart; without the window each of them cost a solve
  // of all the others.
  const Time now = engine.now();
  const Time until = now + options_.completion_window;
  bool any = false;
  for (ActiveFlow& f : flows_) {
    if (f.fresh) continue;  // no rate yet: its first solve is at this event
    const Time at = drain_at(f);
    if (at > until) continue;
    f.retired = any = true;
    delivered_ += f.bytes;
    // The transfer is done when its last sub-flow has drained, a path latency later (not before
    // now: a flow shorter than the window that drained before the solve that gave it its rate).
    auto open = open_subflows_.find(f.transfer);
    open->second.done_at = std::max({open->second.done_at, now, at + f.latency});
    if (--open->second.open > 0) continue;
    engine.schedule_at(open->second.done_at, *f.done, f.payload);
    open_subflows_.erase(open);
  }
  if (any) std::erase_if(flows_, [](const ActiveFlow& f) { return f.retired; });
  return any;
}

void FlowNetworkModel::solve(Time from) {
  if (flows_.empty()) return;
  problem_.capacity.clear();
  problem_.clear_flows();
  // A transfer's sub-flows are contiguous in flows_ (start() appends them together and erasing
  // keeps the order), so the capped transfer's virtual link is the previous flow's when it is
  // the same transfer.
  uint64_t capped_transfer = UINT64_MAX;
  uint32_t capped_link = 0;
  for (const ActiveFlow& f : flows_) {
    dense_path_.clear();
    for (topology::LinkId l : f.path) {
      if (dense_link_[l] < 0) {
        dense_link_[l] = static_cast<int32_t>(problem_.capacity.size());
        const topology::Link& link = cluster_.link(l);
        problem_.capacity.push_back(link.bandwidth.bytes_per_s() *
                                    options_.link_efficiency.of(link.kind));
      }
      dense_path_.push_back(static_cast<uint32_t>(dense_link_[l]));
    }
    if (f.staged_pair >= 0) {
      // The GPU pair's host-staged copies share one virtual link of the host-staged rate.
      auto [it, fresh] = staged_links_.try_emplace(f.staged_pair, static_cast<uint32_t>(problem_.capacity.size()));
      if (fresh) problem_.capacity.push_back(options_.host_staged_rate);
      dense_path_.push_back(it->second);
    }
    if (f.max_rate > 0) {
      // The sender's channel moves at most max_rate: a virtual link its transfer's sub-flows share.
      if (f.transfer != capped_transfer) {
        capped_transfer = f.transfer;
        capped_link = static_cast<uint32_t>(problem_.capacity.size());
        problem_.capacity.push_back(f.max_rate);
      }
      dense_path_.push_back(capped_link);
    }
    problem_.add_flow(dense_path_, f.weight);
  }
  staged_links_.clear();
  for (const ActiveFlow& f : flows_) {
    for (topology::LinkId l : f.path) dense_link_[l] = -1;
  }
  problem_.build_link_index();
  rates_.resize(flows_.size());

  const bool accelerate = options_.accelerator && flows_.size() >= options_.accelerator_min_flows;
  flow::FlowSolver& solver = accelerate ? *options_.accelerator : cpu_;
  solver.solve(problem_, rates_);
  ++solves_;
  flows_solved_ += flows_.size();
  if (accelerate) ++accelerated_solves_;
  peak_utilization_ = std::max(peak_utilization_, flow::max_link_utilization(problem_, rates_, link_load_));
  for (size_t i = 0; i < flows_.size(); ++i) {
    ActiveFlow& f = flows_[i];
    // A flow whose rate changes is re-anchored at what it has left now; a fresh one keeps its
    // anchor at its start, so the rate counts from there.
    if (!f.fresh && rates_[i] != f.rate) {
      f.anchor_remaining -= f.rate * (from - f.anchor_time).seconds();
      f.anchor_time = from;
    }
    f.rate = rates_[i];
    f.fresh = false;
  }
}

void FlowNetworkModel::schedule_next_completion(sim::Engine& engine) {
  Time next = Time::max();
  for (const ActiveFlow& f : flows_) next = std::min(next, drain_at(f));
  // Nothing left, or only flows stuck on zero-capacity links (or finishing past Time's range).
  if (next == Time::max()) return;
  schedule(engine, std::max(next, engine.now()));
}

}  // namespace dtsim::network
