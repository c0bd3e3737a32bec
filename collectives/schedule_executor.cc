#include "collectives/schedule_executor.h"

#include <stdexcept>

namespace dtsim::collectives {
namespace {

// Payload layout: the transfer index, with the top bit set for "reduction finished" and the
// next one for "launch" (the delayed start of the roots).
constexpr uint64_t kReduced = uint64_t{1} << 63;
constexpr uint64_t kLaunch = uint64_t{1} << 62;
constexpr uint64_t kIndexMask = kLaunch - 1;

}  // namespace

ScheduleExecutor::ScheduleExecutor(const Schedule& schedule, network::NetworkModel& network,
                                   ExecutorOptions options)
    : schedule_(schedule), network_(network), options_(options) {
  const auto& ts = schedule_.transfers();
  waiting_.assign(ts.size(), 0);
  dependents_begin_.assign(ts.size() + 1, 0);
  for (uint32_t i = 0; i < ts.size(); ++i) {
    for (uint32_t d : schedule_.deps_of(ts[i])) ++dependents_begin_[d + 1];
    waiting_[i] = ts[i].deps_count;
  }
  for (size_t i = 0; i < ts.size(); ++i) dependents_begin_[i + 1] += dependents_begin_[i];
  dependents_.assign(dependents_begin_.back(), 0);
  std::vector<uint32_t> fill(dependents_begin_.begin(), dependents_begin_.end() - 1);
  for (uint32_t i = 0; i < ts.size(); ++i) {
    for (uint32_t d : schedule_.deps_of(ts[i])) dependents_[fill[d]++] = i;
  }
}

bool ScheduleExecutor::hands_off_within(std::span<const uint32_t> partition_of_gpu) const {
  const auto& ts = schedule_.transfers();
  for (uint32_t i = 0; i < ts.size(); ++i) {
    const uint32_t arrives_in = partition_of_gpu[static_cast<size_t>(ts[i].dst_gpu)];
    for (uint32_t k = dependents_begin_[i]; k < dependents_begin_[i + 1]; ++k) {
      if (partition_of_gpu[static_cast<size_t>(ts[dependents_[k]].src_gpu)] != arrives_in) return false;
    }
  }
  return true;
}

void ScheduleExecutor::start(sim::Engine& engine) {
  if (on_done_ != nullptr && engine.partitioned()) {
    throw std::logic_error("schedule executor: no end-of-schedule notice on a partitioned engine");
  }
  start_ = engine.now();
  finish_ps_.store(start_.ps(), std::memory_order_relaxed);
  const auto& ts = schedule_.transfers();
  for (uint32_t i = 0; i < ts.size(); ++i) {
    if (waiting_[i] == 0) {
      engine.schedule_at_site(engine.now() + options_.launch_latency,
                              network_.site_of_gpu(ts[i].src_gpu), *this, kLaunch | i);
    }
  }
  if (ts.empty() && on_done_ != nullptr) engine.schedule_in(options_.launch_latency, *on_done_, done_payload_);
}

void ScheduleExecutor::launch(sim::Engine& engine, uint32_t i) {
  const auto& t = schedule_.transfers()[i];
  sent_.fetch_add(t.bytes.count(), std::memory_order_relaxed);
  // Each transfer its own flow hash (transfer_hash); its NIC slot picks the NICs at both ends, as
  // NCCL pins a channel to a NIC.
  network_.start(engine, {t.src_gpu, t.dst_gpu, t.bytes, transfer_hash(i, options_.flow_salt), t.nic, options_.channel_rate},
                 *this, i);
}

void ScheduleExecutor::release(sim::Engine& engine, uint32_t i) {
  const size_t completed = completed_.fetch_add(1, std::memory_order_relaxed) + 1;
  int64_t finish = finish_ps_.load(std::memory_order_relaxed);
  while (engine.now().ps() > finish &&
         !finish_ps_.compare_exchange_weak(finish, engine.now().ps(), std::memory_order_relaxed)) {
  }
  for (uint32_t k = dependents_begin_[i]; k < dependents_begin_[i + 1]; ++k) {
    const uint32_t d = dependents_[k];
    if (--waiting_[d] == 0) launch(engine, d);
  }
  // As an event of its own, so that the handler runs with no executor code under it and may free it.
  if (on_done_ != nullptr && completed == schedule_.transfers().size()) {
    engine.schedule_in(Time::zero(), *on_done_, done_payload_);
  }
}

void ScheduleExecutor::on_event(sim::Engine& engine, uint64_t payload) {
  const auto i = static_cast<uint32_t>(payload & kIndexMask);
  if ((payload & kLaunch) != 0) {
    launch(engine, i);
    return;
  }
  if ((payload & kReduced) != 0) {
    release(engine, i);
    return;
  }
  const auto& t = schedule_.transfers()[i];
  if (t.reduce_bytes.count() > 0 && !options_.reduction_bandwidth.is_zero()) {
    engine.schedule_in(options_.reduction_bandwidth.transfer_time(t.reduce_bytes), *this,
                       kReduced | i);
    return;
  }
  release(engine, i);
}

}  // namespace dtsim::collectives
