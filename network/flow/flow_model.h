// FlowNetworkModel: the contention-aware NetworkModel. Every transfer is a flow on its routed path
// (cluster.route(src, dst, flow_hash)), or with adaptive routing one sub-flow of an equal share
// per sprayed route (transfer_paths); concurrent flows share link capacity max-min fairly, and
// the rates are re-solved whenever a flow starts or drains. A transfer completes when its last
// byte has drained at those rates plus its path latency, so a lone flow takes exactly what the
// analytical model says. Pick it with `--model flow`.
//   network::FlowNetworkModel net(cluster, {.accelerator = gpu_solver_or_null});
//   net.start(engine, {.src_gpu = 0, .dst_gpu = 8, .bytes = Bytes::mib(4)}, handler, tag);
// The problem is persistent: flows keep their links, and every link (cluster links and the
// virtual ones of host-staged copies and rate caps) the flows that cross it and their load. A
// solve covers only the flows whose rates a start or a drain since the last solve can change:
// those connected to it in the flow-link graph through tight links (load at capacity). A slack
// link binds none of its flows, so the flows beyond it keep their rates; the solve gives it the
// capacity they leave, and when the new rates fill it, it takes them in and solves again. A drain
// re-solves from a full link it left only where a flow still on it ran at the level of those that
// left (settle_left_links): otherwise the link bound none of them. Drain instants wait in a
// min-heap.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/block_arena.h"
#include "network/flow/max_min_solver.h"
#include "network/free_list.h"
#include "network/network_model.h"
#include "topology/cluster.h"

namespace dtsim::network {

// The default of FlowModelOptions::completion_window and of the scenario key
// network.flow.completion_window.
inline constexpr Time kDefaultCompletionWindow = Time::ps(1000);
// The default of FlowModelOptions::completion_precision and of network.flow.completion_precision.
inline constexpr double kDefaultCompletionPrecision = 0;

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
  // A copy between two GPUs of one node over PCIe (peer access, no network link on its route)
  // moves at most this share of the slowest PCIe link it crosses: a GPU's peer writes carry more
  // protocol overhead than a NIC's DMA, which keeps the link's own efficiency. 0: no such cap.
  double pcie_peer_efficiency = 0;
  // Flows that start or drain within this of each other share one solve: a flow that would drain
  // within it of an event leaves the solve there (its transfer still completes when it drains),
  // and a start waits at most this long for the solve that gives it a rate, credited from its
  // start. A collective's waves of transfers start and finish picoseconds apart, and each of
  // them had cost a solve of all the others. Zero: a solve at every distinct instant.
  Time completion_window = kDefaultCompletionWindow;
  // Relative batching of drains (SimGrid's surf/precision is the absolute counterpart): at a
  // drain event, a flow that would drain within this share of the time it has run so far
  // (drain instant - now <= precision x (now - its start)) leaves the solve there too, its
  // transfer still completing at the instant it drains at its last rate. The flows beside it gain
  // its share that much early, so every completion moves by at most about precision x the time
  // the flows have run. An all-to-all's flows, held at unequal rates by ECMP collisions, drain
  // at thousands of distinct instants microseconds apart, each a solve of nearly all of them.
  // Zero: only the absolute window batches.
  double completion_precision = kDefaultCompletionPrecision;
  // True: a solve covers only the flows that starts and drains since the last solve can affect
  // (connected to them through tight links). False: every solve covers every active flow (the
  // reference the tests hold the incremental solve to; the rates agree up to the solver's tie
  // tolerance, kTieTolerance).
  bool incremental = true;
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
  // Makes room at once for `transfers` more transfers of one flow each (under ECMP) about to
  // start, where a caller knows how many: growing per start copies the start-order index and
  // the transfer table at each doubling and touches fresh pages each time, as growing per
  // retirement would copy the free lists of transfers and slots. Changes no result.
  void reserve(size_t transfers);
  // Bytes of every flow (or sub-flow) that has fully drained (its receiver is notified a path
  // latency after the transfer's last one).
  Bytes bytes_delivered() const override { return delivered_; }

  // Active flows, a sprayed transfer counting one per sub-flow.
  size_t active_flows() const { return live_; }
  // Whether flows have started since the last solve: their rates are not known yet.
  bool awaiting_solve() const { return !fresh_.empty(); }
  // Active flow `i` (in start order; linear in i, for tests): its rate at the last solve that
  // covered it, in bytes per second, and which flow it is: its transfer (numbered in start order
  // among the transfers that became flows) and the index of its route in transfer_paths.
  double rate_of(size_t i) const { return slots_[active_slot(i)].rate; }
  struct FlowId {
    uint64_t transfer = 0;
    uint32_t route = 0;
  };
  FlowId flow_id_of(size_t i) const;
  uint64_t solves() const { return solves_; }
  // solves: solver calls; flows: the flows those solves covered, summed (with incremental
  // solves, the flows each re-solved, not every active flow).
  NetworkCounters counters() const override {
    return {.transfers = next_transfer_, .solves = solves_, .flows = flows_solved_, .packets = 0};
  }
  uint64_t accelerated_solves() const { return accelerated_solves_; }
  // The largest link load / capacity seen at any solve so far (<= 1 up to rounding), over the
  // links each solve covered.
  double peak_link_utilization() const { return peak_utilization_; }

 private:
  // A link of the persistent problem: cluster link l is link l; virtual links follow them, one
  // per GPU pair with host-staged copies in flight (they share the host-staged rate) and one per
  // capped transfer in flight (its sub-flows share Transfer::max_rate). A virtual link is freed
  // when its last flow leaves.
  struct LinkState {
    double capacity = 0;           // bytes per second
    double load = 0;               // the rates of its flows, summed
    sim::PoolList<uint32_t> flows;  // slots of the flows crossing it, in no particular order (link_pool_)
    int64_t staged_pair = -1;      // src * gpus + dst of a host-staged pair's link
  };
  // A flow crosses `link`, and sits at links_[link].flows[index] (so it leaves in O(1)). No
  // member initializers: the crossings' chunks are left untouched until written.
  struct Crossing {
    uint32_t link;
    uint32_t index;
  };
  struct ActiveFlow {
    // Progress: anchor_remaining bytes were left at anchor_time, and it has run at `rate` since
    // (re-anchored only when its rate changes, so a flow whose rate never changes drains at
    // exactly start + bytes / rate).
    double anchor_remaining = 0;
    Time anchor_time;
    double rate = 0;  // bytes per second since the last solve that covered it
    Bytes bytes;
    Time latency;
    Time started;  // when it started (completion_precision measures its run from here)
    sim::EventHandler* done = nullptr;
    uint64_t payload = 0;
    uint64_t transfer = 0;  // the transfer it carries (a share) of, in start order
    uint64_t order = 0;     // its start order among all flows: every tie is broken by it
    // Its weight in kWeightUnit units: 1 / its transfer's sub-flows, so that a transfer gets one
    // share in all.
    uint64_t units = flow::kUnitsPerWeight;
    uint32_t route = 0;     // its route's index in its transfer's transfer_paths
    uint32_t version = 0;   // bumped whenever its drain instant changes or it leaves
    uint32_t open = 0;      // its transfer's entry in open_transfers_
    // Its route's links, then its staged and cap links: crossings_[links_at, + link_count), in
    // room for link_room that the slot keeps for its next flow. Flows started in a row lie in a
    // row there, for the solve's reads; a fixed list inline (12, a 3-tier route with a cap) would
    // make every slot twice this size, most of it unused on a 2-tier fabric.
    uint32_t links_at = 0;
    uint16_t link_count = 0;
    uint16_t link_room = 0;
    bool live = false;
    bool fresh = true;      // started since the last solve: no rate yet
  };
  // A drain instant in the heap; stale once the flow's version has moved on.
  struct Drain {
    Time at;
    uint64_t order = 0;
    uint32_t slot = 0;
    uint32_t version = 0;
  };
  struct LaterDrain {
    bool operator()(const Drain& a, const Drain& b) const {
      return a.at != b.at ? a.at > b.at : a.order > b.order;
    }
  };
  // A drain in the relative window's heap (completion_precision p > 0), keyed by at + p x started
  // in picoseconds: a flow is due at `now` when at - now <= p (now - started), that is when its
  // key <= (1 + p) now, so the due flows are the heap's least whatever their drain instants.
  struct RelativeDrain {
    double key = 0;
    Drain drain;
  };
  struct LaterRelativeDrain {
    bool operator()(const RelativeDrain& a, const RelativeDrain& b) const {
      return a.key != b.key ? a.key > b.key : a.drain.order > b.drain.order;
    }
  };

  // One event at a time is live: the solve after a burst of starts, or the next completion.
  // Payloads carry a generation number; an event whose generation is stale is ignored.
  void on_event(sim::Engine& engine, uint64_t payload) override;
  void schedule(sim::Engine& engine, Time at);
  // The instant a flow drains at its rate; Time::max() when never.
  static Time drain_at(const ActiveFlow& f);
  // Retires every flow that drains by the end of the window; whether any did.
  bool complete_drained(sim::Engine& engine);
  // Sorts a batch of drains (of distinct flows) by start order.
  static void sort_by_order(std::span<Drain> due);
  // Solves the rates of the flows that need it (see FlowModelOptions::incremental); a flow whose
  // rate changes runs at the new one from `from` (now).
  void solve(Time from);
  // The flows the next solve covers, into component_: with incremental solves, those reachable
  // through tight links from the fresh flows and the tight links flows left; otherwise every
  // active flow.
  void collect_component();
  // Marks a link reached; crossing it (reaching all its flows) when it is tight or `cross`.
  void reach_link(uint32_t link, bool cross);
  void reach_flow(uint32_t slot);
  // Reaches everything behind the links waiting in link_stack_.
  void cross_pending();
  // Numbers the links component_ crosses (dense_links_) and its flows (slot_pos_), and states
  // what each link offers it: a link that also carries flows outside it offers the capacity they
  // leave.
  void number_component();
  // Copies the numbered component into problem_, for a solver that takes a FlowProblem.
  void build_problem();
  std::span<const uint32_t> path_of(uint32_t i) const {
    return {paths_.data() + path_offsets_[i], paths_.data() + path_offsets_[i + 1]};
  }
  // The numbered component as the CPU solver's View (progressive_filling.h): solved in place.
  class ComponentView;
  // After a solve: crosses every slack link the new rates fill (which binds the flows beyond it
  // too); whether any, so that the caller solves again. After the third solve of an event
  // (`attempt` 2), it crosses every link reached: the next solve covers whole components.
  bool cross_filled_links(int attempt);
  void schedule_next_completion(sim::Engine& engine);

  // The most a transfer on `path` moves: Transfer::max_rate, and a PCIe peer copy's share
  // (FlowModelOptions::pcie_peer_efficiency); 0: no limit.
  double capped_rate(const Transfer& t, std::span<const topology::LinkId> path) const;
  uint32_t add_virtual_link(double capacity, int64_t staged_pair);
  void attach(uint32_t slot, uint32_t link);
  // A flow's crossings (crossings_).
  std::span<Crossing> links_of(const ActiveFlow& f) {
    return {crossing_chunks_[f.links_at / kCrossingChunk] + f.links_at % kCrossingChunk, f.link_count};
  }
  std::span<const Crossing> links_of(const ActiveFlow& f) const {
    return {crossing_chunks_[f.links_at / kCrossingChunk] + f.links_at % kCrossingChunk, f.link_count};
  }
  // Room for `n` crossings in crossings_, within one chunk; returns where.
  uint32_t take_crossings(uint32_t n);
  // Counts, per link, the flows of `due` (a batch about to leave) on it, and marks the links all
  // of whose flows are among them (emptied_), so that remove_flow clears each such link once
  // instead of taking its flows off one by one.
  void mark_leaving(std::span<const Drain> due);
  // Takes a flow of the batch mark_leaving counted off its links.
  void remove_flow(uint32_t slot);
  // A link its last flow left: no load, and a virtual link back to the free list.
  void release_link(uint32_t link);
  // After a batch of flows left: the full links they left that bound a flow still on them go to
  // left_links_, for the next solve to start from; the others bound none.
  void settle_left_links();
  // A flow's rate per unit of its weight: flows a link binds run at its top level.
  static double level_of(const ActiveFlow& f) {
    return f.rate * static_cast<double>(flow::kUnitsPerWeight) / static_cast<double>(f.units);
  }
  void push_drain(uint32_t slot);
  bool stale(const Drain& d) const { return slots_[d.slot].version != d.version; }
  // The slot of active flow `i` in start order.
  uint32_t active_slot(size_t i) const;
  // Moves the flows due by the relative window (completion_precision) from relative_drains_ to
  // due_; those due by the absolute window (drain instant <= until) are there already.
  void take_relatively_due(Time now, Time until);

  const topology::Cluster& cluster_;
  FlowModelOptions options_;
  flow::CpuMaxMinSolver cpu_;
  uint64_t generation_ = 0;
  Time live_at_ = Time::max();  // when the one live event is due; Time::max() when none is
  Bytes delivered_;
  uint64_t next_transfer_ = 0;
  uint64_t next_order_ = 0;
  struct OpenTransfer {
    uint32_t open = 0;  // sub-flows not yet drained
    Time done_at;       // the latest drain instant plus path latency of those that have
    sim::EventHandler* drained = nullptr;  // Transfer::drained
    uint64_t drained_payload = 0;
  };
  // By ActiveFlow::open: a slot pool, freed when the transfer's last sub-flow drains.
  sim::BlockVector<OpenTransfer> open_transfers_;
  std::vector<uint32_t> free_open_transfers_;
  uint64_t solves_ = 0;
  uint64_t accelerated_solves_ = 0;
  uint64_t flows_solved_ = 0;  // flows over every solve
  double peak_utilization_ = 0;

  // The persistent problem. The slots' and the crossings' chunks come from arena_ (huge-page
  // blocks once a model is large, so that filling them faults a page per 2 MiB, not per 4 KiB).
  sim::BlockArena arena_;
  ChunkedSlots<ActiveFlow> slots_{arena_};
  // The links' flow lists' arrays: they grow a flow at a time, and from the heap each growth's copy
  // would fault fresh 4 KiB pages in.
  sim::SizeClassPool link_pool_{arena_};
  // Every flow's crossings, in chunks that never move, each written (and its pages touched) only
  // as far as flows have taken room; a slot's room is reused by its next flow when it fits. A
  // chunk is 128 KiB: a small model's first one and its first slot chunk fit in the arena's
  // ordinary-heap part, so that it takes no huge-page block.
  static constexpr uint32_t kCrossingChunk = uint32_t{1} << 14;
  std::vector<Crossing*> crossing_chunks_;
  uint32_t crossings_end_ = 0;
  std::vector<uint32_t> free_slots_;
  size_t live_ = 0;
  // (slot, order) of every flow in start order; entries of flows that left are skipped and
  // swept out once they outnumber the live ones.
  sim::BlockVector<std::pair<uint32_t, uint64_t>> by_order_;
  // A large cluster's links, faulted in by huge pages.
  sim::BlockVector<LinkState> links_;
  uint32_t cluster_links_ = 0;
  std::vector<uint32_t> free_links_;                    // freed virtual link ids
  std::unordered_map<int64_t, uint32_t> staged_links_;  // host-staged GPU pair -> its link
  sim::BlockVector<uint32_t> fresh_;  // slots started since the last solve
  std::vector<uint32_t> left_links_;   // tight links flows left since the last solve (still in use)
  // The lowest level among the flows that left since the last solve (HUGE_VAL: none left), and
  // the level under which this solve's search leaves a flow out (0: none; after drains alone,
  // just above the floor once past the links flows left).
  double left_floor_ = HUGE_VAL;
  double reach_floor_ = 0;
  // Full links flows left in this batch, and per link the highest level of the flows that left it
  // (-1: none), for settle_left_links.
  std::vector<uint32_t> left_candidates_;
  sim::BlockVector<double> left_level_;
  // Per link: the flows of the batch being retired still on it (zero between batches), and
  // whether all its flows are among them; the links counted, while counting.
  sim::BlockVector<uint32_t> leaving_;
  sim::BlockVector<uint8_t> emptied_;
  std::vector<uint32_t> leaving_links_;
  sim::BlockVector<Drain> drains_;  // a min-heap on (at, order), with stale entries
  // With completion_precision > 0: every entry of drains_ again, a min-heap on its relative key.
  sim::BlockVector<RelativeDrain> relative_drains_;
  // The solve epoch whose component search reached a slot, a link, last: apart from the slots
  // and links so that the search, which tests every flow of every link it reaches, stays in cache.
  sim::BlockVector<uint32_t> slot_reached_;
  // Per slot: its flow's level_of as of its last solve (0 before one), apart from the slots so
  // that the search's test of a flow below its floor reads no slot.
  sim::BlockVector<double> slot_level_;
  sim::BlockVector<uint32_t> link_reached_;
  uint32_t epoch_ = 0;      // component searches so far
  uint32_t numbering_ = 0;  // number_component calls so far
  // Per link: the number_component call that numbered it last, and its index there.
  sim::BlockVector<uint32_t> link_numbered_;
  sim::BlockVector<uint32_t> link_dense_;
  sim::BlockVector<uint32_t> slot_pos_;  // per slot: its index in component_ once numbered
  bool cross_all_ = false;  // this solve's search crosses slack links too

  // Scratch of each solve.
  sim::BlockVector<uint32_t> component_;  // slots
  std::vector<uint32_t> link_stack_;
  sim::BlockVector<Drain> due_;
  std::vector<RelativeDrain> not_due_;  // popped by the relative key's bound, not within their window
  flow::FlowProblem problem_;
  sim::BlockVector<double> rates_;
  std::vector<uint32_t> dense_links_;  // problem link -> link
  std::vector<double> inside_load_;    // per problem link: the old rates of the flows solved
  std::vector<uint32_t> inside_flows_;  // per problem link: how many of its flows are solved
  std::vector<uint64_t> inside_units_;  // per problem link: the weight of its flows solved
  std::vector<double> offered_;         // per problem link: the capacity the solve may give
  std::vector<double> link_load_;       // per problem link: the new rates of its flows solved
  // The component's flows, by their index in component_: the problem links each crosses
  // (path_of) and their weights in units; packed, so that the solve reads them in a row.
  sim::BlockVector<uint32_t> path_offsets_;
  sim::BlockVector<uint32_t> paths_;
  sim::BlockVector<uint64_t> units_;
  topology::RouteSet routes_;  // start()'s routes of a transfer, routed in place
};

}  // namespace dtsim::network
