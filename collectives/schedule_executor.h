// ScheduleExecutor: runs a Schedule on the engine through a NetworkModel. A transfer starts when
// every transfer it depends on has arrived (and been reduced, at `reduction_bandwidth`) and the
// one before it on its connection (its channel's sends to the same GPU) has drained from the
// sender; the executor records when the last one lands. The same schedule runs unchanged on the
// analytical, flow and packet models, which is how the models are compared. A transfer is
// launched at its source GPU's site (NetworkModel::site_of_gpu): by the event that released it,
// which runs where the transfer it waited on arrived (or, for the connection's order, at its own
// sender). On a partitioned engine (sim/partitioned_engine.h) every dependency must therefore end
// on the GPU the dependent transfer leaves from, or one in the same partition (rank by rank, a
// sender's own earlier send is handed back by its acknowledgement); the counts of what completed
// are atomic and the order of their updates is free.
//
// Rank by rank (online execution of a workload, workloads/online_network.h), each member GPU
// reaches the schedule at its own time and ends its own part (arrive): no event of one member
// starts another's transfers at the same instant, and no notice waits for the whole schedule.
//   ScheduleExecutor exec(schedule, network, {.reduction_bandwidth =
//   Bandwidth::gbytes_per_s(1500)}); exec.start(engine); engine.run(); Time t = exec.finish_time()
//   - start;
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "collectives/schedule.h"
#include "network/network_model.h"
#include "sim/engine.h"

namespace dtsim::collectives {

// What running a schedule rank by rank needs (ScheduleExecutor::arrive), worked out once per
// schedule: its members (the communicator's GPUs), each transfer's ends among them, and each
// (sender, receiver) pair with the one-way latency from the receiver back to the sender, which
// the clear-to-send and the acknowledgement take.
struct RankPlan {
  std::vector<int> gpus;  // the members, ascending
  struct Pair {
    uint32_t src = 0, dst = 0;  // members
    Time back;                  // latency from dst to src
  };
  std::vector<Pair> pairs;
  std::vector<uint32_t> pair_of;  // per transfer
  // Compressed rows: each pair's transfers, each member's outgoing transfers, and the pairs into
  // each member (whose senders its clear-to-send goes to).
  std::vector<uint32_t> pair_begin, pair_transfers;
  std::vector<uint32_t> out_begin, out_transfers;
  std::vector<uint32_t> in_begin, in_pairs;
  std::vector<uint32_t> parts;  // per member: transfers into it plus transfers out of it

  // The member of `gpu`; throws std::invalid_argument for a GPU that is not one.
  uint32_t member_of(int gpu) const;
  // The bytes its vectors take on the heap.
  size_t heap_bytes() const {
    const auto words = [](const std::vector<uint32_t>& v) { return v.capacity() * sizeof(uint32_t); };
    return gpus.capacity() * sizeof(int) + pairs.capacity() * sizeof(Pair) + words(pair_of) + words(pair_begin) +
           words(pair_transfers) + words(out_begin) + words(out_transfers) + words(in_begin) + words(in_pairs) +
           words(parts);
  }
};

// `back(src_gpu, dst_gpu, transfer)`: the latency from dst to src for transfer `transfer`'s pair
// (the first transfer of each pair is asked). Every GPU of the schedule must be one of `gpus`.
RankPlan rank_plan(const Schedule& schedule, std::vector<int> gpus,
                   const std::function<Time(int src_gpu, int dst_gpu, uint32_t transfer)>& back);

struct ExecutorOptions {
  Bandwidth reduction_bandwidth;  // rate a GPU adds arrived data into its buffer; zero: free
  Time launch_latency;            // before the first transfer starts (kernel launch)
  double channel_rate = 0;  // bytes/s one channel's transfer moves at most (Transfer::max_rate)
  // Added to every transfer's flow hash: schedules in flight together on one network (a
  // workload's collectives) take their own ECMP routes, not the same ones transfer by transfer.
  uint64_t flow_salt = 0;
  // Set: the schedule runs rank by rank (arrive, posted) on this plan of it, which must outlive
  // the executor; start() is then not used.
  const RankPlan* ranks = nullptr;
};

// The ECMP flow hash the executor gives transfer `index` of its schedule: its own, so that ECMP
// spreads concurrent transfers in the fabric, plus the executor's `salt` (ExecutorOptions).
inline uint64_t transfer_hash(uint32_t index, uint64_t salt = 0) {
  return uint64_t{index} * 0x9e3779b97f4a7c15ULL + salt;
}

class ScheduleExecutor final : public sim::EventHandler {
 public:
  ScheduleExecutor(const Schedule& schedule, network::NetworkModel& network,
                   ExecutorOptions options = {});
  // The most heap an executor of `schedule` started whole holds: its counts of unmet
  // dependencies, who waits on whom, who follows whom on a connection, and while it is built, a
  // cursor or an order entry per transfer.
  static size_t heap_bytes(const Schedule& schedule) {
    return sizeof(uint32_t) * (4 * schedule.transfers().size() + 1 + schedule.dependency_count());
  }

  // Starts every transfer with no dependencies at engine.now() + launch_latency.
  void start(sim::Engine& engine);
  bool done() const {
    return completed_.load(std::memory_order_relaxed) == schedule_.transfers().size();
  }
  // Rank by rank (ExecutorOptions::ranks): member `member` reaches the schedule at engine.now(),
  // at its GPU's site. After the launch latency (its kernel's launch) it posts its receive
  // buffers: each member that sends to it hears so (the clear-to-send) the pair's `back` latency
  // later, as NCCL's receiver posts a buffer and its sender sees the credit. A transfer starts
  // once its sender has arrived, its pair's clear-to-send has come and its dependencies have
  // landed. The member's part ends, and done.on_event(engine, payload) runs in an event at its
  // site, once every transfer into it has landed and every transfer out of it has landed and been
  // acknowledged (the pair's `back` latency after landing, as a sender learns its bytes are in).
  // Each member arrives once.
  void arrive(sim::Engine& engine, uint32_t member, sim::EventHandler& done, uint64_t payload);
  // Member `member` as arrived before the schedule starts, its clear-to-sends already delivered
  // (a receive posted beforehand: a send's receiver); its part ends as arrive's does. Called
  // before any member arrives, from where the first arrives.
  void posted(uint32_t member, sim::EventHandler& done, uint64_t payload);

  // Whether every dependency ends where its dependent starts, up to `partition_of_gpu`: each
  // transfer's destination GPU and the source GPUs of the transfers waiting on it lie in one
  // partition. Started whole (start()), a schedule where a sender waits on its own send landing
  // on another node does not, and cannot run on a partitioned engine cut there; rank by rank
  // such a sender waits for the send's acknowledgement, which comes back to it.
  bool hands_off_within(std::span<const uint32_t> partition_of_gpu) const;
  Time start_time() const { return start_; }
  Time finish_time() const { return Time::ps(finish_ps_.load(std::memory_order_relaxed)); }
  Bytes bytes_sent() const { return Bytes(sent_.load(std::memory_order_relaxed)); }

  void on_event(sim::Engine& engine, uint64_t payload) override;

 private:
  void launch(sim::Engine& engine, uint32_t transfer);
  void release(sim::Engine& engine, uint32_t transfer);
  void unblock(sim::Engine& engine, uint32_t transfer);  // one condition of its start met
  // Links each transfer to the next on its connection (next_on_connection_), which waits for it
  // to drain.
  void follow_connections();
  // Rank by rank, a transfer that waits on its own sender's earlier send `i` to another GPU is
  // released when i's acknowledgement reaches that sender, not when i lands: the sender learns
  // of the landing only then (NCCL: the receiver's flag back to it).
  bool waits_for_ack(uint32_t i, uint32_t dependent) const;
  void part_done(sim::Engine& engine, uint32_t member);  // one of the member's parts ended

  const Schedule& schedule_;
  network::NetworkModel& network_;
  ExecutorOptions options_;
  std::vector<uint32_t> waiting_;  // unmet dependencies per transfer
  // Who waits on whom, as compressed rows: transfer i's dependents are
  // dependents_[dependents_begin_[i] .. dependents_begin_[i + 1]).
  std::vector<uint32_t> dependents_begin_;
  std::vector<uint32_t> dependents_;
  // A connection is a channel's sends from one GPU to another: NCCL keeps their order and sends
  // them back to back. Each transfer's successor on its connection, in schedule order (UINT32_MAX:
  // none), starts no sooner than this one's bytes have drained from the sender
  // (network::Transfer::drained), besides its dependencies; one that depends on it already waits
  // for its landing instead.
  std::vector<uint32_t> next_on_connection_;
  std::atomic<size_t> completed_{0};
  Time start_;
  std::atomic<int64_t> finish_ps_{0};
  std::atomic<int64_t> sent_{0};
  // Rank by rank: per member, its parts (RankPlan::parts) not yet ended and whom to tell.
  std::vector<uint32_t> parts_left_;
  std::vector<sim::EventHandler*> member_done_;
  std::vector<uint64_t> member_payload_;
};

}  // namespace dtsim::collectives
