// OnlineNetwork: a workload's communication run on a network model (flows or packets) that
// shares the executor's engine, so that every collective and send in flight at an instant shares
// NVLink, the NICs and the fabric with the others. Each op lowers, when the executor starts it,
// to the schedule plan_on_network gives it (the policy collective sweeps on these models use,
// network_plan.h); it completes when its last transfer lands, and the slower of that and its
// closed-form floor (NVLS-tree's in-switch part) sets when. NVLS inside one NVLink domain keeps
// the closed form's time and puts no traffic on the model.
//   OnlineNetwork comm(analytical, cluster, flow_network);
//   ExecutionResult r = Executor(compute, analytical, {.network = &comm}).run(workload);
#pragma once

#include <cstdint>
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

  void start(sim::Engine& engine, const Op& op, const collectives::Communicator& comm, sim::EventHandler& done,
             uint64_t payload) override;
  void on_event(sim::Engine& engine, uint64_t payload) override;

  // Each job's own ECMP salts: a collective or send on GPU g's communicator takes the next salt of
  // domain domain_of_gpu[g]'s sequence, so that the routes a job's transfers hash to do not depend
  // on what other jobs on the engine launched before them (jobs.h). Without: one sequence.
  void set_salt_domains(std::vector<int> domain_of_gpu);

  // Bytes the schedules put on the network so far (with each protocol's line format), to compare
  // with the model's bytes delivered.
  Bytes bytes_sent() const { return sent_; }
  // Operations started that have not landed.
  size_t in_flight() const { return live_; }

 private:
  struct Running {
    const collectives::NetworkPlan* plan = nullptr;
    std::unique_ptr<collectives::ScheduleExecutor> exec;
    int repeats_left = 0;
    int pending = 0;  // the schedule and the timer, those not yet done
    sim::EventHandler* done = nullptr;
    uint64_t payload = 0;
    size_t domain = 0;  // whose salts it draws
  };
  const collectives::NetworkPlan& plan_of(const Op& op, const collectives::Communicator& comm);
  void launch(sim::Engine& engine, uint32_t slot);

  const collectives::AnalyticalCollectiveModel& model_;
  const topology::Cluster& cluster_;
  network::NetworkModel& network_;
  // Plans by (collective, bytes, communicator): the communicator is the workload's, alive for the run.
  std::map<std::tuple<int, int64_t, const collectives::Communicator*>, std::unique_ptr<collectives::NetworkPlan>>
      plans_;
  std::vector<Running> running_;
  std::vector<uint32_t> free_;
  std::vector<int> domain_of_gpu_;
  std::vector<uint64_t> salts_{0};  // the last salt drawn, by domain
  size_t live_ = 0;
  Bytes sent_;
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
