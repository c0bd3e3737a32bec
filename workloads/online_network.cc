#include "workloads/online_network.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/error.h"

namespace dtsim::workloads {

collectives::NetworkPlan online_plan(const collectives::AnalyticalCollectiveModel& model,
                                     const topology::Cluster& cluster, collectives::CollectiveKind kind, Bytes bytes,
                                     const collectives::Communicator& comm) {
  return collectives::plan_on_network(model, cluster, kind, bytes, comm, model.estimate(kind, bytes, comm),
                                      /*coalesce=*/true);
}

namespace {

// Event payloads: a part's slot (its share of the schedule, or its floor's or closed form's timer,
// ended), or an instance's slot above a member's index with kNotice (an arrival heard of), kEnded
// (member 0 hears the member's part is done) or kRelease (the member hears all are).
constexpr uint64_t kNotice = uint64_t{1} << 63;
constexpr uint64_t kEnded = uint64_t{1} << 62;
constexpr uint64_t kRelease = uint64_t{1} << 61;
constexpr uint64_t kKinds = kNotice | kEnded | kRelease;
constexpr int kMemberBits = 24;

}  // namespace

OnlineNetwork::OnlineNetwork(const collectives::AnalyticalCollectiveModel& model, const topology::Cluster& cluster,
                             network::NetworkModel& network)
    : model_(model), cluster_(cluster), network_(network) {}

const OnlineNetwork::Plan& OnlineNetwork::plan_of(const Op& op, const collectives::Communicator& comm) {
  const collectives::CollectiveKind kind =
      op.kind == OpKind::send ? collectives::CollectiveKind::send_recv : op.collective;
  auto& slot = plans_[{static_cast<int>(kind), op.bytes.count(), &comm}];
  if (slot) return *slot;
  slot = std::make_unique<Plan>();
  Plan& p = *slot;
  p.net = online_plan(model_, cluster_, kind, op.bytes, comm);
  p.ranks = collectives::rank_plan_on(p.net.schedule, comm.ranks, cluster_);
  collectives::ExecutorOptions by_rank;
  by_rank.ranks = &p.ranks;
  if (!partition_of_gpu_.empty() && !p.net.closed_form &&
      !collectives::ScheduleExecutor(p.net.schedule, network_, by_rank).hands_off_within(partition_of_gpu_)) {
    throw InputError(
        SourceLocation{}, "--partitions",
        std::string(collectives::name(kind)) + " runs " +
        std::string(collectives::name(p.net.algorithm)) +
        ", whose schedule starts a transfer on another's landing across the cut with no message between; use "
        "collectives.algorithm: ring or leave --partitions out");
  }
  const size_t n = p.ranks.gpus.size();
  p.together = !p.net.closed_form && kind != collectives::CollectiveKind::send_recv && n > 1;
  if (p.together) {
    for (int g : p.ranks.gpus) {
      p.to_leader.push_back(collectives::notice_latency(cluster_, g, p.ranks.gpus[0]));
      p.from_leader.push_back(collectives::notice_latency(cluster_, p.ranks.gpus[0], g));
    }
  }
  if (p.net.closed_form) {
    p.notice.assign(n * n, Time::zero());
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = 0; b < n; ++b) p.notice[a * n + b] = collectives::notice_latency(cluster_, p.ranks.gpus[a], p.ranks.gpus[b]);
    }
  }
  return p;
}

void OnlineNetwork::set_salt_domains(std::vector<int> domain_of_gpu) {
  for (int d : domain_of_gpu) {
    if (d < 0) throw std::invalid_argument("online network: a salt domain is a non-negative index");
  }
  domain_of_gpu_ = std::move(domain_of_gpu);
}

uint32_t OnlineNetwork::new_part() {
  if (free_parts_.empty()) {
    parts_.emplace_back();
    return static_cast<uint32_t>(parts_.size() - 1);
  }
  const uint32_t slot = free_parts_.back();
  free_parts_.pop_back();
  parts_[slot] = Part{};
  return slot;
}

void OnlineNetwork::start(sim::Engine& engine, const Op& op, const collectives::Communicator& comm, int gpu,
                          uint64_t instance, sim::EventHandler& done, uint64_t payload, uint64_t delivered) {
  if (op.kind != OpKind::collective && op.kind != OpKind::send) {
    throw std::invalid_argument("online network: only collectives and sends run on the network");
  }
  if (op.kind == OpKind::send && (comm.ranks.size() != 2 || comm.ranks[0] != gpu)) {
    throw std::invalid_argument("online network: a send's communicator lists its sender, then its receiver");
  }
  uint32_t slot;
  {
    const std::lock_guard lock(mutex_);
    const Plan& plan = plan_of(op, comm);
    slot = new_part();
    Part& p = parts_[slot];
    p.plan = &plan;
    p.comm = &comm;
    p.instance = instance;
    p.repeats = std::max(1, op.repeat);
    p.member = plan.ranks.member_of(gpu);
    p.done = &done;
    p.payload = payload;
    p.receiver = false;
    if (!domain_of_gpu_.empty() && !comm.ranks.empty()) {
      p.domain = static_cast<size_t>(domain_of_gpu_.at(static_cast<size_t>(comm.ranks.front())));
    }
    if (op.kind == OpKind::send) {
      // Its receiver's part: told when the bytes of the last repeat have landed.
      const uint32_t r = new_part();
      Part& q = parts_[r];
      q = parts_[slot];
      parts_[slot].receiver_part = r;
      q.member = plan.ranks.member_of(comm.ranks.at(1));
      q.receiver = true;
      q.payload = delivered;
    }
  }
  ++live_;
  join(engine, slot);
}

void OnlineNetwork::create(Instance& in, const Part& p, uint32_t slot, const InstanceKey& key) {
  const Plan& plan = *p.plan;
  const size_t n = plan.ranks.gpus.size();
  in.plan = &plan;
  in.key = key;
  in.members_left.store(static_cast<uint32_t>(n), std::memory_order_relaxed);
  in.part_of.assign(n, 0);
  in.ended = 0;
  if (plan.net.closed_form) {
    in.unheard.assign(n, static_cast<uint32_t>(n));
    return;
  }
  // Each instance its own salt, from its communicator's first GPU and its number on that
  // communicator: concurrent collectives' transfers hash to their own ECMP routes, the same ones
  // whatever else runs. Communicators side by side (a data-parallel group per GPU of a node) take
  // consecutive first GPUs, so their salts differ in the low bits ECMP picks a path by, as
  // consecutive salts do.
  const auto first = static_cast<uint64_t>(p.comm->ranks.front());
  const uint64_t id =
      first + static_cast<uint64_t>(cluster_.gpu_count()) * ((p.instance << 16) + static_cast<uint64_t>(p.repeat) + 1);
  const uint64_t salt = id * 0xd1b54a32d192ed03ULL + p.domain * 0x9e3779b97f4a7c15ULL;
  collectives::ExecutorOptions options = collectives::executor_options(plan.net, salt);
  options.ranks = &plan.ranks;
  in.exec = std::make_unique<collectives::ScheduleExecutor>(plan.net.schedule, network_, options);
  sent_.fetch_add(plan.net.schedule.total_bytes().count(), std::memory_order_relaxed);
  if (p.receiver_part != kNoPart) {
    // A send's receiver has posted its buffer: it is there from the start.
    Part& q = parts_[p.receiver_part];
    q.slot = slot;
    q.pending = 1;
    in.exec->posted(q.member, *this, p.receiver_part);
  }
}

OnlineNetwork::Part& OnlineNetwork::part_at(uint32_t slot) {
  const std::lock_guard lock(mutex_);
  return parts_[slot];
}

OnlineNetwork::Instance& OnlineNetwork::instance_at(uint32_t slot) {
  const std::lock_guard lock(mutex_);
  return instances_[slot];
}

void OnlineNetwork::join(sim::Engine& engine, uint32_t part) {
  Part& p = part_at(part);
  const Plan& plan = *p.plan;
  const size_t n = plan.ranks.gpus.size();
  const auto key = std::make_tuple(p.comm, p.instance, p.repeat);
  uint32_t slot;
  Instance* found;
  {
    // Made whole under the lock, so that a member reaching it from another partition meanwhile
    // finds it so.
    const std::lock_guard lock(mutex_);
    auto [it, fresh] = instance_of_.try_emplace(key, 0);
    if (fresh) {
      if (free_instances_.empty()) {
        instances_.emplace_back();
        it->second = static_cast<uint32_t>(instances_.size() - 1);
      } else {
        it->second = free_instances_.back();
        free_instances_.pop_back();
      }
    }
    slot = it->second;
    found = &instances_[slot];
    if (fresh) create(*found, p, slot, key);
  }
  Instance& in = *found;
  p.slot = slot;
  in.part_of[p.member] = part;
  if (plan.net.closed_form) {
    for (uint32_t b = 0; b < n; ++b) {
      if (b == p.member) continue;
      engine.schedule_at_site(engine.now() + plan.notice[p.member * n + b], site_of(plan, b), *this,
                              kNotice | (uint64_t{slot} << kMemberBits) | b);
    }
    heard(engine, slot, p.member);
    return;
  }
  p.pending = plan.net.floor.ps() > 0 ? 2 : 1;
  if (plan.net.floor.ps() > 0) {
    engine.schedule_at_site(engine.now() + plan.net.floor, site_of(plan, p.member), *this, part);
  }
  in.exec->arrive(engine, p.member, *this, part);
}

void OnlineNetwork::heard(sim::Engine& engine, uint32_t slot, uint32_t member) {
  Instance& in = instance_at(slot);
  if (--in.unheard[member] != 0) return;
  // Every member's arrival has reached this one: its part takes the closed form's time from here.
  const uint32_t part = in.part_of[member];
  part_at(part).pending = 1;
  engine.schedule_at_site(engine.now() + in.plan->net.time, site_of(*in.plan, member), *this, part);
}

void OnlineNetwork::on_event(sim::Engine& engine, uint64_t payload) {
  if ((payload & kKinds) != 0) {
    const uint64_t body = payload & ~kKinds;
    const auto slot = static_cast<uint32_t>(body >> kMemberBits);
    const auto member = static_cast<uint32_t>(body & ((uint64_t{1} << kMemberBits) - 1));
    if ((payload & kNotice) != 0) {
      heard(engine, slot, member);
    } else if ((payload & kRelease) != 0) {
      finish(engine, instance_at(slot).part_of[member]);
    } else {
      // At member 0: once every member's part is done, each hears so.
      Instance& in = instance_at(slot);
      const Plan& plan = *in.plan;
      if (++in.ended < plan.ranks.gpus.size()) return;
      for (uint32_t m = 0; m < plan.ranks.gpus.size(); ++m) {
        engine.schedule_at_site(engine.now() + plan.from_leader[m], site_of(plan, m), *this,
                                kRelease | (uint64_t{slot} << kMemberBits) | m);
      }
    }
    return;
  }
  const auto part = static_cast<uint32_t>(payload);
  Part& p = part_at(part);
  if (--p.pending > 0) return;
  if (p.plan->together) {
    engine.schedule_at_site(engine.now() + p.plan->to_leader[p.member], site_of(*p.plan, 0), *this,
                            kEnded | (uint64_t{p.slot} << kMemberBits) | p.member);
    return;
  }
  finish(engine, part);
}

void OnlineNetwork::finish(sim::Engine& engine, uint32_t part) {
  Part& p = part_at(part);
  // This member is done with the instance; the last one frees it (its executor has no event left:
  // every clear-to-send and acknowledgement came before some member's part ended).
  Instance& in = instance_at(p.slot);
  if (in.members_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    in.exec.reset();
    in.unheard.clear();
    in.part_of.clear();
    const std::lock_guard lock(mutex_);
    instance_of_.erase(in.key);
    free_instances_.push_back(p.slot);
  }
  if (++p.repeat < p.repeats) {
    if (!p.receiver) join(engine, part);  // a receiver waits to be posted by its sender's next
    return;
  }
  sim::EventHandler* done = p.done;
  const uint64_t done_payload = p.payload;
  const bool receiver = p.receiver;
  {
    const std::lock_guard lock(mutex_);
    free_parts_.push_back(part);
  }
  if (!receiver) --live_;
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
  const std::unique_ptr<network::NetworkModel> net = plan.closed_form ? nullptr : make_network_();
  out.time = collectives::time_alone_by_rank(plan, kind, {&comm, 1}, plan.schedule, cluster_, net.get());
  std::lock_guard lock(mutex_);
  cache_.emplace(key, out);
  return out;
}

}  // namespace dtsim::workloads
