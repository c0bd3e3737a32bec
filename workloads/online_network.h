// OnlineNetwork: a workload's communication run on a network model (flows or packets) that
// shares the executor's engine, so that every collective and send in flight at an instant shares
// NVLink, the NICs and the fabric with the others. Each op lowers to the schedule plan_on_network
// gives it (the policy collective sweeps on these models use, network_plan.h), and runs rank by
// rank (ScheduleExecutor::arrive): each member starts its part when it reaches the op, a transfer
// leaves once its receiver's clear-to-send has come back to its sender, and a member's own part
// is done when its transfers have landed (those it sent, acknowledged), and its closed-form floor
// (NVLS-tree's in-switch part) has passed since it arrived. A send's members then end. A
// collective's members end together: member 0 hears of each member's part being done a route's
// latency later, and once it has heard of all, tells each, a route's latency later. NCCL moves a
// collective's steps in fine slices over many channels, so that its members finish within a few
// link latencies of the slowest; the schedule's transfers are whole steps, store and forward, and
// would spread the members' ends by whole steps, a spread the next collective on the same
// members (whose compute between is equal) would inherit step by step. No member's event starts
// another's work at the same instant: every hand-over between members crosses a route's latency.
// NVLS inside one NVLink domain puts no traffic on the model: each member hears of every other's
// arrival a route's latency after it, and then takes the closed form's time.
//   OnlineNetwork comm(analytical, cluster, flow_network);
//   ExecutionResult r = Executor(compute, analytical, {.network = &comm}).run(workload);
#pragma once

#include <cstdint>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <tuple>
#include <vector>

#include "collectives/analytical_model.h"
#include "collectives/network_plan.h"
#include "collectives/schedule_executor.h"
#include "network/network_model.h"
#include "topology/cluster.h"
#include "workloads/executor.h"

namespace dtsim::workloads {

// The plan online execution runs a collective (or a send, as send_recv) with: the tuner's choice
// lowered by plan_on_network, rings coalesced.
collectives::NetworkPlan online_plan(const collectives::AnalyticalCollectiveModel& model,
                                     const topology::Cluster& cluster, collectives::CollectiveKind kind, Bytes bytes,
                                     const collectives::Communicator& comm);

class OnlineNetwork final : public CommunicationRunner, public sim::EventHandler {
 public:
  // `model` picks each collective's algorithm, protocol and channels (the tuner) and prices the
  // software latency and the floors; `network` moves the bytes on `cluster`. All must outlive the
  // run.
  OnlineNetwork(const collectives::AnalyticalCollectiveModel& model, const topology::Cluster& cluster,
                network::NetworkModel& network);

  void start(sim::Engine& engine, const Op& op, const collectives::Communicator& comm, int gpu, uint64_t instance,
             sim::EventHandler& done, uint64_t payload, uint64_t delivered) override;
  void on_event(sim::Engine& engine, uint64_t payload) override;
  sim::Site site_of_gpu(int gpu) const override { return network_.site_of_gpu(gpu); }

  // Each job's own ECMP salts: an instance's salt, drawn from its communicator's first GPU g and
  // its number on that communicator, is offset by domain domain_of_gpu[g], so that the routes a
  // job's transfers hash to do not depend on what other jobs run beside them (jobs.h). Without:
  // domain 0 for all.
  void set_salt_domains(std::vector<int> domain_of_gpu);

  // The run is on a sim::PartitionedEngine that puts GPU g in partition partition_of_gpu[g]: an
  // op whose schedule starts a transfer when another lands in another partition, neither at its
  // sender nor its sender's own (released by the acknowledgement), is refused, in one line, when
  // it is first reached (ScheduleExecutor::hands_off_within; none of the schedules online
  // execution runs today). Empty (the default): one engine, nothing refused.
  void set_partitions(std::vector<uint32_t> partition_of_gpu) { partition_of_gpu_ = std::move(partition_of_gpu); }

  // Bytes the schedules put on the network so far (with each protocol's line format), to compare
  // with the model's bytes delivered.
  Bytes bytes_sent() const { return Bytes(sent_.load(std::memory_order_relaxed)); }
  // Ranks' parts in operations started that have not ended.
  size_t in_flight() const { return live_.load(std::memory_order_relaxed); }

 private:
  // A plan and what running it rank by rank needs: its RankPlan (a schedule's), and under the
  // closed form the latency of each member's arrival notice to each other (member a to b at
  // a * n + b).
  struct Plan {
    collectives::NetworkPlan net;
    collectives::RankPlan ranks;
    std::vector<Time> notice;
    // A collective's schedule ends together (see the file comment): each member's latency to and
    // from member 0, which hears every member's end and tells each.
    bool together = false;
    std::vector<Time> to_leader, from_leader;
  };
  // An instance: its communicator, its number on it, its repeat.
  using InstanceKey = std::tuple<const collectives::Communicator*, uint64_t, int>;
  // One instance of an op (one of its repeats), shared by its members: its executor, or under the
  // closed form, how many arrivals each member has yet to hear of.
  struct Instance {
    const Plan* plan = nullptr;
    std::unique_ptr<collectives::ScheduleExecutor> exec;
    std::vector<uint32_t> unheard;
    std::vector<uint32_t> part_of;  // each member's part
    uint32_t ended = 0;             // members whose end member 0 has heard of
    std::atomic<uint32_t> members_left{0};
    InstanceKey key;
  };
  static constexpr uint32_t kNoPart = UINT32_MAX;
  // One member's part in one op, all its repeats: what it waits for, and whom to tell.
  struct Part {
    const Plan* plan = nullptr;
    const collectives::Communicator* comm = nullptr;
    uint64_t instance = 0;
    int repeat = 0, repeats = 1;
    uint32_t member = 0;
    uint32_t slot = 0;  // its instance's
    int pending = 0;    // its part of the schedule and the floor's timer, those not yet done
    uint32_t receiver_part = kNoPart;  // a send's: its receiver's part
    bool receiver = false;  // a send's receiver: tells `done` once the last repeat has landed
    size_t domain = 0;
    sim::EventHandler* done = nullptr;
    uint64_t payload = 0;
  };
  const Plan& plan_of(const Op& op, const collectives::Communicator& comm);
  uint32_t new_part();
  void join(sim::Engine& engine, uint32_t part);  // its member reaches its current repeat
  // Makes a fresh instance for `p`'s op (under the lock).
  void create(Instance& in, const Part& p, uint32_t slot, const InstanceKey& key);
  // A part or an instance by slot (under the lock: the deques may grow meanwhile).
  Part& part_at(uint32_t slot);
  Instance& instance_at(uint32_t slot);
  void heard(sim::Engine& engine, uint32_t slot, uint32_t member);
  void finish(sim::Engine& engine, uint32_t part);  // its member is done with its instance
  sim::Site site_of(const Plan& plan, uint32_t member) const {
    return network_.site_of_gpu(plan.ranks.gpus[member]);
  }

  const collectives::AnalyticalCollectiveModel& model_;
  const topology::Cluster& cluster_;
  network::NetworkModel& network_;
  // Plans by (collective, bytes, communicator): the communicator is the workload's, alive for the run.
  std::map<std::tuple<int, int64_t, const collectives::Communicator*>, std::unique_ptr<Plan>> plans_;
  // Parts and instances live in deques (their addresses stay put) and are reused by slot; the
  // mutex guards the tables, not what a part or an instance holds, which only its members' sites
  // touch (atomics aside).
  std::mutex mutex_;
  std::deque<Part> parts_;
  std::vector<uint32_t> free_parts_;
  std::deque<Instance> instances_;
  std::vector<uint32_t> free_instances_;
  std::map<InstanceKey, uint32_t> instance_of_;
  std::vector<int> domain_of_gpu_;
  std::vector<uint32_t> partition_of_gpu_;
  std::atomic<size_t> live_{0};
  std::atomic<int64_t> sent_{0};
};

// Prices each collective and send as OnlineNetwork runs it, but alone: its plan on a fresh network
// model from `make_network`, on an idle engine, the slower of that and its floor. The executor run
// on these prices is what online execution gives where no link is shared between concurrent
// transfers: the oracle online execution is held to, and the contention a run online shows is
// measured against it. Prices are cached by (collective, bytes, communicator's GPUs).
class AloneOnNetworkCostModel final : public collectives::CollectiveCostModel {
 public:
  using MakeNetwork = std::function<std::unique_ptr<network::NetworkModel>()>;
  AloneOnNetworkCostModel(const collectives::AnalyticalCollectiveModel& model, const topology::Cluster& cluster,
                          MakeNetwork make_network);
  collectives::CollectiveEstimate estimate(collectives::CollectiveKind kind, Bytes bytes,
                                           const collectives::Communicator& comm) const override;

 private:
  const collectives::AnalyticalCollectiveModel& model_;
  const topology::Cluster& cluster_;
  MakeNetwork make_network_;
  mutable std::mutex mutex_;
  mutable std::map<std::tuple<int, int64_t, std::vector<int>>, collectives::CollectiveEstimate> cache_;
};

}  // namespace dtsim::workloads
