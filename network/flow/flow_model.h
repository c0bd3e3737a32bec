// FlowNetworkModel: the contention-aware NetworkModel. Every transfer is a flow on its routed path
// (cluster.route(src, dst, flow_hash)), or with adaptive routing one sub-flow of an equal share
// per sprayed route (transfer_paths); concurrent flows share link capacity max-min fairly, and
// the rates are re-solved whenever a flow starts or drains. A transfer completes when its last
// byte has drained at those rates plus its path latency, so a lone flow takes exactly what the
// analytical model says. Pick it with `--model flow`.
//   network::FlowNetworkModel net(cluster, {.accelerator = gpu_solver_or_null});
//   net.start(engine, {.src_gpu = 0, .dst_gpu = 8, .bytes = Bytes::mib(4)}, handler, tag);
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "network/flow/max_min_solver.h"
#include "network/network_model.h"
#include "topology/cluster.h"

namespace dtsim::network {

struct FlowModelOptions {
  // A solver for large flow sets, such as gpu_accel::make_cuda_max_min_solver() (which is null
  // when no GPU is present). Null: every solve runs on the CPU.
  std::shared_ptr<flow::FlowSolver> accelerator;
  // Solves with at least this many active flows go to the accelerator; smaller ones stay on the
  // CPU, where they finish before a kernel launch would.
  size_t accelerator_min_flows = flow::kAcceleratorMinFlows;
  // Bytes per second: where GPUs of a node have no peer access (scale_up.kind: none, what
  // NCCL_P2P_DISABLE gives), a copy goes through pinned host memory and its rate is latency
  // bound, not the PCIe links'; all copies from one GPU to another of its node share this rate
  // (the closed form's host-staged rate, hardware_view.h). 0: copies take the links' rate.
  double host_staged_rate = 0;
  // Links carry line rate x this (NetworkModel's LinkEfficiency).
  LinkEfficiency link_efficiency;
};

class FlowNetworkModel final : public NetworkModel, private sim::EventHandler {
 public:
  // `cluster` must outlive the model. The model is the handler of its own pending events, so it
  // neither copies nor moves.
  FlowNetworkModel(const topology::Cluster& cluster, FlowModelOptions options = {});
  FlowNetworkModel(const FlowNetworkModel&) = delete;
  FlowNetworkModel& operator=(const FlowNetworkModel&) = delete;

  std::string_view name() const override { return "flow"; }
  void start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done,
             uint64_t payload) override;
  // Bytes of every flow (or sub-flow) that has fully drained (its receiver is notified a path
  // latency after the transfer's last one).
  Bytes bytes_delivered() const override { return delivered_; }

  // Active flows, a sprayed transfer counting one per sub-flow.
  size_t active_flows() const { return flows_.size(); }
  // Rate of active flow `i` (in start order) at the last solve, bytes per second.
  double rate_of(size_t i) const { return flows_.at(i).rate; }
  uint64_t solves() const { return solves_; }
  uint64_t accelerated_solves() const { return accelerated_solves_; }
  // The largest link load / capacity seen at any solve so far (<= 1 up to rounding).
  double peak_link_utilization() const { return peak_utilization_; }

 private:
  struct ActiveFlow {
    std::vector<topology::LinkId> path;
    double remaining = 0;  // bytes not yet drained
    double rate = 0;       // bytes per second since the last solve
    Bytes bytes;
    Time latency;
    sim::EventHandler* done = nullptr;
    uint64_t payload = 0;
    int64_t staged_pair = -1;  // src * gpus + dst of a host-staged copy; -1 otherwise
    uint64_t transfer = 0;     // the transfer it carries (a share) of, in start order
    double max_rate = 0;       // its transfer's Transfer::max_rate, shared by the sub-flows
    double weight = 1;         // 1 / its transfer's sub-flows: a transfer gets one share in all
  };

  // One event at a time is live: the solve after a burst of starts, or the next completion.
  // Payloads carry a generation number; an event whose generation is stale is ignored.
  void on_event(sim::Engine& engine, uint64_t payload) override;
  void schedule(sim::Engine& engine, Time at);
  void advance_to(Time now);
  void complete_drained(sim::Engine& engine);
  void solve();
  void schedule_next_completion(sim::Engine& engine);

  const topology::Cluster& cluster_;
  FlowModelOptions options_;
  flow::CpuMaxMinSolver cpu_;
  std::vector<ActiveFlow> flows_;  // in start order, which keeps every pass deterministic
  Time last_advance_;
  uint64_t generation_ = 0;
  Bytes delivered_;
  uint64_t next_transfer_ = 0;
  std::unordered_map<uint64_t, uint32_t> open_subflows_;  // transfer -> its sub-flows not yet drained
  uint64_t solves_ = 0;
  uint64_t accelerated_solves_ = 0;
  double peak_utilization_ = 0;

  // Scratch for building each solve's problem over only the links active flows cross.
  flow::FlowProblem problem_;
  std::vector<double> rates_;
  std::vector<int32_t> dense_link_;  // cluster link id -> problem link id, -1 when unused
  std::vector<uint32_t> dense_path_;
  std::unordered_map<int64_t, uint32_t> staged_links_;  // host-staged GPU pair -> problem link id
  std::vector<double> link_load_;  // max_link_utilization's scratch
};

}  // namespace dtsim::network
