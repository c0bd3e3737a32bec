#include "collectives/schedule.h"

#include <algorithm>
#include <string>

#include "collectives/lowerings.h"
#include "sim/error.h"

namespace dtsim::collectives {

namespace {
// The transfers a schedule built on this thread may hold (ScheduleBudget); no limit by default.
thread_local uint64_t transfer_budget = UINT64_MAX;
// The deadline a schedule built on this thread stops at (ScheduleBudget); none by default.
thread_local sim::WallDeadline* planning_deadline = nullptr;
// Transfers between two reads of the clock against planning_deadline.
constexpr size_t kTransfersPerClockRead = size_t{1} << 16;
}  // namespace

ScheduleTooLarge::ScheduleTooLarge(uint64_t limit)
    : std::runtime_error("schedule larger than its budget of " + std::to_string(limit) + " transfers"),
      limit_(limit) {}

ScheduleStopped::ScheduleStopped() : std::runtime_error("schedule planning stopped at its deadline") {}

ScheduleBudget::ScheduleBudget(uint64_t max_transfers, sim::WallDeadline* deadline)
    : outer_(transfer_budget), outer_deadline_(planning_deadline) {
  transfer_budget = max_transfers;
  if (deadline != nullptr) planning_deadline = deadline;
}

ScheduleBudget::~ScheduleBudget() {
  transfer_budget = outer_;
  planning_deadline = outer_deadline_;
}

uint32_t Schedule::add(int src, int dst, Bytes bytes, std::span<const uint32_t> deps, Bytes reduce,
                       int step, int channel, int nic) {
  if (transfers_.size() >= transfer_budget) throw ScheduleTooLarge(transfer_budget);
  if (transfers_.size() % kTransfersPerClockRead == kTransfersPerClockRead - 1 && planning_deadline != nullptr &&
      planning_deadline->passed(sim::WallClock::now())) {
    throw ScheduleStopped();
  }
  ScheduledTransfer t;
  t.src_gpu = src;
  t.dst_gpu = dst;
  t.bytes = bytes;
  t.reduce_bytes = reduce;
  t.step = step;
  t.channel = channel;
  t.nic = nic;
  t.deps_begin = static_cast<uint32_t>(deps_.size());
  t.deps_count = static_cast<uint32_t>(deps.size());
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  transfers_.push_back(t);
  channels_ = std::max(channels_, channel + 1);
  return static_cast<uint32_t>(transfers_.size() - 1);
}

void Schedule::append(const Schedule& other, int channel_offset) {
  const auto offset = static_cast<uint32_t>(transfers_.size());
  std::vector<uint32_t> deps;
  for (const ScheduledTransfer& t : other.transfers()) {
    deps.clear();
    for (uint32_t d : other.deps_of(t)) deps.push_back(d + offset);
    add(t.src_gpu, t.dst_gpu, t.bytes, deps, t.reduce_bytes, t.step, channel_offset + t.channel,
        t.nic);
  }
}

uint64_t max_concurrent_transfers(const Schedule& s) {
  const auto& ts = s.transfers();
  std::vector<bool> chain_end(ts.size(), false);
  uint64_t chains = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto deps = s.deps_of(ts[i]);
    const auto open = std::find_if(deps.begin(), deps.end(), [&](uint32_t d) { return chain_end[d]; });
    if (open == deps.end()) {
      ++chains;
    } else {
      chain_end[*open] = false;
    }
    chain_end[i] = true;
  }
  return chains;
}

Bytes Schedule::total_bytes() const {
  Bytes b(0);
  for (const auto& t : transfers_) b += t.bytes;
  return b;
}

std::vector<int> replica_shifts(int job_gpus, int gpus_per_node, int gpu_count) {
  std::vector<int> shifts;
  if (job_gpus <= 0 || gpus_per_node <= 0) return shifts;
  const int stride = (job_gpus + gpus_per_node - 1) / gpus_per_node * gpus_per_node;
  for (int shift = stride; shift + job_gpus <= gpu_count; shift += stride) shifts.push_back(shift);
  return shifts;
}

Schedule shifted(const Schedule& s, int gpus) {
  Schedule out;
  for (const ScheduledTransfer& t : s.transfers()) {
    out.add(t.src_gpu + gpus, t.dst_gpu + gpus, t.bytes, s.deps_of(t), t.reduce_bytes, t.step, t.channel, t.nic);
  }
  return out;
}

Schedule build_schedule(Algorithm algo, CollectiveKind kind, Bytes bytes, const Communicator& comm,
                        int channels, int ranks_per_node, int nics_per_gpu) {
  if (channels < 1) throw InputError({}, "collectives.channels", "expected at least 1 channel");
  auto refuse = [&] {
    return InputError({}, "collectives.algorithm",
                      std::string(name(algo)) + " has no transfer-level schedule for " +
                          std::string(name(kind)) +
                          "; the analytical model prices it in closed form");
  };
  switch (algo) {
    case Algorithm::ring:
      if (point_to_point(kind)) throw refuse();
      return ring_schedule(kind, bytes, comm, channels, ranks_per_node, nics_per_gpu);
    case Algorithm::tree:
      if (kind != CollectiveKind::all_reduce) throw refuse();
      return tree_schedule(bytes, comm, channels, ranks_per_node, nics_per_gpu);
    case Algorithm::halving_doubling:
      if (kind != CollectiveKind::all_reduce) throw refuse();
      return halving_doubling_schedule(bytes, comm, channels);
    case Algorithm::nvls_tree:
      if (kind != CollectiveKind::all_reduce) throw refuse();
      return nvls_tree_network_schedule(bytes, comm, channels, ranks_per_node, nics_per_gpu);
    case Algorithm::pairwise:
      if (kind != CollectiveKind::all_to_all) throw refuse();
      return all_to_all_schedule(bytes, comm, channels);
    case Algorithm::p2p:
      if (kind == CollectiveKind::gather || kind == CollectiveKind::scatter)
        return gather_scatter_schedule(kind, bytes, comm, channels, ranks_per_node);
      if (kind == CollectiveKind::hypercube) return hypercube_schedule(bytes, comm, channels);
      if (kind != CollectiveKind::send_recv) throw refuse();
      return send_recv_schedule(bytes, comm, channels);
    default:
      throw refuse();
  }
}

}  // namespace dtsim::collectives
