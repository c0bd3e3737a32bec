#include "network/flow/flow_model.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <span>
#include <stdexcept>
#include <utility>

#include "network/flow/progressive_filling.h"
#include "network/free_list.h"

namespace dtsim::network {

namespace {
// A link is tight when its flows fill it to within this fraction: wide against the rounding of a
// full link's load (the solver's tie tolerance and the running sums of rates are far finer), so a
// link that binds a flow is never taken for slack; a slack link taken for tight costs only a
// larger solve.
constexpr double kTightSlack = 1e-6;

bool filled(double load, double capacity) { return load >= capacity * (1 - kTightSlack); }

// Levels (rate per unit of weight) within this fraction of each other are taken as equal when
// asking whether a flow that left a link ran at its top level: far wider than the solver's tie
// tolerance, so a flow the link bound is never missed; one taken for bound costs only a solve.
constexpr double kLevelTieSlack = 1e-9;

// The time to drain `bytes` at `rate`, rounded up to the next picosecond with the same slack as
// Bandwidth::transfer_time, so a lone flow lands on exactly the analytical model's time.
// Time::max() when the flow would never finish (zero rate) or not within Time's range.
Time drain_time(double bytes, double rate) {
  if (bytes <= 0) return Time::zero();
  if (!(rate > 0)) return Time::max();
  const double ps = std::ceil(bytes / rate * 1e12 - 1e-6);
  if (!(ps < 9e18)) return Time::max();
  return Time::ps(static_cast<int64_t>(std::max(ps, 0.0)));
}

// Makes room for `n` elements in `v` at once, at least doubling what it has (so that reserving
// a little more on every call, as small solves do, stays amortized O(1) per element).
template <typename T, typename Allocator>
void make_room(std::vector<T, Allocator>& v, size_t n) {
  if (n > v.capacity()) v.reserve(std::max(n, 2 * v.capacity()));
}

// Sweeps a heap's stale entries (`is_stale`) out once it holds more than twice the live flows,
// and heaps the rest again under `later`.
template <typename Heap, typename Later, typename IsStale>
void sweep_stale(Heap& heap, size_t live, Later later, IsStale is_stale) {
  if (heap.size() <= 2 * live + 64) return;
  std::erase_if(heap, is_stale);
  std::make_heap(heap.begin(), heap.end(), later);
}

}  // namespace

FlowNetworkModel::FlowNetworkModel(const topology::Cluster& cluster, FlowModelOptions options)
    : cluster_(cluster), options_(std::move(options)) {
  const std::span<const topology::Link> links = cluster.links();
  cluster_links_ = static_cast<uint32_t>(links.size());
  links_.resize(links.size());
  left_level_.assign(links.size(), -1);
  for (size_t l = 0; l < links.size(); ++l) {
    links_[l].capacity = links[l].bandwidth.bytes_per_s() * options_.link_efficiency.of(links[l].kind);
  }
}

uint32_t FlowNetworkModel::add_virtual_link(double capacity, int64_t staged_pair) {
  const uint32_t id = take_free(links_, free_links_);
  if (left_level_.size() < links_.size()) left_level_.resize(links_.size(), -1);
  LinkState& l = links_[id];
  l.capacity = capacity;
  l.staged_pair = staged_pair;
  return id;
}

uint32_t FlowNetworkModel::take_crossings(uint32_t n) {
  if (crossings_end_ % kCrossingChunk + n > kCrossingChunk) {
    crossings_end_ += kCrossingChunk - crossings_end_ % kCrossingChunk;  // the rest of this chunk stays unused
  }
  if (crossings_end_ / kCrossingChunk >= crossing_chunks_.size()) {
    crossing_chunks_.push_back(static_cast<Crossing*>(arena_.take(sizeof(Crossing) * kCrossingChunk)));
  }
  const uint32_t at = crossings_end_;
  crossings_end_ += n;
  return at;
}

void FlowNetworkModel::attach(uint32_t slot, uint32_t link) {
  sim::PoolList<uint32_t>& on = links_[link].flows;
  ActiveFlow& f = slots_[slot];
  links_of(f).data()[f.link_count++] = {link, static_cast<uint32_t>(on.size())};
  on.push_back(slot, link_pool_);
}

double FlowNetworkModel::capped_rate(const Transfer& t, std::span<const topology::LinkId> path) const {
  // Between nodes the route crosses the network: a NIC's DMA, not a peer copy.
  if (options_.pcie_peer_efficiency <= 0 || cluster_.node_of(t.src_gpu) != cluster_.node_of(t.dst_gpu)) {
    return t.max_rate;
  }
  double pcie = 0;
  for (topology::LinkId l : path) {
    const topology::Link& link = cluster_.link(l);
    if (link.kind == topology::LinkKind::network) return t.max_rate;
    if (link.kind == topology::LinkKind::pcie) {
      const double rate = link.bandwidth.bytes_per_s() * options_.pcie_peer_efficiency;
      pcie = pcie > 0 ? std::min(pcie, rate) : rate;
    }
  }
  if (pcie <= 0) return t.max_rate;
  return t.max_rate > 0 ? std::min(t.max_rate, pcie) : pcie;
}

void FlowNetworkModel::reserve(size_t transfers) {
  make_room(open_transfers_, open_transfers_.size() + transfers);
  make_room(by_order_, by_order_.size() + transfers);
  make_room(fresh_, fresh_.size() + transfers);
  make_room(free_open_transfers_, open_transfers_.size() + transfers);
  make_room(free_slots_, slots_.size() + transfers);
}

void FlowNetworkModel::start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done,
                             uint64_t payload) {
  // Its routes (transfer_paths), into routes_, kept from start to start: no allocation once it
  // has grown.
  route_transfer(cluster_, t, routes_);
  const size_t path_count = routes_.size();
  const auto path = [&](size_t i) { return routes_[i]; };
  if (path_count == 0) {  // to itself, or no bytes: only the route's latency (empty_message_latency)
    delivered_ += t.bytes;
    if (t.drained != nullptr) engine.schedule_in(Time::zero(), *t.drained, t.drained_payload);
    engine.schedule_in(empty_message_latency(cluster_, t), done, payload);
    return;
  }
  const uint64_t transfer = next_transfer_++;
  const uint32_t open = take_free(open_transfers_, free_open_transfers_);
  open_transfers_[open] = {.open = static_cast<uint32_t>(path_count),
                           .done_at = Time::zero(),
                           .drained = t.drained,
                           .drained_payload = t.drained_payload};
  const bool staged =
      options_.host_staged_rate > 0 && cluster_.node_of(t.src_gpu) == cluster_.node_of(t.dst_gpu);
  const int64_t staged_pair = staged ? int64_t{t.src_gpu} * cluster_.gpu_count() + t.dst_gpu : -1;
  const uint32_t no_link = UINT32_MAX;
  uint32_t cap_link = no_link;
  const double max_rate = capped_rate(t, path(0));
  for (size_t i = 0; i < path_count; ++i) {
    const uint32_t slot = take_free(slots_, free_slots_);
    ActiveFlow& f = slots_[slot];
    const size_t crossings = path(i).size() + (staged ? 1 : 0) + (max_rate > 0 ? 1 : 0);
    if (crossings > kCrossingChunk) throw std::length_error("FlowNetworkModel: a route of more than 16384 links");
    if (crossings > f.link_room) {  // else the room of the slot's last flow is reused
      f.links_at = take_crossings(static_cast<uint32_t>(crossings));
      f.link_room = static_cast<uint16_t>(crossings);
    }
    f.link_count = 0;
    for (topology::LinkId l : path(i)) attach(slot, static_cast<uint32_t>(l));
    if (staged) {
      // The GPU pair's host-staged copies share one virtual link of the host-staged rate.
      auto [it, fresh] = staged_links_.try_emplace(staged_pair, no_link);
      if (fresh) it->second = add_virtual_link(options_.host_staged_rate, staged_pair);
      attach(slot, it->second);
    }
    if (max_rate > 0) {
      // The sender's channel moves at most max_rate: a virtual link its transfer's sub-flows share.
      if (cap_link == no_link) cap_link = add_virtual_link(max_rate, -1);
      attach(slot, cap_link);
    }
    f.latency = route_latency(cluster_, path(i));
    f.bytes = spray_share(t.bytes, i, path_count);
    f.anchor_remaining = f.bytes.as_double();
    f.anchor_time = engine.now();
    f.started = engine.now();
    f.rate = 0;
    if (slot >= slot_level_.size()) slot_level_.resize(slots_.size());
    slot_level_[slot] = HUGE_VAL;  // no level yet: never below a search's floor
    f.done = &done;
    f.payload = payload;
    f.transfer = transfer;
    f.open = open;
    f.order = next_order_++;
    f.units = flow::FlowProblem::units_of(1.0 / static_cast<double>(path_count));
    f.route = static_cast<uint32_t>(i);
    f.live = true;
    f.fresh = true;
    fresh_.push_back(slot);
    by_order_.emplace_back(slot, f.order);
    ++live_;
  }
  // Defer the solve: every start within the window joins one solve (with no window, those of
  // this instant). A solve already due within the window takes this start too.
  const Time now = engine.now();
  const Time window = options_.completion_window;
  if (!(live_at_ >= now && live_at_ - now <= window)) schedule(engine, now + window);
}

void FlowNetworkModel::mark_leaving(std::span<const Drain> due) {
  leaving_.resize(links_.size());
  emptied_.resize(links_.size());
  for (const Drain& d : due) {
    for (const Crossing& c : links_of(slots_[d.slot])) {
      if (leaving_[c.link]++ == 0) leaving_links_.push_back(c.link);
    }
  }
  for (uint32_t l : leaving_links_) emptied_[l] = leaving_[l] == links_[l].flows.size();
  leaving_links_.clear();
}

void FlowNetworkModel::release_link(uint32_t link) {
  LinkState& l = links_[link];
  l.load = 0;
  if (link >= cluster_links_) {
    if (l.staged_pair >= 0) staged_links_.erase(l.staged_pair);
    l.staged_pair = -1;
    free_links_.push_back(link);
  }
}

void FlowNetworkModel::remove_flow(uint32_t slot) {
  ActiveFlow& f = slots_[slot];
  for (const Crossing& c : links_of(f)) {
    LinkState& link = links_[c.link];
    if (emptied_[c.link]) {
      // Every flow on it leaves in this batch: it is cleared when the last of them leaves, which
      // is when one at a time would have left it empty, and no flow on it moves meanwhile.
      if (--leaving_[c.link] > 0) continue;
      emptied_[c.link] = 0;
      link.flows.clear();
      release_link(c.link);
      continue;
    }
    --leaving_[c.link];
    const bool tight = filled(link.load, link.capacity);
    link.load -= f.rate;
    const uint32_t moved = link.flows.back();
    link.flows[c.index] = moved;
    link.flows.pop_back();
    if (moved != slot) {
      for (Crossing& m : links_of(slots_[moved])) {
        if (m.link == c.link) {
          m.index = c.index;
          break;
        }
      }
    }
    if (!link.flows.empty()) {
      // The flows it bound may gain; on a slack link none was bound (settle_left_links).
      if (tight) {
        if (left_level_[c.link] < 0) left_candidates_.push_back(c.link);
        left_level_[c.link] = std::max(left_level_[c.link], level_of(f));
      }
      continue;
    }
    release_link(c.link);
  }
  f.live = false;
  ++f.version;  // its heap entries are stale
  free_slots_.push_back(slot);
  --live_;
  // Sweep the start-order index once it holds more departed flows than active ones.
  if (by_order_.size() > 2 * live_ + 64) {
    std::erase_if(by_order_, [this](const std::pair<uint32_t, uint64_t>& e) {
      const ActiveFlow& g = slots_[e.first];
      return !g.live || g.order != e.second;
    });
  }
}

void FlowNetworkModel::settle_left_links() {
  // A flow is bound by a link that is full and on which no flow runs at a higher level (rate per
  // unit of weight): max-min fairness is exactly that every flow has such a link. Flows that
  // leave a full link free room there, but a flow that stays only gains if the link bound it,
  // which takes a level at least that of every flow that left it (they ran on its bottleneck
  // too). Where every flow left on the link runs below the highest level that left, the link
  // bound none of them: the rates stand, and the link turns slack. An all-to-all's flows are
  // all of one size and start together, so they drain fastest first, and each drain leaves
  // only slower flows behind on its links: without this, every drain re-solved nearly all the
  // flows to the same rates.
  for (uint32_t l : left_candidates_) {
    const double left_level = left_level_[l];
    left_level_[l] = -1;
    const double bound = left_level * (1 - kLevelTieSlack);
    for (uint32_t slot : links_[l].flows) {
      const ActiveFlow& g = slots_[slot];
      if (g.fresh || level_of(g) >= bound) {
        left_links_.push_back(l);
        break;
      }
    }
  }
  left_candidates_.clear();
}

uint32_t FlowNetworkModel::active_slot(size_t i) const {
  for (const auto& [slot, order] : by_order_) {
    const ActiveFlow& f = slots_[slot];
    if (!f.live || f.order != order) continue;
    if (i-- == 0) return slot;
  }
  throw std::out_of_range("FlowNetworkModel: no active flow of that index");
}

FlowNetworkModel::FlowId FlowNetworkModel::flow_id_of(size_t i) const {
  const ActiveFlow& f = slots_[active_slot(i)];
  return {.transfer = f.transfer, .route = f.route};
}

void FlowNetworkModel::schedule(sim::Engine& engine, Time at) {
  live_at_ = at;
  engine.schedule_at(at, *this, ++generation_);
}

void FlowNetworkModel::on_event(sim::Engine& engine, uint64_t payload) {
  if (payload != generation_) return;  // superseded by a later start
  live_at_ = Time::max();
  const Time now = engine.now();
  // Flows retired here leave the solve now, up to a window before they drain: the others gain
  // their share that much early (measured: a 256 MiB all_gather over 144 GB200 GPUs 0.27% faster
  // than with no window; starting the new rates at the last retiree's drain instead made it
  // 0.31%, so the difference is the order of a wave's flows, not freed bandwidth).
  complete_drained(engine);
  solve(now);
  // Flows that started since the last solve had no rate until this one: it applies from their
  // start (their anchor), so a lone flow lands on exactly the analytical model's time whatever
  // the window. One that would have drained already leaves now, and the others are solved again
  // without it.
  while (complete_drained(engine)) solve(now);
  schedule_next_completion(engine);
}

Time FlowNetworkModel::drain_at(const ActiveFlow& f) {
  if (!(f.rate > 0)) return Time::max();
  const Time left = drain_time(f.anchor_remaining, f.rate);
  return left == Time::max() || left > Time::max() - f.anchor_time ? Time::max() : f.anchor_time + left;
}

void FlowNetworkModel::push_drain(uint32_t slot) {
  ActiveFlow& f = slots_[slot];
  ++f.version;  // the entry of its previous rate is stale
  const Time at = drain_at(f);
  if (at == Time::max()) return;  // stuck on a zero-capacity link, or past Time's range
  const Drain d{at, f.order, slot, f.version};
  drains_.push_back(d);
  std::push_heap(drains_.begin(), drains_.end(), LaterDrain{});
  if (const double p = options_.completion_precision; p > 0) {
    const double key = static_cast<double>(at.ps()) + p * static_cast<double>(f.started.ps());
    relative_drains_.push_back({key, d});
    std::push_heap(relative_drains_.begin(), relative_drains_.end(), LaterRelativeDrain{});
  }
}

void FlowNetworkModel::take_relatively_due(Time now, Time until) {
  // A flow is due when at - now <= p (now - started), its window truncated to whole picoseconds
  // as the drain instants are; the heap's key orders the flows by that test, so the due ones are
  // its least. The key's rounding (a few units in the last place of the instants: under a
  // picosecond at an hour simulated) is covered by popping to a picosecond and a 1e-12 share past
  // the bound and testing each flow exactly; those popped but outside their window go back.
  const double p = options_.completion_precision;
  const auto now_ps = static_cast<double>(now.ps());
  const double bound = (1 + p) * now_ps + 1 + 1e-12 * now_ps;
  not_due_.clear();
  while (!relative_drains_.empty() && relative_drains_.front().key <= bound) {
    std::pop_heap(relative_drains_.begin(), relative_drains_.end(), LaterRelativeDrain{});
    const RelativeDrain r = relative_drains_.back();
    relative_drains_.pop_back();
    // Stale, or due by the absolute window and taken from drains_ already.
    if (stale(r.drain) || r.drain.at <= until) continue;
    const Time window =
        Time::ps(static_cast<int64_t>(p * static_cast<double>((now - slots_[r.drain.slot].started).ps())));
    if (r.drain.at - now <= window) {
      due_.push_back(r.drain);
    } else {
      not_due_.push_back(r);
    }
  }
  for (const RelativeDrain& r : not_due_) {
    relative_drains_.push_back(r);
    std::push_heap(relative_drains_.begin(), relative_drains_.end(), LaterRelativeDrain{});
  }
}

void FlowNetworkModel::sort_by_order(std::span<Drain> due) {
  // Start orders are distinct. Where a batch's are every one from the least to the greatest (a
  // batch of flows that started together and all drain at once, as an all-to-all's do), each
  // entry's place is its order less the least: the entries are put there by swaps, in place.
  if (due.empty()) return;
  uint64_t least = due.front().order;
  uint64_t greatest = least;
  for (const Drain& d : due) {
    least = std::min(least, d.order);
    greatest = std::max(greatest, d.order);
  }
  if (greatest - least + 1 != due.size()) {
    std::sort(due.begin(), due.end(), [](const Drain& a, const Drain& b) { return a.order < b.order; });
    return;
  }
  for (size_t i = 0; i < due.size(); ++i) {
    while (due[i].order - least != i) std::swap(due[i], due[due[i].order - least]);
  }
}

bool FlowNetworkModel::complete_drained(sim::Engine& engine) {
  // A flow is done when it drains by the end of the completion window at its present rate
  // (drain instants are rounded up to whole picoseconds, so what remains at the instant is
  // rounding only): it leaves the solve now, and its transfer still completes at the instant it
  // drains, so only the flows beside it gain its share up to a window early. The flows of one
  // wave of a collective drain picoseconds apart; without the window each of them cost a solve
  // of all the others. Fresh flows have no entry in the heap: their first solve is at this event.
  const Time now = engine.now();
  const Time until = now + options_.completion_window;
  due_.clear();
  const auto pop = [this] {
    std::pop_heap(drains_.begin(), drains_.end(), LaterDrain{});
    const Drain d = drains_.back();
    drains_.pop_back();
    return d;
  };
  for (size_t popped = 0; !drains_.empty() && drains_.front().at <= until; ++popped) {
    if (popped >= 64 && popped * static_cast<size_t>(std::bit_width(drains_.size())) >= drains_.size()) {
      // Most of the heap is due (an all-to-all's flows drain together): one pass takes the rest
      // of what is due, at most what the pops so far cost, and the heap is rebuilt from what is
      // left. Entries are popped in (at, order) order, a total order among live ones, so the
      // heap's layout changes nothing that follows.
      const auto later = std::partition(drains_.begin(), drains_.end(),
                                        [until](const Drain& d) { return d.at > until; });
      make_room(due_, due_.size() + static_cast<size_t>(drains_.end() - later));
      for (auto it = later; it != drains_.end(); ++it) {
        if (!stale(*it)) due_.push_back(*it);
      }
      drains_.erase(later, drains_.end());
      std::make_heap(drains_.begin(), drains_.end(), LaterDrain{});
      break;
    }
    const Drain d = pop();
    if (!stale(d)) due_.push_back(d);
  }
  if (options_.completion_precision > 0) take_relatively_due(now, until);
  if (due_.empty()) return false;
  // Retire in start order, so transfers that complete at one instant are notified in that order.
  sort_by_order(due_);
  mark_leaving(due_);
  for (const Drain& d : due_) {
    const ActiveFlow& f = slots_[d.slot];
    left_floor_ = std::min(left_floor_, level_of(f));
    delivered_ += f.bytes;
    // The transfer is done when its last sub-flow has drained, a path latency later (not before
    // now: a flow shorter than the window that drained before the solve that gave it its rate).
    OpenTransfer& open = open_transfers_[f.open];
    open.done_at = std::max({open.done_at, now, d.at + f.latency});
    if (--open.open == 0) {
      // Its last sub-flow has drained by now (at most the window before).
      if (open.drained != nullptr) engine.schedule_at(now, *open.drained, open.drained_payload);
      engine.schedule_at(open.done_at, *f.done, f.payload);
      free_open_transfers_.push_back(f.open);
    }
    remove_flow(d.slot);
  }
  settle_left_links();
  return true;
}

void FlowNetworkModel::reach_link(uint32_t link, bool cross) {
  if (link_reached_[link] == epoch_ && !cross) return;
  link_reached_[link] = epoch_;
  if (cross || cross_all_ || filled(links_[link].load, links_[link].capacity)) link_stack_.push_back(link);
}

void FlowNetworkModel::reach_flow(uint32_t slot) {
  // Reached already, or below this search's floor, whose rate stands (collect_component).
  if (slot_reached_[slot] == epoch_ || slot_level_[slot] < reach_floor_) return;
  slot_reached_[slot] = epoch_;
  component_.push_back(slot);
  for (const Crossing& c : links_of(slots_[slot])) reach_link(c.link, false);
}

void FlowNetworkModel::cross_pending() {
  while (!link_stack_.empty()) {
    const uint32_t l = link_stack_.back();
    link_stack_.pop_back();
    for (uint32_t slot : links_[l].flows) reach_flow(slot);
  }
}

void FlowNetworkModel::collect_component() {
  component_.clear();
  double floor = left_floor_;
  left_floor_ = HUGE_VAL;
  if (!options_.incremental) {
    for (const auto& [slot, order] : by_order_) {
      const ActiveFlow& f = slots_[slot];
      if (f.live && f.order == order) component_.push_back(slot);
    }
    return;
  }
  // Depth-first over the flow-link graph from the fresh flows and the tight links flows left,
  // crossing tight links only. A flow not reached shares with the reached ones only slack links,
  // which bind it nowhere, and its bottleneck (tight) carries none of them and lost no flow: its
  // rate stands, as long as those slack links stay slack (cross_filled_links).
  //
  // A flow below the floor keeps its rate too, and the search passes it by. In progressive
  // filling no link a leaving flow crossed fills below that flow's level (it would have frozen
  // the flow there), nor, with the new flows, one a starting flow crosses below that flow's new
  // level; the other links carry what they did. So below the lowest of those levels every link
  // fills where and when it did, and every flow frozen there freezes at its old rate. Solving
  // the rest with those flows' rates taken off their links' capacities is then exact: the rest
  // all run at that level or above, so no link fills below it in that solve either, and from it
  // on the two fillings are one. The floor: the lowest level that left, and for each flow that
  // started the least of its links' capacity over its flows, under which its new level cannot be
  // (at its bottleneck it runs at the top level, so that link's flows, of weight 1 at most, take
  // no more than its level each).
  for (const uint32_t slot : fresh_) {
    for (const Crossing& c : links_of(slots_[slot])) {
      const LinkState& link = links_[c.link];
      floor = std::min(floor, link.capacity / static_cast<double>(link.flows.size()));
    }
  }
  //
  // After drains alone, a flow at the floor itself keeps its rate too unless it crosses a link
  // that flows left (left_links_). In the filling before they left, a link that filled at the
  // floor L froze every flow on it, a leaving flow too if it crossed the link; so a link that a
  // leaving flow crosses fills at L only if that flow ran at L, which puts the link in
  // left_links_ when a flow at L stays on it (settle_left_links). Every other link that filled
  // at L carries the same flows, with the same rates frozen below L: it fills at L again, and
  // freezes its flows there. So the search takes flows at the floor on those links only, and
  // elsewhere flows above it. "At the floor" is within the solver's tie tolerance above it:
  // levels that close freeze in one round, and a flow left out there could move by no more than
  // that. A start lowers its links' shares, and a flow at the floor may lose: with fresh flows
  // every flow at the floor is taken.
  reach_floor_ = floor == HUGE_VAL ? 0 : floor * (1 - kLevelTieSlack);
  ++epoch_;
  cross_all_ = false;
  link_stack_.clear();
  slot_reached_.resize(slots_.size());
  link_reached_.resize(links_.size());
  if (fresh_.empty()) {
    for (const uint32_t l : left_links_) {
      link_reached_[l] = epoch_;
      for (const uint32_t slot : links_[l].flows) reach_flow(slot);
    }
    reach_floor_ = floor * (1 + flow::kTieTolerance);
  } else {
    for (uint32_t slot : fresh_) reach_flow(slot);
    for (uint32_t l : left_links_) reach_link(l, true);
  }
  cross_pending();
}

void FlowNetworkModel::number_component() {
  // In slot order: the reads of every flow's links below go through memory in a row. A large
  // component is gathered by a pass over the slots, a middling one sorted; a few flows' reads
  // gain nothing from order.
  const size_t size = component_.size();
  if (size >= 64 && size * 16 >= slots_.size()) {
    component_.clear();
    for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
      if (options_.incremental ? slot_reached_[slot] == epoch_ : slots_[slot].live) component_.push_back(slot);
    }
    assert(component_.size() == size);
  } else if (size >= 64) {
    std::sort(component_.begin(), component_.end());
  }
  const uint32_t numbering = ++numbering_;
  link_numbered_.resize(links_.size());
  link_dense_.resize(links_.size());
  slot_pos_.resize(slots_.size());
  dense_links_.clear();
  inside_load_.clear();
  inside_flows_.clear();
  inside_units_.clear();
  path_offsets_.assign(1, 0);
  paths_.clear();
  units_.clear();
  // Room made once: each doubling of a vector of a large component's paths would copy it and
  // touch fresh pages.
  size_t crossings = 0;
  for (const uint32_t slot : component_) crossings += slots_[slot].link_count;
  make_room(paths_, crossings);
  make_room(path_offsets_, component_.size() + 1);
  make_room(units_, component_.size());
  for (uint32_t i = 0; i < component_.size(); ++i) {
    const uint32_t slot = component_[i];
    const ActiveFlow& f = slots_[slot];
    slot_pos_[slot] = i;
    units_.push_back(f.units);
    for (const Crossing& c : links_of(f)) {
      if (link_numbered_[c.link] != numbering) {
        link_numbered_[c.link] = numbering;
        link_dense_[c.link] = static_cast<uint32_t>(dense_links_.size());
        dense_links_.push_back(c.link);
        inside_load_.push_back(0);
        inside_flows_.push_back(0);
        inside_units_.push_back(0);
      }
      const uint32_t d = link_dense_[c.link];
      inside_load_[d] += f.rate;
      ++inside_flows_[d];
      inside_units_[d] += f.units;
      paths_.push_back(d);
    }
    path_offsets_.push_back(static_cast<uint32_t>(paths_.size()));
  }
  offered_.resize(dense_links_.size());
  for (size_t d = 0; d < dense_links_.size(); ++d) {
    const LinkState& link = links_[dense_links_[d]];
    const bool whole = inside_flows_[d] == link.flows.size();
    offered_[d] = whole ? link.capacity : std::max(0.0, link.capacity - (link.load - inside_load_[d]));
  }
}

void FlowNetworkModel::build_problem() {
  problem_.capacity.assign(offered_.begin(), offered_.end());
  problem_.clear_flows();
  for (uint32_t i = 0; i < component_.size(); ++i) problem_.add_flow(path_of(i), flow::weight_of_units(units_[i]));
  problem_.build_link_index();
}

// The numbered component, as it lives in the model: a link's flows are the slots crossing it,
// less those outside the component where the link carries any.
class FlowNetworkModel::ComponentView {
 public:
  explicit ComponentView(const FlowNetworkModel& m) : m_(m) {}
  size_t flow_count() const { return m_.component_.size(); }
  size_t link_count() const { return m_.dense_links_.size(); }
  double capacity(uint32_t d) const { return m_.offered_[d]; }
  uint32_t flows_on_count(uint32_t d) const { return m_.inside_flows_[d]; }
  uint64_t units_on(uint32_t d) const { return m_.inside_units_[d]; }
  template <typename Fn>
  void for_each_flow_on(uint32_t d, Fn&& fn) const {
    const sim::PoolList<uint32_t>& on = m_.links_[m_.dense_links_[d]].flows;
    if (m_.inside_flows_[d] == on.size()) {
      for (uint32_t slot : on) fn(m_.slot_pos_[slot]);
      return;
    }
    // Only incremental solves leave flows out, and every flow they reached is in the component.
    for (uint32_t slot : on) {
      if (m_.slot_reached_[slot] == m_.epoch_) fn(m_.slot_pos_[slot]);
    }
  }
  template <typename Fn>
  void for_each_link_of(uint32_t i, Fn&& fn) const {
    for (uint32_t d : m_.path_of(i)) fn(d);
  }
  bool crosses_nothing(uint32_t i) const { return m_.path_of(i).empty(); }
  uint64_t weight_units(uint32_t i) const { return m_.units_[i]; }

 private:
  const FlowNetworkModel& m_;
};

bool FlowNetworkModel::cross_filled_links(int attempt) {
  // link_load_ holds the new rates summed per problem link. The flows a filled link adds may all
  // be below the search's floor, which keep their rates: only a component that grew is solved
  // again.
  const size_t reached = component_.size();
  bool any = false;
  for (size_t d = 0; d < dense_links_.size(); ++d) {
    const LinkState& link = links_[dense_links_[d]];
    if (inside_flows_[d] == link.flows.size()) continue;
    const double load = link.load - inside_load_[d] + link_load_[d];
    if (!filled(load, link.capacity)) continue;
    reach_link(dense_links_[d], true);
    any = true;
  }
  if (!any) return false;
  // A cascade of slack links filling one after another: take the whole components at once.
  if (attempt >= 2) {
    cross_all_ = true;
    for (size_t d = 0; d < dense_links_.size(); ++d) {
      if (inside_flows_[d] != links_[dense_links_[d]].flows.size()) reach_link(dense_links_[d], true);
    }
  }
  cross_pending();
  return component_.size() > reached;
}

void FlowNetworkModel::solve(Time from) {
  collect_component();
  fresh_.clear();
  left_links_.clear();
  if (component_.empty()) return;
  for (int attempt = 0;; ++attempt) {
    number_component();
    rates_.resize(component_.size());
    if (options_.accelerator && component_.size() >= options_.accelerator_min_flows) {
      build_problem();
      options_.accelerator->solve(problem_, rates_);
      ++accelerated_solves_;
    } else {
      cpu_.fill(ComponentView(*this), rates_);
    }
    ++solves_;
    flows_solved_ += component_.size();
    // The new rates summed per link, in the component's order.
    link_load_.assign(dense_links_.size(), 0.0);
    for (uint32_t i = 0; i < component_.size(); ++i) {
      for (uint32_t d : path_of(i)) link_load_[d] += rates_[i];
    }
    if (!options_.incremental || !cross_filled_links(attempt)) break;
  }
  // Utilization of the links solved, with the load of the flows beyond them.
  for (size_t d = 0; d < dense_links_.size(); ++d) {
    const LinkState& link = links_[dense_links_[d]];
    const double load = link.load - inside_load_[d] + link_load_[d];
    if (load > 0) peak_utilization_ = std::max(peak_utilization_, link.capacity > 0 ? load / link.capacity : HUGE_VAL);
  }
  make_room(drains_, drains_.size() + component_.size());
  if (options_.completion_precision > 0) make_room(relative_drains_, relative_drains_.size() + component_.size());
  for (size_t i = 0; i < component_.size(); ++i) {
    ActiveFlow& f = slots_[component_[i]];
    // A flow whose rate changes is re-anchored at what it has left now; a fresh one keeps its
    // anchor at its start, so the rate counts from there. Only those drain at a new instant.
    if (!f.fresh && rates_[i] == f.rate) continue;
    if (!f.fresh) {
      f.anchor_remaining -= f.rate * (from - f.anchor_time).seconds();
      f.anchor_time = from;
    }
    for (const Crossing& c : links_of(f)) links_[c.link].load += rates_[i] - f.rate;
    f.rate = rates_[i];
    slot_level_[component_[i]] = level_of(f);
    f.fresh = false;
    push_drain(component_[i]);
  }
  sweep_stale(drains_, live_, LaterDrain{}, [this](const Drain& d) { return stale(d); });
  sweep_stale(relative_drains_, live_, LaterRelativeDrain{}, [this](const RelativeDrain& r) { return stale(r.drain); });
}

void FlowNetworkModel::schedule_next_completion(sim::Engine& engine) {
  while (!drains_.empty() && stale(drains_.front())) {
    std::pop_heap(drains_.begin(), drains_.end(), LaterDrain{});
    drains_.pop_back();
  }
  // Nothing left, or only flows stuck on zero-capacity links (or finishing past Time's range).
  if (drains_.empty()) return;
  schedule(engine, std::max(drains_.front().at, engine.now()));
}

}  // namespace dtsim::network
