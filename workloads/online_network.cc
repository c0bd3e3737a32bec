#include "workloads/online_network.h"

#include <algorithm>
#include <stdexcept>

namespace dtsim::workloads {

collectives::NetworkPlan online_plan(const collectives::AnalyticalCollectiveModel& model,
                                     const topology::Cluster& cluster, collectives::CollectiveKind kind, Bytes bytes,
                                     const collectives::Communicator& comm) {
  return collectives::plan_on_network(model, cluster, kind, bytes, comm, model.estimate(kind, bytes, comm),
                                      /*coalesce=*/true);
}

OnlineNetwork::OnlineNetwork(const collectives::AnalyticalCollectiveModel& model, const topology::Cluster& cluster,
                             network::NetworkModel& network)
    : model_(model), cluster_(cluster), network_(network) {}

const collectives::NetworkPlan& OnlineNetwork::plan_of(const Op& op, const collectives::Communicator& comm) {
  const collectives::CollectiveKind kind =
      op.kind == OpKind::send ? collectives::CollectiveKind::send_recv : op.collective;
  auto& slot = plans_[{static_cast<int>(kind), op.bytes.count(), &comm}];
  if (!slot) slot = std::make_unique<collectives::NetworkPlan>(online_plan(model_, cluster_, kind, op.bytes, comm));
  return *slot;
}

void OnlineNetwork::set_salt_domains(std::vector<int> domain_of_gpu) {
  int domains = 1;
  for (int d : domain_of_gpu) {
    if (d < 0) throw std::invalid_argument("online network: a salt domain is a non-negative index");
    domains = std::max(domains, d + 1);
  }
  domain_of_gpu_ = std::move(domain_of_gpu);
  salts_.assign(static_cast<size_t>(domains), 0);
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
  if (!domain_of_gpu_.empty() && !comm.ranks.empty()) {
    r.domain = static_cast<size_t>(domain_of_gpu_.at(static_cast<size_t>(comm.ranks.front())));
  }
  ++live_;
  launch(engine, slot);
}

void OnlineNetwork::launch(sim::Engine& engine, uint32_t slot) {
  Running& r = running_[slot];
  const collectives::NetworkPlan& plan = *r.plan;
  // A timer (the closed form's time, or the floor) and the schedule each report to on_event.
  if (plan.closed_form) {
    r.pending = 1;
    engine.schedule_in(plan.time, *this, slot);
    return;
  }
  r.pending = plan.floor.ps() > 0 ? 2 : 1;
  if (plan.floor.ps() > 0) engine.schedule_in(plan.floor, *this, slot);
  // Each instance its own salt: concurrent collectives' transfers hash to their own ECMP routes.
  const uint64_t salt = ++salts_[r.domain] * 0xd1b54a32d192ed03ULL + r.domain * 0x9e3779b97f4a7c15ULL;
  r.exec = std::make_unique<collectives::ScheduleExecutor>(plan.schedule, network_,
                                                           collectives::executor_options(plan, salt));
  r.exec->notify(*this, slot);
  r.exec->start(engine);
  sent_ += plan.schedule.total_bytes();
}

void OnlineNetwork::on_event(sim::Engine& engine, uint64_t payload) {
  const auto slot = static_cast<uint32_t>(payload);
  Running& r = running_[slot];
  if (--r.pending > 0) return;
  // The executor reports in an event of its own (ScheduleExecutor::notify): none of it runs here.
  r.exec.reset();
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
  const collectives::NetworkPlan plan = online_plan(model_, cluster_, kind, bytes, comm);
  collectives::CollectiveEstimate out = model_.estimate(kind, bytes, comm);
  out.algorithm = plan.algorithm;
  out.protocol = plan.protocol;
  if (plan.closed_form) {
    out.time = plan.time;
  } else {
    const std::unique_ptr<network::NetworkModel> net = make_network_();
    sim::Engine engine;
    collectives::ScheduleExecutor exec(plan.schedule, *net, collectives::executor_options(plan));
    exec.start(engine);
    engine.run();
    out.time = std::max(exec.finish_time() - exec.start_time(), plan.floor);
  }
  std::lock_guard lock(mutex_);
  cache_.emplace(key, out);
  return out;
}

}  // namespace dtsim::workloads
