// ScheduleExecutor: runs a Schedule on the engine through a NetworkModel. A transfer starts when
// every transfer it depends on has arrived (and been reduced, at `reduction_bandwidth`); the
// executor records when the last one lands. The same schedule runs unchanged on the analytical,
// flow and packet models, which is how the models are compared. A transfer is launched at its
// source GPU's site (NetworkModel::site_of_gpu): by the event that released it, which runs where
// the transfer it waited on arrived. On a partitioned engine (sim/partitioned_engine.h) every
// dependency must therefore end on the GPU the dependent transfer leaves from, or one in the same
// partition; the counts of what completed are atomic and the order of their updates is free.
//   ScheduleExecutor exec(schedule, network, {.reduction_bandwidth =
//   Bandwidth::gbytes_per_s(1500)}); exec.start(engine); engine.run(); Time t = exec.finish_time()
//   - start;
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "collectives/schedule.h"
#include "network/network_model.h"
#include "sim/engine.h"

namespace dtsim::collectives {

struct ExecutorOptions {
  Bandwidth reduction_bandwidth;  // rate a GPU adds arrived data into its buffer; zero: free
  Time launch_latency;            // before the first transfer starts (kernel launch)
  double channel_rate = 0;  // bytes/s one channel's transfer moves at most (Transfer::max_rate)
  // Added to every transfer's flow hash: schedules in flight together on one network (a
  // workload's collectives) take their own ECMP routes, not the same ones transfer by transfer.
  uint64_t flow_salt = 0;
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

  // Starts every transfer with no dependencies at engine.now() + launch_latency.
  void start(sim::Engine& engine);
  bool done() const {
    return completed_.load(std::memory_order_relaxed) == schedule_.transfers().size();
  }
  // Calls done.on_event(engine, payload) in an event at the moment the last transfer has landed
  // (after the launch latency, for a schedule of no transfers); the handler may then destroy this
  // executor. Set before start(); not on a partitioned engine, where which partition completes
  // last is a matter of the threads' timing.
  void notify(sim::EventHandler& done, uint64_t payload) {
    on_done_ = &done;
    done_payload_ = payload;
  }
  // Whether every dependency ends where its dependent starts, up to `partition_of_gpu`: each
  // transfer's destination GPU and the source GPUs of the transfers waiting on it lie in one
  // partition. A schedule where a sender waits on its own send landing on another node does not,
  // and cannot run on a partitioned engine cut there.
  bool hands_off_within(std::span<const uint32_t> partition_of_gpu) const;
  Time start_time() const { return start_; }
  Time finish_time() const { return Time::ps(finish_ps_.load(std::memory_order_relaxed)); }
  Bytes bytes_sent() const { return Bytes(sent_.load(std::memory_order_relaxed)); }

  void on_event(sim::Engine& engine, uint64_t payload) override;

 private:
  void launch(sim::Engine& engine, uint32_t transfer);
  void release(sim::Engine& engine, uint32_t transfer);

  const Schedule& schedule_;
  network::NetworkModel& network_;
  ExecutorOptions options_;
  std::vector<uint32_t> waiting_;  // unmet dependencies per transfer
  // Who waits on whom, as compressed rows: transfer i's dependents are
  // dependents_[dependents_begin_[i] .. dependents_begin_[i + 1]).
  std::vector<uint32_t> dependents_begin_;
  std::vector<uint32_t> dependents_;
  sim::EventHandler* on_done_ = nullptr;
  uint64_t done_payload_ = 0;
  std::atomic<size_t> completed_{0};
  Time start_;
  std::atomic<int64_t> finish_ps_{0};
  std::atomic<int64_t> sent_{0};
};

}  // namespace dtsim::collectives
