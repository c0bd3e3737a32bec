// Network plan: how a collective runs on a network model (flows or packets), the one policy that
// collective sweeps and workloads run on those models share. The tuner's algorithm and protocol
// when the algorithm has a point-to-point lowering, else the cheapest ring or tree (flow_choice,
// flow_collective_model.h); its schedule of transfers, with each protocol's line format on the
// wire; NCCL's software latency that the closed form prices and the links do not, charged before
// the first transfer; and the channel rate that caps each transfer.
//   NetworkPlan plan = plan_on_network(model, cluster, CollectiveKind::all_reduce, Bytes::mib(64), comm,
//                                      model.estimate(CollectiveKind::all_reduce, Bytes::mib(64), comm));
//   ScheduleExecutor run(plan.schedule, network, {.launch_latency = plan.latency,
//                                                 .channel_rate = plan.channel_rate});
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "collectives/analytical_model.h"
#include "collectives/schedule.h"
#include "collectives/schedule_executor.h"
#include "topology/cluster.h"

namespace dtsim::collectives {

struct NetworkPlan {
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  Schedule schedule;
  Time latency;  // before the first transfer starts
  // NVLS inside one NVLink domain: no schedule; the collective takes the closed form's `time`.
  bool closed_form = false;
  Time time;
  // The least the collective takes: NVLS-tree's closed-form time (the schedule is its network
  // part; the closed form prices the in-switch part inside each node), or, where sends hold their
  // FIFO slots until they complete (TCPX), its sends' rate through those slots (AlgoCost::window_us).
  // Zero otherwise.
  Time floor;
  // What sets the floor, for a report that says which rows the closed form bound: "" without one.
  std::string_view floor_from;
  double channel_rate = 0;  // bytes/s on the wire one channel's transfer moves at most; 0: none
};

// How a ScheduleExecutor runs `plan`: its latency before the first transfer, its channel cap, and
// `flow_salt` added to every transfer's flow hash (ExecutorOptions).
inline ExecutorOptions executor_options(const NetworkPlan& plan, uint64_t flow_salt = 0) {
  return {.reduction_bandwidth = {},
          .launch_latency = plan.latency,
          .channel_rate = plan.channel_rate,
          .flow_salt = flow_salt};
}

// The latency a schedule's links charge along its longest dependency chain: each transfer its
// route's link latencies (routed as ScheduleExecutor routes it), after the latest of its
// dependencies.
Time link_latency_path(const Schedule& schedule, const topology::Cluster& cluster);

// Rank by rank (ScheduleExecutor::arrive): the RankPlan of `schedule` on members `gpus`, each pair's
// clear-to-send and acknowledgement taking the latency of the route back from its receiver to its
// sender (on the pair's first transfer's NIC slot).
RankPlan rank_plan_on(const Schedule& schedule, std::vector<int> gpus, const topology::Cluster& cluster);

// The latency of the route from GPU `from` to GPU `to` for a message of no bytes: how long one
// member's arrival takes to reach another under the closed form (NVLS inside one NVLink domain).
Time notice_latency(const topology::Cluster& cluster, int from, int to);

// What `plan` of `kind` takes run rank by rank with every member arriving at once (a send_recv on
// a pair, as a send: its sender arriving, its receiver posted), alone on `network` (idle, on an
// engine of its own): until the last member's part is done and at least its floor has passed, and
// for a collective, until its lowest GPU has heard so from every member and told each (its
// members end together: workloads/online_network.h); under the closed form (where `network` may
// be null), the closed form's time after the last member has heard of every other's arrival. `schedule` is the plan's for one group, or the same for each of
// `groups` (communicators of one shape, their GPUs disjoint) run side by side. The price online
// execution is held to where no link is shared.
Time time_alone_by_rank(const NetworkPlan& plan, CollectiveKind kind, std::span<const Communicator> groups,
                        const Schedule& schedule, const topology::Cluster& cluster,
                        network::NetworkModel* network);

// How `kind` of `bytes` (nccl-tests size) on `comm` runs on a network model of `cluster`, given
// the tuner's choice for it (`tuned`: algorithm, protocol, channels).
//
// `coalesce`: a ring is lowered on only as many channels as take distinct routes, one per NIC
// rail where it spans nodes (ranks per node x NICs per GPU, or fewer where fewer were tuned) and
// one inside a node (every channel's rotated ring crosses the same NVLink edges), each carrying
// the share and the cap of the channels it stands for. Under max-min sharing identical flows get
// identical rates, so the result is the same to a byte's rounding with up to 32x fewer transfers
// (a workload run online starts hundreds of thousands of collectives). What it gives up: duplicate
// channels on one NIC no longer hash to ECMP routes of their own.
NetworkPlan plan_on_network(const AnalyticalCollectiveModel& model, const topology::Cluster& cluster,
                            CollectiveKind kind, Bytes bytes, const Communicator& comm,
                            const CollectiveEstimate& tuned, bool coalesce = false);

}  // namespace dtsim::collectives
