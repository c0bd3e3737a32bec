#include "collectives/network_plan.h"

#include <algorithm>
#include <cmath>

#include "collectives/algorithm_cost.h"
#include "collectives/flow_collective_model.h"
#include "network/network_model.h"

namespace dtsim::collectives {

Time link_latency_path(const Schedule& schedule, const topology::Cluster& cluster) {
  const auto& ts = schedule.transfers();
  std::vector<int64_t> done(ts.size(), 0);
  int64_t longest = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    int64_t start = 0;
    for (uint32_t d : schedule.deps_of(ts[i])) start = std::max(start, done[d]);
    const network::Transfer t{ts[i].src_gpu, ts[i].dst_gpu, ts[i].bytes, transfer_hash(static_cast<uint32_t>(i)),
                              ts[i].nic};
    int64_t latency = 0;
    for (topology::LinkId l : network::transfer_route(cluster, t)) latency += cluster.link(l).latency.ps();
    done[i] = start + latency;
    longest = std::max(longest, done[i]);
  }
  return Time::ps(longest);
}

RankPlan rank_plan_on(const Schedule& schedule, std::vector<int> gpus, const topology::Cluster& cluster) {
  const auto& ts = schedule.transfers();
  return rank_plan(schedule, std::move(gpus), [&](int src, int dst, uint32_t i) {
    return network::empty_message_latency(cluster, {.src_gpu = dst, .dst_gpu = src, .bytes = Bytes(0), .flow_hash = 0, .nic = ts[i].nic, .max_rate = 0});
  });
}

Time notice_latency(const topology::Cluster& cluster, int from, int to) {
  return network::empty_message_latency(cluster, {.src_gpu = from, .dst_gpu = to, .bytes = Bytes(0), .flow_hash = 0, .nic = -1, .max_rate = 0});
}

namespace {

// Records when each member's part was done (the payload: the member).
struct Ends final : sim::EventHandler {
  std::vector<Time> at;
  void on_event(sim::Engine& engine, uint64_t member) override { at[member] = engine.now(); }
};

}  // namespace

Time time_alone_by_rank(const NetworkPlan& plan, CollectiveKind kind, std::span<const Communicator> groups,
                        const Schedule& schedule, const topology::Cluster& cluster,
                        network::NetworkModel* network) {
  if (plan.closed_form) {
    Time heard;
    for (const Communicator& comm : groups) {
      for (int a : comm.ranks) {
        for (int b : comm.ranks) heard = std::max(heard, notice_latency(cluster, a, b));
      }
    }
    return heard + plan.time;
  }
  std::vector<int> gpus;
  for (const Communicator& comm : groups) gpus.insert(gpus.end(), comm.ranks.begin(), comm.ranks.end());
  const RankPlan ranks = rank_plan_on(schedule, gpus, cluster);
  ExecutorOptions options = executor_options(plan);
  options.ranks = &ranks;
  ScheduleExecutor exec(schedule, *network, options);
  sim::Engine engine;
  Ends ends;
  ends.at.assign(ranks.gpus.size(), Time::zero());
  // A send (send_recv on a pair) is reached by its sender, its receiver posted; a collective by all.
  std::vector<uint8_t> posted(ranks.gpus.size(), 0);
  if (kind == CollectiveKind::send_recv) {
    for (const Communicator& comm : groups) {
      if (comm.ranks.size() == 2) posted[ranks.member_of(comm.ranks[1])] = 1;
    }
  }
  for (size_t m = 0; m < ranks.gpus.size(); ++m) {
    if (posted[m]) exec.posted(static_cast<uint32_t>(m), ends, m);
  }
  for (size_t m = 0; m < ranks.gpus.size(); ++m) {
    if (!posted[m]) exec.arrive(engine, static_cast<uint32_t>(m), ends, m);
  }
  engine.run();
  Time last;
  for (const Communicator& comm : groups) {
    const int leader = *std::min_element(comm.ranks.begin(), comm.ranks.end());
    Time heard, told;
    for (int g : comm.ranks) {
      const Time done = std::max(ends.at[ranks.member_of(g)], plan.floor);
      if (kind == CollectiveKind::send_recv || comm.ranks.size() < 2) {
        last = std::max(last, done);
        continue;
      }
      // A collective's members end together, through its lowest GPU (OnlineNetwork).
      heard = std::max(heard, done + notice_latency(cluster, g, leader));
      told = std::max(told, notice_latency(cluster, leader, g));
    }
    if (heard.ps() > 0) last = std::max(last, heard + told);
  }
  return last;
}

NetworkPlan plan_on_network(const AnalyticalCollectiveModel& model, const topology::Cluster& cluster,
                            CollectiveKind kind, Bytes bytes, const Communicator& comm,
                            const CollectiveEstimate& tuned, bool coalesce) {
  NetworkPlan plan;
  plan.algorithm = tuned.algorithm;
  plan.protocol = tuned.protocol;
  // NVLS reduces in the NVSwitch, which the point-to-point schedules cannot express; inside one
  // NVLink domain its traffic meets no one else's, so it keeps the closed form's price.
  if (tuned.algorithm == Algorithm::nvls) {
    plan.closed_form = true;
    plan.time = tuned.time;
    return plan;
  }
  const FlowChoice run = flow_choice(model, kind, bytes, comm, tuned);
  plan.algorithm = run.algorithm;
  plan.protocol = run.protocol;
  const CostQuery q{kind, bytes.as_double(), model.hardware().shape_of(comm), run.protocol, tuned.channels};
  const int nics_per_gpu = cluster.spec().nics_per_gpu();
  // On the wire each protocol carries its line format: LL's flags are half of every 16 bytes,
  // LL128's 8 of every 128 (ll_bandwidth_fraction, ll128_bandwidth_fraction); rates stay payload.
  const Bytes wire(
      static_cast<int64_t>(std::llround(bytes.as_double() / model.parameters().bandwidth_fraction(run.protocol))));
  // A broadcast or reduce chain streams (NCCL pipelines it far finer than transfers could): every
  // hop at once, with the closed form's pipeline fill added to its latency.
  const bool chain = kind == CollectiveKind::broadcast || kind == CollectiveKind::reduce;
  const bool streamed = chain && run.algorithm == Algorithm::ring;
  int channels = tuned.channels;
  if (coalesce && run.algorithm == Algorithm::ring) {
    const int rails = q.shape.nodes > 1 ? std::max(1, q.shape.ranks_per_node) * nics_per_gpu : 1;
    channels = std::max(1, std::min(channels, rails));
  }
  plan.schedule = streamed ? streamed_chain_schedule(kind, wire, comm, channels, q.shape.ranks_per_node, nics_per_gpu)
                           : build_schedule(run.algorithm, kind, wire, comm, channels, q.shape.ranks_per_node,
                                            nics_per_gpu);
  const AlgoCost cost = algorithm_cost(model.hardware(), run.algorithm, q);
  const Time closed = Time::us(cost.latency_us + (streamed ? cost.fill_us : 0.0));
  const Time links = link_latency_path(plan.schedule, cluster);
  // NCCL's per-step software latency (launch, flag waits, proxy), which the closed form prices
  // and the links do not: the closed form's latency less what the schedule's links already charge
  // on its longest chain, added before the first transfer starts.
  plan.latency = closed > links ? closed - links : Time{};
  if (run.algorithm == Algorithm::nvls_tree) {
    plan.floor = Time::us(cost.time_us(bytes.as_double()));
    plan.floor_from = "NVLS-tree's in-switch part inside each node";
  }
  if (cost.window_us > 0) {
    const Time window = Time::us(cost.window_us);
    if (window > plan.floor) plan.floor = window, plan.floor_from = "TCPX's FIFO slot waits";
  }
  // A ring channel, or a streamed chain's, moves at most what the closed form lets it
  // (flow_channel_cap), the tuned channels' share spread over the channels the lowering runs.
  // Trees are not capped here: their hops forward slices of 64 KiB and more, store and forward,
  // where NCCL's protocols pipeline far finer, and a capped slice would pay the cap's rate on every
  // hop.
  if (run.algorithm == Algorithm::ring) {
    plan.channel_rate =
        flow_channel_cap(model.parameters(), run.algorithm, run.protocol, q.shape.nodes > 1,
                         model.hardware().compute_capability,
                         static_cast<double>(tuned.channels) / std::max(1, plan.schedule.channels()));
  }
  // A send/recv pair, or a hypercube round's, copies at the closed form's send/recv rate.
  if (copies_pairwise(run.algorithm, kind))
    plan.channel_rate = flow_p2p_cap(model.hardware(), q.shape, plan.schedule.channels());
  return plan;
}

}  // namespace dtsim::collectives
