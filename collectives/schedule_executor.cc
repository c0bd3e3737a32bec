#include "collectives/schedule_executor.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace dtsim::collectives {
namespace {

// Payload layout: an index, with the top bit set for "reduction finished" and the next one for
// "launch" (the delayed start of the roots); rank by rank, "arrived" (a member, after its launch
// latency), "clear to send" (a pair) and "acknowledged" (a transfer).
constexpr uint64_t kReduced = uint64_t{1} << 63;
constexpr uint64_t kLaunch = uint64_t{1} << 62;
constexpr uint64_t kArrived = uint64_t{1} << 61;
constexpr uint64_t kClear = uint64_t{1} << 60;
constexpr uint64_t kAcked = uint64_t{1} << 59;
constexpr uint64_t kDrained = uint64_t{1} << 58;  // a transfer's bytes have left its sender
constexpr uint64_t kIndexMask = kDrained - 1;
constexpr uint32_t kNoNext = UINT32_MAX;

// Compressed rows of `rows` rows from (row, value) entries, in the entries' order.
void compress(size_t rows, const std::vector<std::pair<uint32_t, uint32_t>>& entries, std::vector<uint32_t>& begin,
              std::vector<uint32_t>& values) {
  begin.assign(rows + 1, 0);
  for (const auto& [row, value] : entries) ++begin[row + 1];
  for (size_t r = 0; r < rows; ++r) begin[r + 1] += begin[r];
  values.assign(entries.size(), 0);
  std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
  for (const auto& [row, value] : entries) values[fill[row]++] = value;
}

}  // namespace

uint32_t RankPlan::member_of(int gpu) const {
  const auto it = std::lower_bound(gpus.begin(), gpus.end(), gpu);
  if (it == gpus.end() || *it != gpu) throw std::invalid_argument("rank plan: GPU " + std::to_string(gpu) + " is no member");
  return static_cast<uint32_t>(it - gpus.begin());
}

RankPlan rank_plan(const Schedule& schedule, std::vector<int> gpus,
                   const std::function<Time(int src_gpu, int dst_gpu, uint32_t transfer)>& back) {
  RankPlan p;
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  p.gpus = std::move(gpus);
  const auto& ts = schedule.transfers();
  const size_t n = p.gpus.size();
  p.parts.assign(n, 0);
  p.pair_of.resize(ts.size());
  std::vector<uint32_t> pair_index(n * n, UINT32_MAX);
  std::vector<std::pair<uint32_t, uint32_t>> by_pair, by_sender, by_receiver;
  for (uint32_t i = 0; i < ts.size(); ++i) {
    const uint32_t s = p.member_of(ts[i].src_gpu), d = p.member_of(ts[i].dst_gpu);
    uint32_t& k = pair_index[s * n + d];
    if (k == UINT32_MAX) {
      k = static_cast<uint32_t>(p.pairs.size());
      p.pairs.push_back({s, d, back(ts[i].src_gpu, ts[i].dst_gpu, i)});
      by_receiver.emplace_back(d, k);
    }
    p.pair_of[i] = k;
    by_pair.emplace_back(k, i);
    by_sender.emplace_back(s, i);
    ++p.parts[s];
    ++p.parts[d];
  }
  compress(p.pairs.size(), by_pair, p.pair_begin, p.pair_transfers);
  compress(n, by_sender, p.out_begin, p.out_transfers);
  compress(n, by_receiver, p.in_begin, p.in_pairs);
  return p;
}

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
  follow_connections();
  if (options_.ranks != nullptr) {
    // Rank by rank a transfer also waits for its sender to arrive and its pair's clear-to-send.
    for (uint32_t& w : waiting_) w += 2;
    parts_left_ = options_.ranks->parts;
    member_done_.assign(parts_left_.size(), nullptr);
    member_payload_.assign(parts_left_.size(), 0);
  }
  dependents_.assign(dependents_begin_.back(), 0);
  std::vector<uint32_t> fill(dependents_begin_.begin(), dependents_begin_.end() - 1);
  for (uint32_t i = 0; i < ts.size(); ++i) {
    for (uint32_t d : schedule_.deps_of(ts[i])) dependents_[fill[d]++] = i;
  }
}

void ScheduleExecutor::follow_connections() {
  const auto& ts = schedule_.transfers();
  next_on_connection_.assign(ts.size(), kNoNext);
  // The transfers in (sender, receiver, channel, index) order: each connection's run in the order
  // the schedule gives them.
  std::vector<uint32_t> order(ts.size());
  for (uint32_t i = 0; i < ts.size(); ++i) order[i] = i;
  const auto connection = [&](uint32_t i) { return std::tuple(ts[i].src_gpu, ts[i].dst_gpu, ts[i].channel); };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::pair(connection(a), a) < std::pair(connection(b), b);
  });
  for (size_t k = 1; k < order.size(); ++k) {
    const uint32_t before = order[k - 1], after = order[k];
    if (connection(before) != connection(after)) continue;
    const auto deps = schedule_.deps_of(ts[after]);
    if (std::find(deps.begin(), deps.end(), before) != deps.end()) continue;  // it waits for more already
    next_on_connection_[before] = after;
    ++waiting_[after];
  }
}

bool ScheduleExecutor::waits_for_ack(uint32_t i, uint32_t dependent) const {
  const auto& ts = schedule_.transfers();
  return options_.ranks != nullptr && ts[dependent].src_gpu == ts[i].src_gpu && ts[i].src_gpu != ts[i].dst_gpu;
}

bool ScheduleExecutor::hands_off_within(std::span<const uint32_t> partition_of_gpu) const {
  const auto& ts = schedule_.transfers();
  for (uint32_t i = 0; i < ts.size(); ++i) {
    const uint32_t arrives_in = partition_of_gpu[static_cast<size_t>(ts[i].dst_gpu)];
    for (uint32_t k = dependents_begin_[i]; k < dependents_begin_[i + 1]; ++k) {
      if (waits_for_ack(i, dependents_[k])) continue;  // handed back by the acknowledgement
      if (partition_of_gpu[static_cast<size_t>(ts[dependents_[k]].src_gpu)] != arrives_in) return false;
    }
  }
  return true;
}

void ScheduleExecutor::start(sim::Engine& engine) {
  start_ = engine.now();
  finish_ps_.store(start_.ps(), std::memory_order_relaxed);
  const auto& ts = schedule_.transfers();
  for (uint32_t i = 0; i < ts.size(); ++i) {
    if (waiting_[i] == 0) {
      engine.schedule_at_site(engine.now() + options_.launch_latency,
                              network_.site_of_gpu(ts[i].src_gpu), *this, kLaunch | i);
    }
  }
}

void ScheduleExecutor::arrive(sim::Engine& engine, uint32_t member, sim::EventHandler& done, uint64_t payload) {
  if (options_.ranks == nullptr) throw std::logic_error("schedule executor: arrive() runs a schedule rank by rank");
  member_done_.at(member) = &done;
  member_payload_[member] = payload;
  engine.schedule_at_site(engine.now() + options_.launch_latency,
                          network_.site_of_gpu(options_.ranks->gpus[member]), *this, kArrived | member);
}

void ScheduleExecutor::posted(uint32_t member, sim::EventHandler& done, uint64_t payload) {
  if (options_.ranks == nullptr) throw std::logic_error("schedule executor: posted() runs a schedule rank by rank");
  const RankPlan& p = *options_.ranks;
  member_done_.at(member) = &done;
  member_payload_[member] = payload;
  // Arrived, and every clear-to-send it gives delivered: nothing of it can start yet, as no
  // member has arrived, so the counts fall without launching.
  for (uint32_t k = p.out_begin[member]; k < p.out_begin[member + 1]; ++k) --waiting_[p.out_transfers[k]];
  for (uint32_t k = p.in_begin[member]; k < p.in_begin[member + 1]; ++k) {
    const uint32_t pair = p.in_pairs[k];
    for (uint32_t j = p.pair_begin[pair]; j < p.pair_begin[pair + 1]; ++j) --waiting_[p.pair_transfers[j]];
  }
}

void ScheduleExecutor::unblock(sim::Engine& engine, uint32_t i) {
  if (--waiting_[i] == 0) launch(engine, i);
}

void ScheduleExecutor::part_done(sim::Engine& engine, uint32_t member) {
  if (--parts_left_[member] != 0) return;
  // As an event of its own at the member's site, so that the handler runs with no executor code
  // under it.
  engine.schedule_at_site(engine.now(), network_.site_of_gpu(options_.ranks->gpus[member]), *member_done_[member],
                          member_payload_[member]);
}

void ScheduleExecutor::launch(sim::Engine& engine, uint32_t i) {
  const auto& t = schedule_.transfers()[i];
  sent_.fetch_add(t.bytes.count(), std::memory_order_relaxed);
  // Each transfer its own flow hash (transfer_hash); its NIC slot picks the NICs at both ends, as
  // NCCL pins a channel to a NIC.
  const bool followed = next_on_connection_[i] != kNoNext;
  network_.start(engine,
                 {.src_gpu = t.src_gpu,
                  .dst_gpu = t.dst_gpu,
                  .bytes = t.bytes,
                  .flow_hash = transfer_hash(i, options_.flow_salt),
                  .nic = t.nic,
                  .max_rate = options_.channel_rate,
                  .drained = followed ? this : nullptr,
                  .drained_payload = followed ? kDrained | i : 0},
                 *this, i);
}

void ScheduleExecutor::release(sim::Engine& engine, uint32_t i) {
  completed_.fetch_add(1, std::memory_order_relaxed);
  int64_t finish = finish_ps_.load(std::memory_order_relaxed);
  while (engine.now().ps() > finish &&
         !finish_ps_.compare_exchange_weak(finish, engine.now().ps(), std::memory_order_relaxed)) {
  }
  for (uint32_t k = dependents_begin_[i]; k < dependents_begin_[i + 1]; ++k) {
    if (!waits_for_ack(i, dependents_[k])) unblock(engine, dependents_[k]);
  }
  if (options_.ranks != nullptr) {
    // Landed at its receiver: one of the receiver's parts, and the acknowledgement on its way back.
    const RankPlan& p = *options_.ranks;
    const RankPlan::Pair& pair = p.pairs[p.pair_of[i]];
    part_done(engine, pair.dst);
    engine.schedule_at_site(engine.now() + pair.back, network_.site_of_gpu(p.gpus[pair.src]), *this, kAcked | i);
  }
}

void ScheduleExecutor::on_event(sim::Engine& engine, uint64_t payload) {
  const auto i = static_cast<uint32_t>(payload & kIndexMask);
  if ((payload & kDrained) != 0) {
    unblock(engine, next_on_connection_[i]);
    return;
  }
  if ((payload & (kArrived | kClear | kAcked)) != 0) {
    const RankPlan& p = *options_.ranks;
    if ((payload & kAcked) != 0) {
      for (uint32_t k = dependents_begin_[i]; k < dependents_begin_[i + 1]; ++k) {
        if (waits_for_ack(i, dependents_[k])) unblock(engine, dependents_[k]);
      }
      part_done(engine, p.pairs[p.pair_of[i]].src);
    } else if ((payload & kClear) != 0) {
      for (uint32_t k = p.pair_begin[i]; k < p.pair_begin[i + 1]; ++k) unblock(engine, p.pair_transfers[k]);
    } else {
      // Member i arrived (after its launch latency): its clear-to-sends leave, and its
      // transfers may start.
      for (uint32_t k = p.in_begin[i]; k < p.in_begin[i + 1]; ++k) {
        const uint32_t pair = p.in_pairs[k];
        engine.schedule_at_site(engine.now() + p.pairs[pair].back, network_.site_of_gpu(p.gpus[p.pairs[pair].src]),
                                *this, kClear | pair);
      }
      for (uint32_t k = p.out_begin[i]; k < p.out_begin[i + 1]; ++k) unblock(engine, p.out_transfers[k]);
      if (p.parts[i] == 0) {
        ++parts_left_[i];  // none: its part ends on arrival
        part_done(engine, i);
      }
    }
    return;
  }
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
