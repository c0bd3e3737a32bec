// ScheduleExecutor: runs a Schedule on the engine through a NetworkModel. A transfer starts when
// every transfer it depends on has arrived (and been reduced, at `reduction_bandwidth`); the
// executor records when the last one lands. The same schedule runs unchanged on the analytical,
// flow and packet models, which is how the models are compared.
//   ScheduleExecutor exec(schedule, network, {.reduction_bandwidth =
//   Bandwidth::gbytes_per_s(1500)}); exec.start(engine); engine.run(); Time t = exec.finish_time()
//   - start;
#pragma once

#include <cstdint>
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

class ScheduleExecutor final : public sim::EventHandler {
 public:
  ScheduleExecutor(const Schedule& schedule, network::NetworkModel& network,
                   ExecutorOptions options = {});

  // Starts every transfer with no dependencies at engine.now() + launch_latency.
  void start(sim::Engine& engine);
  bool done() const { return completed_ == schedule_.transfers().size(); }
  // Calls done.on_event(engine, payload) in an event at the moment the last transfer has landed
  // (after the launch latency, for a schedule of no transfers); the handler may then destroy this
  // executor. Set before start().
  void notify(sim::EventHandler& done, uint64_t payload) {
    on_done_ = &done;
    done_payload_ = payload;
  }
  Time start_time() const { return start_; }
  Time finish_time() const { return finish_; }
  Bytes bytes_sent() const { return sent_; }

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
  size_t completed_ = 0;
  Time start_;
  Time finish_;
  Bytes sent_;
};

}  // namespace dtsim::collectives
