#include "workloads/online_network.h"

#include <stdexcept>

namespace dtsim::workloads {
namespace {

// Payload of this model's own events: the running slot, with this bit for the floor's timer.
constexpr uint64_t kFloor = uint64_t{1} << 62;
constexpr uint64_t kSlotMask = kFloor - 1;

}  // namespace

OnlineNetwork::OnlineNetwork(const collectives::AnalyticalCollectiveModel& model, const topology::Cluster& cluster,
                             network::NetworkModel& network)
    : model_(model), cluster_(cluster), network_(network) {}

const collectives::NetworkPlan& OnlineNetwork::plan_of(const Op& op, const collectives::Communicator& comm) {
  const collectives::CollectiveKind kind =
      op.kind == OpKind::send ? collectives::CollectiveKind::send_recv : op.collective;
  auto& slot = plans_[{static_cast<int>(kind), op.bytes.count(), &comm}];
  if (!slot) {
    const collectives::CollectiveEstimate tuned = model_.estimate(kind, op.bytes, comm);
    slot = std::make_unique<collectives::NetworkPlan>(
        collectives::plan_on_network(model_, cluster_, kind, op.bytes, comm, tuned, /*coalesce=*/true));
  }
  return *slot;
}

void OnlineNetwork::start(sim::Engine& engine, const Op& op, const collectives::Communicator& comm,
                          sim::EventHandler& done, uint64_t payload) {
  if (op.kind != OpKind::collective && op.kind != OpKind::send) {
    throw std::invalid_argument("online network: only collectives and sends run on the network");
  }
  uint32_t slot;
  if (free_.empty()) {
    slot = static_cast<uint32_t>(running_.size());
    running_.emplace_back();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  Running& r = running_[slot];
  r.plan = &plan_of(op, comm);
  r.repeats_left = std::max(1, op.repeat);
  r.done = &done;
  r.payload = payload;
  ++live_;
  launch(engine, slot);
}

void OnlineNetwork::launch(sim::Engine& engine, uint32_t slot) {
  retired_.clear();
  Running& r = running_[slot];
  const collectives::NetworkPlan& plan = *r.plan;
  ++operations_;
  if (plan.closed_form) {
    r.pending = 1;
    engine.schedule_in(plan.time, *this, kFloor | slot);
    return;
  }
  r.pending = plan.floor.ps() > 0 ? 2 : 1;
  if (plan.floor.ps() > 0) engine.schedule_in(plan.floor, *this, kFloor | slot);
  // Each instance its own salt: concurrent collectives' transfers hash to their own ECMP routes.
  const collectives::ExecutorOptions options{.reduction_bandwidth = {},
                                             .launch_latency = plan.latency,
                                             .channel_rate = plan.channel_rate,
                                             .flow_salt = ++salt_ * 0xd1b54a32d192ed03ULL};
  r.exec = std::make_unique<collectives::ScheduleExecutor>(plan.schedule, network_, options);
  r.exec->notify(*this, slot);
  r.exec->start(engine);
  sent_ += plan.schedule.total_bytes();
}

void OnlineNetwork::on_event(sim::Engine& engine, uint64_t payload) {
  const auto slot = static_cast<uint32_t>(payload & kSlotMask);
  Running& r = running_[slot];
  if (--r.pending > 0) return;
  if (r.exec) retired_.push_back(std::move(r.exec));
  if (--r.repeats_left > 0) {
    launch(engine, slot);
    return;
  }
  sim::EventHandler* done = r.done;
  const uint64_t done_payload = r.payload;
  r = Running{};
  free_.push_back(slot);
  --live_;
  done->on_event(engine, done_payload);
}

AloneOnNetworkCostModel::AloneOnNetworkCostModel(const collectives::AnalyticalCollectiveModel& model,
                                                 const topology::Cluster& cluster, MakeNetwork make_network)
    : model_(model), cluster_(cluster), make_network_(std::move(make_network)) {}

collectives::CollectiveEstimate AloneOnNetworkCostModel::estimate(collectives::CollectiveKind kind, Bytes bytes,
                                                                  const collectives::Communicator& comm) const {
  const auto key = std::make_tuple(static_cast<int>(kind), bytes.count(), comm.ranks);
  {
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  collectives::CollectiveEstimate out = model_.estimate(kind, bytes, comm);
  const collectives::NetworkPlan plan =
      collectives::plan_on_network(model_, cluster_, kind, bytes, comm, out, /*coalesce=*/true);
  out.algorithm = plan.algorithm;
  out.protocol = plan.protocol;
  if (plan.closed_form) {
    out.time = plan.time;
  } else {
    const std::unique_ptr<network::NetworkModel> net = make_network_();
    sim::Engine engine;
    collectives::ScheduleExecutor exec(
        plan.schedule, *net,
        {.reduction_bandwidth = {}, .launch_latency = plan.latency, .channel_rate = plan.channel_rate, .flow_salt = 0});
    exec.start(engine);
    engine.run();
    out.time = std::max(exec.finish_time() - exec.start_time(), plan.floor);
  }
  std::lock_guard lock(mutex_);
  cache_.emplace(key, out);
  return out;
}

}  // namespace dtsim::workloads
