#include "workloads/executor.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "sim/engine.h"
#include "sim/error.h"
#include "sim/partitioned_engine.h"

namespace dtsim::workloads {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

bool same_shape(const Op& a, const Op& b) {
  return a.compute == b.compute && a.dtype == b.dtype && a.m == b.m && a.n == b.n && a.k == b.k &&
         a.batch == b.batch && a.flops == b.flops && a.bytes == b.bytes;
}

// The collective the cost model prices an op as (a send is a send_recv); nullopt for an op it
// does not price (compute, a receive, a measured op, an op on no communicator).
std::optional<collectives::CollectiveKind> priced_collective(const Op& op) {
  if (op.has_measured() || op.kind == OpKind::compute || op.kind == OpKind::recv || op.comm < 0)
    return std::nullopt;
  return op.kind == OpKind::send ? collectives::CollectiveKind::send_recv : op.collective;
}

// Whether online execution runs `op` on the network: a collective on a communicator, or a send on
// its pair's. (A receive completes with its send; an op on no communicator takes no time.)
bool runs_on_network(const Op& op) {
  return op.comm >= 0 && (op.kind == OpKind::collective || op.kind == OpKind::send);
}

// One key per distinct (communicator, collective, size) the cost model prices. (Packed into one
// 64-bit word by shifts, as it was, two keys met once a workload had 65,536 communicators or a
// collective 16 TiB.)
struct PriceKey {
  int comm;
  collectives::CollectiveKind kind;
  int64_t bytes;
  bool operator==(const PriceKey&) const = default;
};
struct PriceKeyHash {
  size_t operator()(const PriceKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.bytes) * 0x9E3779B97F4A7C15ULL;
    h ^= (static_cast<uint64_t>(static_cast<uint32_t>(k.comm)) << 8 | static_cast<uint64_t>(k.kind)) + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};
using PriceCache = std::unordered_map<PriceKey, Time, PriceKeyHash>;
PriceKey price_key(const Op& op, collectives::CollectiveKind kind) { return {op.comm, kind, op.bytes.count()}; }

// Every distinct collective the workload's ops run, in the order they first appear.
std::vector<collectives::CollectiveQuery> distinct_collectives(const Workload& w) {
  std::vector<collectives::CollectiveQuery> out;
  std::unordered_set<PriceKey, PriceKeyHash> seen;
  for (const RankGraph& g : w.ranks) {
    for (const Op& op : g.ops) {
      const auto kind = priced_collective(op);
      if (kind && seen.insert(price_key(op, *kind)).second)
        out.push_back({*kind, op.bytes, &w.comms[op.comm]});
    }
  }
  return out;
}

// Index of a stream's category in the breakdown sweep: 0 compute, then 1 + CommCategory, and
// last the host, charged only when no GPU stream is busy.
constexpr int kHostSweep = 6;
int sweep_index(Stream s) {
  if (s == Stream::host) return kHostSweep;
  return s == Stream::compute ? 0 : 1 + static_cast<int>(category_of(s));
}

struct RankState {
  std::vector<Time> dur, start, end;
  std::vector<uint32_t> remaining;
  std::vector<uint32_t> succ_begin, succ;
  std::vector<uint32_t> prev_in_stream;
  std::array<std::vector<uint32_t>, kStreamCount> queue;
  std::array<size_t, kStreamCount> head{};
  std::array<bool, kStreamCount> busy{};
  std::vector<uint8_t> done;
  std::vector<uint8_t> recv_waiting;
  std::vector<std::pair<int, uint32_t>> send_match;  // send op -> (rank, recv op)
  std::vector<uint32_t> coll_seq;                    // collective or send op -> its number on its comm
  std::vector<uint8_t> delivered;                    // online, receive op: its send's bytes have landed
};

class Run final : public sim::EventHandler {
 public:
  Run(const Workload& w, const ComputeModel& cm, const collectives::CollectiveCostModel& cc,
      CommunicationRunner* network, ExecutionProgress* progress)
      : w_(w), ranks_(w.ranks.size()), slowdown_(cm.params().comm_overlap_slowdown), network_(network),
        progress_(progress) {
    // Which simulated ranks belong to each communicator: only those take part in a rendezvous.
    std::unordered_map<int, int> rank_of_gpu;
    for (size_t r = 0; r < w.ranks.size(); ++r) rank_of_gpu[w.ranks[r].gpu] = static_cast<int>(r);
    members_.assign(w.comms.size(), 0);
    absent_.assign(w.comms.size(), {});
    for (size_t c = 0; c < w.comms.size(); ++c) {
      for (int g : w.comms[c].ranks) {
        if (rank_of_gpu.count(g)) {
          ++members_[c];
        } else {
          absent_[c].push_back(g);
        }
      }
    }
    // Handed over at once, so that a model that prices collectives at a cost can price them side by
    // side before the loop below asks for each.
    if (network_ == nullptr) cc.prepare(distinct_collectives(w));
    PriceCache comm_cache;
    for (size_t r = 0; r < w.ranks.size(); ++r) {
      const RankGraph& g = w.ranks[r];
      RankState& st = ranks_[r];
      const size_t n = g.ops.size();
      st.dur.resize(n);
      st.start.assign(n, Time::zero());
      st.end.assign(n, Time::zero());
      st.remaining.resize(n);
      st.done.assign(n, 0);
      st.recv_waiting.assign(n, 0);
      st.prev_in_stream.assign(n, kNone);
      st.coll_seq.assign(n, 0);
      st.delivered.assign(n, 0);
      std::vector<uint32_t> count(n + 1, 0);
      std::vector<uint32_t> label_first(g.labels.size() + 1, kNone);
      std::vector<Time> unit_dur(g.labels.size() + 1);
      std::vector<uint32_t> seq(w.comms.size(), 0);
      std::array<uint32_t, kStreamCount> last{};
      last.fill(kNone);
      for (size_t i = 0; i < n; ++i) {
        const Op& op = g.ops[i];
        st.remaining[i] = op.dep_count;
        for (uint32_t d = 0; d < op.dep_count; ++d) ++count[g.deps[op.dep_begin + d]];
        if (op.kind != OpKind::recv) {
          const int s = static_cast<int>(op.stream);
          st.queue[s].push_back(static_cast<uint32_t>(i));
          st.prev_in_stream[i] = last[s];
          last[s] = static_cast<uint32_t>(i);
        }
        if ((op.kind == OpKind::collective || op.kind == OpKind::send) && op.comm >= 0) st.coll_seq[i] = seq[op.comm]++;
        // Generated graphs repeat each shape once per microbatch under one label: price a
        // compute op once per label and reuse it while the shape matches.
        if (op.kind == OpKind::compute && !op.has_measured() && op.label < label_first.size()) {
          uint32_t& f = label_first[op.label];
          if (f == kNone) {
            f = static_cast<uint32_t>(i);
            unit_dur[op.label] = cm.time(op);
          }
          if (same_shape(g.ops[f], op)) {
            st.dur[i] = unit_dur[op.label] * op.repeat;
            continue;
          }
        }
        if (network_ != nullptr && runs_on_network(op)) continue;  // it takes what the network gives
        st.dur[i] = price(op, cm, cc, comm_cache);
      }
      st.succ_begin.assign(n + 1, 0);
      for (size_t i = 0; i < n; ++i) st.succ_begin[i + 1] = st.succ_begin[i] + count[i];
      st.succ.resize(st.succ_begin[n]);
      std::vector<uint32_t> fill(st.succ_begin.begin(), st.succ_begin.end() - 1);
      for (size_t i = 0; i < n; ++i) {
        const Op& op = g.ops[i];
        for (uint32_t d = 0; d < op.dep_count; ++d) st.succ[fill[g.deps[op.dep_begin + d]]++] = static_cast<uint32_t>(i);
      }
    }
    for (size_t r = 0; r < w.ranks.size(); ++r) {
      ranks_[r].send_match.assign(w.ranks[r].ops.size(), {-1, kNone});
    }
    for (size_t r = 0; r < w.ranks.size(); ++r) {
      const auto& ops = w.ranks[r].ops;
      for (size_t i = 0; i < ops.size(); ++i) {
        const Op& op = ops[i];
        if (op.kind == OpKind::recv && op.peer_rank >= 0 && op.peer_op >= 0) {
          if (static_cast<size_t>(op.peer_rank) >= ranks_.size() ||
              static_cast<size_t>(op.peer_op) >= ranks_[op.peer_rank].send_match.size()) {
            throw std::invalid_argument("executor: receive names a send that does not exist");
          }
          ranks_[op.peer_rank].send_match[op.peer_op] = {static_cast<int>(r), static_cast<uint32_t>(i)};
        }
      }
    }
  }

  Time price(const Op& op, const ComputeModel& cm, const collectives::CollectiveCostModel& cc,
             PriceCache& cache) const {
    if (op.has_measured()) return op.measured * op.repeat;
    if (op.kind == OpKind::compute) return cm.time(op) * op.repeat;
    const auto kind = priced_collective(op);
    if (!kind) return Time::zero();
    const PriceKey key = price_key(op, *kind);
    auto it = cache.find(key);
    Time t;
    if (it != cache.end()) {
      t = it->second;
    } else {
      t = cc.estimate(*kind, op.bytes, w_.comms[op.comm]).time;
      cache.emplace(key, t);
    }
    return t * op.repeat;
  }

  // Each rank starts in an event at its GPU's site (online; site 0 otherwise), all scheduled from
  // `e` in rank order, so that a rank's events run where its GPU's do and take the keys a serial
  // run gives them.
  void start_all(sim::Engine& e) {
    for (size_t r = 0; r < ranks_.size(); ++r) {
      const sim::Site site = network_ != nullptr ? network_->site_of_gpu(w_.ranks[r].gpu) : 0;
      e.schedule_at_site(e.now(), site, *this, kStart | r);
    }
  }

  // Refuses, in one line, a workload whose ranks would touch each other's state at once on a
  // partitioned engine: one with members of a communicator not simulated (they reach a collective
  // with whichever simulated member first does), or a send that does not run on the network (its
  // receive is woken from the sender's event).
  void check_partitionable() const {
    if (network_ == nullptr) throw InputError(SourceLocation{}, "--partitions", "needs online execution");
    for (size_t c = 0; c < absent_.size(); ++c) {
      if (!absent_[c].empty()) {
        throw InputError(SourceLocation{}, "--partitions",
                         "needs every rank simulated; communicator " + std::to_string(c) + " has members that are not");
      }
    }
    for (size_t r = 0; r < ranks_.size(); ++r) {
      const auto& ops = w_.ranks[r].ops;
      for (size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].kind == OpKind::send && !runs_on_network(ops[i]) && ranks_[r].send_match[i].first >= 0) {
          throw InputError(SourceLocation{}, "--partitions",
                           "needs every send on a communicator; rank " + std::to_string(r) + " has one on none");
        }
      }
    }
  }

  void on_event(sim::Engine& e, uint64_t payload) override {
    if (payload == kNobody) return;
    if ((payload & kStart) != 0 && (payload & kDelivered) == 0) {
      start_rank(e, static_cast<int>(payload & ~kStart));
      return;
    }
    if ((payload & kDelivered) != 0) {
      delivered(e, static_cast<int>((payload & ~kDelivered) >> 32), static_cast<uint32_t>(payload & 0xffffffffu));
      return;
    }
    const int r = static_cast<int>(payload >> 32);
    const auto i = static_cast<uint32_t>(payload & 0xffffffffu);
    complete(e, r, i);
  }

  std::vector<RankState>& ranks() { return ranks_; }

 private:
  void start_rank(sim::Engine& e, int r) {
    // Communication streams first: their kernels are enqueued ahead of compute at the start.
    for (int s = kStreamCount - 1; s >= 0; --s) try_stream(e, r, s);
    const auto& ops = w_.ranks[r].ops;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind == OpKind::recv && ranks_[r].remaining[i] == 0) recv_ready(e, r, static_cast<uint32_t>(i));
    }
  }

  // Starts rank r's part of communication op i (a collective, or a send) on the network; it
  // completes once the rank's part has ended (landed()), and a send's receive once its bytes have
  // landed. A member of the collective's communicator that is not simulated reaches it with the
  // first simulated member that does.
  void begin_on_network(sim::Engine& e, int r, uint32_t i) {
    RankState& st = ranks_[r];
    st.start[i] = e.now();
    const Op& op = w_.ranks[r].ops[i];
    const collectives::Communicator& comm = w_.comms[op.comm];
    uint64_t delivered = kNobody;
    if (op.kind == OpKind::send && st.send_match[i].first >= 0) {
      delivered = kDelivered | (static_cast<uint64_t>(st.send_match[i].first) << 32) | st.send_match[i].second;
    }
    if (op.kind == OpKind::collective && !absent_[op.comm].empty() &&
        present_.insert((static_cast<uint64_t>(op.comm) << 32) | st.coll_seq[i]).second) {
      for (int g : absent_[op.comm]) network_->start(e, op, comm, g, st.coll_seq[i], *this, kNobody, kNobody);
    }
    network_->start(e, op, comm, w_.ranks[r].gpu, st.coll_seq[i], *this,
                    (static_cast<uint64_t>(r) << 32) | i, delivered);
  }

  // Online: the bytes of the send that receive op i of rank r waits on have landed.
  void delivered(sim::Engine& e, int r, uint32_t i) {
    RankState& st = ranks_[r];
    st.delivered[i] = 1;
    if (st.recv_waiting[i]) {
      st.recv_waiting[i] = 0;
      e.schedule_in(Time::zero(), *this, (static_cast<uint64_t>(r) << 32) | i);
    }
  }

  void begin(sim::Engine& e, int r, uint32_t i) {
    RankState& st = ranks_[r];
    st.start[i] = e.now();
    Time d = st.dur[i];
    if (slowdown_ > 0 && w_.ranks[r].ops[i].kind == OpKind::compute &&
        w_.ranks[r].ops[i].stream != Stream::host) {
      for (int s = 1; s < kStreamCount; ++s) {
        if (st.busy[s] && s != static_cast<int>(Stream::host)) {
          d = d.scaled(1 + slowdown_);
          break;
        }
      }
    }
    e.schedule_in(d, *this, (static_cast<uint64_t>(r) << 32) | i);
  }

  void try_stream(sim::Engine& e, int r, int s) {
    RankState& st = ranks_[r];
    if (st.busy[s] || st.head[s] >= st.queue[s].size()) return;
    const uint32_t i = st.queue[s][st.head[s]];
    if (st.remaining[i] != 0) return;
    st.busy[s] = true;
    const Op& op = w_.ranks[r].ops[i];
    if (network_ != nullptr && runs_on_network(op)) {
      begin_on_network(e, r, i);
      return;
    }
    if (op.kind == OpKind::collective && op.comm >= 0 && members_[op.comm] > 1) {
      // Rendezvous: all simulated members must reach this collective before any starts it.
      const uint64_t key = (static_cast<uint64_t>(op.comm) << 32) | st.coll_seq[i];
      auto& waiting = rendezvous_[key];
      waiting.emplace_back(r, i);
      if (static_cast<int>(waiting.size()) == members_[op.comm]) {
        for (auto [wr, wi] : waiting) begin(e, wr, wi);
        rendezvous_.erase(key);
      }
      return;
    }
    begin(e, r, i);
  }

  void recv_ready(sim::Engine& e, int r, uint32_t i) {
    const Op& op = w_.ranks[r].ops[i];
    RankState& st = ranks_[r];
    st.start[i] = e.now();
    // Online, a receive waits for its send's bytes to land (delivered()); priced, for its send.
    const bool online = op.peer_rank >= 0 && op.peer_op >= 0 && network_ != nullptr &&
                        runs_on_network(w_.ranks[op.peer_rank].ops[op.peer_op]);
    if (op.peer_rank < 0 || op.peer_op < 0 || (online ? st.delivered[i] : ranks_[op.peer_rank].done[op.peer_op])) {
      e.schedule_in(Time::zero(), *this, (static_cast<uint64_t>(r) << 32) | i);
    } else {
      st.recv_waiting[i] = 1;
    }
  }

  void complete(sim::Engine& e, int r, uint32_t i) {
    RankState& st = ranks_[r];
    const Op& op = w_.ranks[r].ops[i];
    st.end[i] = e.now();
    st.done[i] = 1;
    if (progress_ != nullptr) progress_->done.fetch_add(1, std::memory_order_relaxed);
    const int s = static_cast<int>(op.stream);
    if (op.kind != OpKind::recv) {
      st.busy[s] = false;
      ++st.head[s];
    }
    if (op.kind == OpKind::send && !(network_ != nullptr && runs_on_network(op))) {
      auto [rr, ri] = st.send_match[i];
      if (rr >= 0 && ranks_[rr].recv_waiting[ri]) {
        ranks_[rr].recv_waiting[ri] = 0;
        e.schedule_in(Time::zero(), *this, (static_cast<uint64_t>(rr) << 32) | ri);
      }
    }
    for (uint32_t k = st.succ_begin[i]; k < st.succ_begin[i + 1]; ++k) {
      const uint32_t j = st.succ[k];
      if (--st.remaining[j] != 0) continue;
      const Op& next = w_.ranks[r].ops[j];
      if (next.kind == OpKind::recv) {
        recv_ready(e, r, j);
      } else {
        try_stream(e, r, static_cast<int>(next.stream));
      }
    }
    if (op.kind != OpKind::recv) try_stream(e, r, s);
  }


  const Workload& w_;
  std::vector<RankState> ranks_;
  // Payloads the network reports with: a receive's send delivered (its rank and op below), or no
  // one to tell (a member not simulated; a send whose receive is not in the workload).
  // A rank's start (its index below) is kStart without kDelivered.
  static constexpr uint64_t kDelivered = uint64_t{1} << 63;
  static constexpr uint64_t kStart = uint64_t{1} << 62;
  static constexpr uint64_t kNobody = ~uint64_t{0};
  std::vector<int> members_;
  std::vector<std::vector<int>> absent_;  // each communicator's GPUs that are not simulated
  std::unordered_set<uint64_t> present_;  // (communicator, number) of collectives they have reached
  std::unordered_map<uint64_t, std::vector<std::pair<int, uint32_t>>> rendezvous_;
  double slowdown_ = 0;
  CommunicationRunner* network_ = nullptr;
  ExecutionProgress* progress_ = nullptr;
};

TimeBreakdown split(const RankGraph& g, const RankState& st, Time horizon) {
  // Each stream's ops ran one after another in queue order, so every stream is a sorted list of
  // disjoint intervals; a merge over the streams visits every boundary in time order.
  TimeBreakdown out;
  std::array<size_t, kStreamCount> pos{};
  std::array<bool, kStreamCount> inside{};
  std::array<int, kHostSweep + 1> active{};
  // Exposed communication is charged in this order when several overlap: the collectives that
  // block the compute stream in the framework first, gradient traffic last.
  static constexpr std::array<int, 5> kPriority = {1 + static_cast<int>(CommCategory::tp),
                                                   1 + static_cast<int>(CommCategory::cp),
                                                   1 + static_cast<int>(CommCategory::ep),
                                                   1 + static_cast<int>(CommCategory::pp),
                                                   1 + static_cast<int>(CommCategory::dp)};
  auto charge = [&](Time from, Time to) {
    if (to <= from) return;
    const Time d = to - from;
    if (active[0] > 0) {
      out.compute += d;
      return;
    }
    for (int k : kPriority) {
      if (active[k] > 0) {
        out.exposed[k - 1] += d;
        return;
      }
    }
    if (active[kHostSweep] > 0) {
      out.host += d;
    } else {
      out.bubble += d;
    }
  };
  Time t = Time::zero();
  for (;;) {
    int best = -1;
    Time when = Time::max();
    for (int s = 0; s < kStreamCount; ++s) {
      const auto& q = st.queue[s];
      // Skip zero-length ops: they occupy no time.
      while (!inside[s] && pos[s] < q.size() && st.end[q[pos[s]]] <= st.start[q[pos[s]]]) ++pos[s];
      if (pos[s] >= q.size()) continue;
      const uint32_t i = q[pos[s]];
      const Time b = inside[s] ? st.end[i] : st.start[i];
      if (b < when) {
        when = b;
        best = s;
      }
    }
    if (best < 0) break;
    const Time clipped = std::min(when, horizon);
    charge(t, clipped);
    t = std::max(t, clipped);
    const int idx = sweep_index(static_cast<Stream>(best));
    if (inside[best]) {
      --active[idx];
      inside[best] = false;
      ++pos[best];
    } else {
      ++active[idx];
      inside[best] = true;
    }
  }
  charge(t, horizon);
  (void)g;
  return out;
}

void add_to(TimeBreakdown& acc, const TimeBreakdown& b, int64_t weight) {
  acc.compute += b.compute * weight;
  for (int k = 0; k < 5; ++k) acc.exposed[k] += b.exposed[k] * weight;
  acc.host += b.host * weight;
  acc.bubble += b.bubble * weight;
}

TimeBreakdown divided(const TimeBreakdown& b, int64_t n) {
  TimeBreakdown out;
  const double k = 1.0 / static_cast<double>(n);
  out.compute = b.compute.scaled(k);
  for (int i = 0; i < 5; ++i) out.exposed[i] = b.exposed[i].scaled(k);
  out.host = b.host.scaled(k);
  out.bubble = b.bubble.scaled(k);
  return out;
}

}  // namespace

Time TimeBreakdown::exposed_total() const {
  Time t;
  for (Time e : exposed) t += e;
  return t;
}

Executor::Executor(const ComputeModel& compute, const collectives::CollectiveCostModel& comm,
                   ExecutorOptions options)
    : compute_(compute), comm_(comm), options_(options) {}

ExecutionResult Executor::run(const Workload& w) const {
  if (options_.progress != nullptr) {
    options_.progress->done.store(0, std::memory_order_relaxed);
    options_.progress->total = w.op_count();
  }
  Run run(w, compute_, comm_, options_.network, options_.progress);
  ExecutionResult out;
  bool stopped = false;
  Time reached;
  if (options_.partitions != nullptr) {
    run.check_partitionable();
    sim::PartitionedEngine engines(options_.partitions->owner, options_.partitions->lookahead);
    engines.set_watch(options_.watch);
    run.start_all(engines.engine_of(0));
    out.events = engines.run();
    out.fingerprint = engines.fingerprint();
    stopped = !engines.idle();
    reached = engines.now();
  } else {
    sim::Engine engine;
    engine.set_watch(options_.watch);
    run.start_all(engine);
    out.events = engine.run();
    out.fingerprint = engine.fingerprint();
    stopped = !engine.idle();
    reached = engine.now();
  }
  auto& ranks = run.ranks();
  if (stopped) {  // the watch stopped it
    size_t done = 0, total = 0;
    for (const RankState& st : ranks) {
      total += st.done.size();
      for (uint8_t d : st.done) done += d;
    }
    throw ExecutionStopped(reached, done, total);
  }

  int best_rank = -1;
  uint32_t best_op = kNone;
  out.rank_end.assign(ranks.size(), Time::zero());
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (size_t i = 0; i < ranks[r].done.size(); ++i) {
      if (!ranks[r].done[i]) {
        throw std::runtime_error("executor: rank " + std::to_string(r) + " op '" +
                                 w.ranks[r].labels[w.ranks[r].ops[i].label] +
                                 "' never ran (a dependency cycle or an unmatched receive)");
      }
      out.rank_end[r] = std::max(out.rank_end[r], ranks[r].end[i]);
      if (best_rank < 0 || ranks[r].end[i] > out.iteration) {
        out.iteration = ranks[r].end[i];
        best_rank = static_cast<int>(r);
        best_op = static_cast<uint32_t>(i);
      }
    }
  }

  TimeBreakdown acc;
  int64_t weight = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    TimeBreakdown b = split(w.ranks[r], ranks[r], out.iteration);
    add_to(acc, b, w.ranks[r].represents);
    weight += w.ranks[r].represents;
    out.per_rank.push_back(b);
  }
  if (weight > 0) out.breakdown = divided(acc, weight);

  if (options_.critical_path && best_rank >= 0) {
    int r = best_rank;
    uint32_t i = best_op;
    while (i != kNone) {
      const RankState& st = ranks[r];
      const RankGraph& g = w.ranks[r];
      const Op& op = g.ops[i];
      out.critical_path.push_back({r, i, st.start[i], st.end[i]});
      const Time d = st.end[i] - st.start[i];
      if (op.stream == Stream::host) {
        out.critical_split.host += d;  // the GPU waits on the host
      } else if (op.kind == OpKind::compute) {
        out.critical_split.compute += d;
      } else if (op.kind != OpKind::recv) {
        out.critical_split.exposed[static_cast<int>(category_of(op.stream))] += d;
      }
      // The predecessor is whichever input finished last: a dependency, the previous op on the
      // same stream, or (for a receive) the matching send on another rank.
      int nr = r;
      uint32_t ni = kNone;
      Time latest = Time::ps(-1);
      for (uint32_t k = 0; k < op.dep_count; ++k) {
        const uint32_t dj = g.deps[op.dep_begin + k];
        if (st.end[dj] > latest) { latest = st.end[dj]; ni = dj; nr = r; }
      }
      if (st.prev_in_stream[i] != kNone && st.end[st.prev_in_stream[i]] > latest) {
        latest = st.end[st.prev_in_stream[i]];
        ni = st.prev_in_stream[i];
        nr = r;
      }
      if (op.kind == OpKind::recv && op.peer_rank >= 0 && op.peer_op >= 0) {
        const Time se = ranks[op.peer_rank].end[op.peer_op];
        if (se >= latest) { latest = se; ni = static_cast<uint32_t>(op.peer_op); nr = op.peer_rank; }
      }
      if (ni != kNone && latest < st.start[i]) out.critical_split.bubble += st.start[i] - latest;
      r = nr;
      i = ni;
    }
    std::reverse(out.critical_path.begin(), out.critical_path.end());
  }

  if (options_.record_ops) {
    out.op_times.resize(ranks.size());
    for (size_t r = 0; r < ranks.size(); ++r) {
      auto& v = out.op_times[r];
      v.reserve(ranks[r].start.size());
      for (size_t i = 0; i < ranks[r].start.size(); ++i) v.emplace_back(ranks[r].start[i], ranks[r].end[i]);
    }
  }
  return out;
}

}  // namespace dtsim::workloads
