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

// The default of FlowModelOptions::completion_window and of the scenario key
// network.flow.completion_window.
inline constexpr Time kDefaultCompletionWindow = Time::ps(1000);

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
  // Flows that start or drain within this of each other share one solve: a flow that would drain
  // within it of an event leaves the solve there (its transfer still completes when it drains),
  // and a start waits at most this long for the solve that gives it a rate, credited from its
  // start. A collective's waves of transfers start and finish picoseconds apart, and each of
  // them had cost a solve of all the others. Zero: a solve at every distinct instant.
  Time completion_window = kDefaultCompletionWindow;
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
  NetworkCounters counters() const override {
    return {.transfers = next_transfer_, .solves = solves_, .flows = flows_solved_, .packets = 0};
  }
  uint64_t accelerated_solves() const { return accelerated_solves_; }
  // The largest link load / capacity seen at any solve so far (<= 1 up to rounding).
  double peak_link_utilization() const { return peak_utilization_; }

 private:
  struct ActiveFlow {
    std::vector<topology::LinkId> path;
    // Progress: anchor_remaining bytes were left at anchor_time, and it has run at `rate` since
    // (re-anchored only when its rate changes, so a flow whose rate never changes drains at
    // exactly start + bytes / rate).
    double anchor_remaining = 0;
    Time anchor_time;
    double rate = 0;       // bytes per second since the last solve
    Bytes bytes;
    Time latency;
    sim::EventHandler* done = nullptr;
    uint64_t payload = 0;
    int64_t staged_pair = -1;  // src * gpus + dst of a host-staged copy; -1 otherwise
    uint64_t transfer = 0;     // the transfer it carries (a share) of, in start order
    double max_rate = 0;       // its transfer's Transfer::max_rate, shared by the sub-flows
    double weight = 1;         // 1 / its transfer's sub-flows: a transfer gets one share in all
    bool retired = false;      // drained (or within the completion window): leaves at this event
    bool fresh = true;         // started since the last solve: no rate yet
  };

  // One event at a time is live: the solve after a burst of starts, or the next completion.
  // Payloads carry a generation number; an event whose generation is stale is ignored.
  void on_event(sim::Engine& engine, uint64_t payload) override;
  void schedule(sim::Engine& engine, Time at);
  // The instant a flow drains at its rate; Time::max() when never.
  static Time drain_at(const ActiveFlow& f);
  // Retires every flow that drains by the end of the window; whether any did.
  bool complete_drained(sim::Engine& engine);
  // Solves the rates of the active flows; a flow whose rate changes runs at the new one from
  // `from` (now).
  void solve(Time from);
  void schedule_next_completion(sim::Engine& engine);

  const topology::Cluster& cluster_;
  FlowModelOptions options_;
  flow::CpuMaxMinSolver cpu_;
  std::vector<ActiveFlow> flows_;  // in start order, which keeps every pass deterministic
  uint64_t generation_ = 0;
  Time live_at_ = Time::max();  // when the one live event is due; Time::max() when none is
  Bytes delivered_;
  uint64_t next_transfer_ = 0;
  struct OpenTransfer {
    uint32_t open = 0;  // sub-flows not yet drained
    Time done_at;       // the latest drain instant plus path latency of those that have
  };
  std::unordered_map<uint64_t, OpenTransfer> open_subflows_;  // by transfer
  uint64_t solves_ = 0;
  uint64_t accelerated_solves_ = 0;
  uint64_t flows_solved_ = 0;  // flows over every solve
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
