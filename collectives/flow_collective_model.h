// FlowCollectiveModel: prices a collective on the routed cluster graph with max-min fair flows,
// for workloads (training, traces) run under `network.model: flow`. The tuner's algorithm is
// lowered to its point-to-point transfers (the cheaper of ring and tree where the tuner's choice,
// NVLS, CollNet or PAT, has no lowering), the transfers are summed per (sender, receiver,
// channel) into one flow each, and every flow is routed (ECMP by channel; under adaptive routing
// sprayed as sub-flows over equal-cost routes, sharing the channel's cap) and given its max-min
// fair rate among all of them at once: NCCL's rings and trees keep every edge busy for the whole
// collective, so the slowest flow sets the bandwidth term. Link capacities are scaled by the same
// efficiencies the analytical model uses, each channel is capped at its channel bandwidth and the
// protocol's payload fraction applies; latency and pipeline fill stay the analytical model's.
//
// Symmetry: a training graph simulates one GPU per pipeline stage, so when its data-parallel
// group all-reduces, the groups of every other GPU of the same nodes do too. The flows of those
// sibling groups (the communicator shifted within each node onto GPUs it does not use) are
// solved together with the communicator's own, which is what makes them share NICs and leaf
// uplinks. Collectives of different kinds in flight at the same time (a TP reduce-scatter beside
// a DP all-gather) are priced apart.
//
// Background (`job_gpus`): a job on the first job_gpus GPUs of a larger cluster may have
// neighbours. With job_gpus > 0, the GPUs beyond the job run copies of it (replica_shifts,
// schedule.h: node-aligned, as many whole copies as fit), and each copy's collective runs at the
// same moment as the job's: a communicator spanning nodes is priced with its copies' flows (and
// their siblings') too, so they contend where they share switches and uplinks. Everyone's
// traffic peaks together: the pessimistic neighbourhood.
//
// Distinct (collective, size, communicator) prices are cached; prepare() prices a workload's distinct collectives on `threads` threads at once, each on its
// own flow set and solver, so the prices do not depend on the thread count.
//   FlowCollectiveModel model(scenario.cluster, scenario.collectives, ModelParameters{});
//   CollectiveEstimate e = model.estimate(CollectiveKind::all_reduce, Bytes::mib(64), comm);
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collectives/analytical_model.h"
#include "network/flow/max_min_solver.h"
#include "network/network_model.h"
#include "topology/cluster.h"

namespace dtsim::collectives {

// The share of line rate each kind of link carries for NCCL's traffic: NVLink at
// nvlink_efficiency, network links at the NIC kind's net_efficiency. PCIe stays at line rate:
// GPUDirect RDMA reaches the NIC's rate through it (a GPU-GPU peer copy's own limit,
// pcie_efficiency, is a cap on that copy, not on the link).
network::LinkEfficiency link_efficiency(const ModelParameters& params, topology::NicKind nic);

// Bytes per second on the wire one channel of `algo` moves at most, as the closed form caps a
// ring's: channel_bandwidth, or LL's rate inside a node or across it (channel_rate), times
// `cap_scale` (the tuned channels over the channels the lowering runs) over the protocol's
// payload fraction, as LL's flags ride beside its data. NVLS-tree: infinity (its rate is NVLS's
// or the network's, nvls_tree_cost). Trees take the ring's figure, not the closed form's
// tree_channel_bandwidth: in a sweep their store-and-forward slices would pay it on every hop.
double flow_channel_cap(const ModelParameters& p, Algorithm algo, Protocol protocol,
                        bool spans_nodes, double cap_scale);

// Whether `kind` run with `algo` copies pair by pair at the send/recv rate (send_recv, and each
// round of hypercube): flow_p2p_cap then caps its transfers.
bool copies_pairwise(Algorithm algo, CollectiveKind kind);
// Bytes per second on the wire one channel of such a copy moves at most: the closed form's
// send/recv rate over the scale-up fabric (the pair's link rate x p2p_efficiency, a copy
// kernel's), shared by the `lowered_channels` channels its transfers run on. Flows would otherwise
// run a GPU pair at the link's whole NCCL rate, a ring's. Across nodes the NIC binds well below it.
double flow_p2p_cap(const HardwareView& hw, const CommShape& shape, int lowered_channels);

// True when `algo` has a transfer-level schedule (schedule.h) for `kind`.
bool has_flow_lowering(Algorithm algo, CollectiveKind kind);

// How a collective runs as flows: the tuner's algorithm and protocol when the algorithm has a
// lowering, else the cheapest (by the analytical price) of ring and tree with any protocol that
// can run it: an NVLS or CollNet size falls back to what NCCL would run without the switch, LL
// at small sizes included, not to the switch algorithm's Simple.
struct FlowChoice {
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
};
FlowChoice flow_choice(const AnalyticalCollectiveModel& model, CollectiveKind kind, Bytes bytes,
                       const Communicator& comm, const CollectiveEstimate& tuned);

// The communicator and its siblings: copies shifted within each node onto GPUs none of the
// others use, until the nodes it spans are full (one group per GPU of the first node it uses).
std::vector<Communicator> sibling_groups(const Communicator& comm, int gpus_per_node, int gpu_count);

// What prepare() throws when its on_priced hook stopped it: how many of its distinct collectives
// were priced.
class PricingStopped : public std::runtime_error {
 public:
  PricingStopped(size_t priced, size_t total)
      : std::runtime_error("pricing stopped after " + std::to_string(priced) + " of " + std::to_string(total) +
                           " distinct collectives"),
        priced_(priced),
        total_(total) {}
  size_t priced() const { return priced_; }
  size_t total() const { return total_; }

 private:
  size_t priced_;
  size_t total_;
};

class FlowCollectiveModel final : public CollectiveCostModel {
 public:
  // Builds the cluster graph (InputError when the fabric cannot hold the nodes). `accelerator`
  // solves large flow sets (gpu_accel::make_cuda_max_min_solver()), one at a time; null: the CPU
  // solver. prepare() prices on `threads` threads (0: all cores). `job_gpus` > 0: the job's GPUs,
  // the first of the cluster; the rest run copies of it (background, above). 0: no neighbours.
  FlowCollectiveModel(const topology::ClusterSpec& spec, const CollectiveOptions& options,
                      const ModelParameters& params,
                      std::shared_ptr<network::flow::FlowSolver> accelerator = nullptr,
                      int threads = 1, int job_gpus = 0);

  CollectiveEstimate estimate(CollectiveKind kind, Bytes bytes, const Communicator& comm) const override;
  void prepare(std::span<const CollectiveQuery> collectives) const override;

  // The bandwidth term alone (seconds): the slowest flow of the lowered schedule and its
  // siblings' at their max-min fair rates. For tests and reports.
  double bandwidth_seconds(Algorithm algo, CollectiveKind kind, Bytes bytes, const Communicator& comm,
                           Protocol protocol, int channels) const;

  // The bytes each link carries while this collective runs as estimate() prices it: its flows and
  // its sibling groups' (sibling_groups), by link, in link order. Empty for one rank or no bytes.
  // For the per-link table of a training run on flows.
  std::vector<std::pair<topology::LinkId, double>> link_bytes(CollectiveKind kind, Bytes bytes,
                                                               const Communicator& comm) const;

  const AnalyticalCollectiveModel& analytical() const { return analytical_; }
  int threads() const { return threads_; }
  // Called from prepare()'s threads as it prices: once with (0, total) before the first, then
  // (done, total) after each distinct collective (a progress bar for a long run). Returning
  // false stops the pricing: the collectives not begun are left, and prepare() throws
  // PricingStopped once those running have finished. Null: none.
  using OnPriced = std::function<bool(size_t done, size_t total)>;
  void set_on_priced(OnPriced on_priced) { on_priced_ = std::move(on_priced); }
  // The most transfers one collective's lowering may hold while it is priced (ScheduleBudget):
  // past it, pricing throws ScheduleTooLarge instead of exhausting memory. Default: no limit.
  void set_max_transfers(uint64_t max_transfers) { max_transfers_ = max_transfers; }
  // How many copies of the job run beside it (background); 0 without.
  int neighbour_copies() const { return static_cast<int>(replica_shifts_.size()); }
  // Max-min problems solved so far (one a distinct collective priced), and the flows in them.
  uint64_t solves() const { return solves_; }
  uint64_t flows() const { return flows_; }
  const topology::Cluster& cluster() const { return *cluster_; }

 private:
  // A collective's flows: one per (sender, receiver, channel) of it and its sibling groups, with
  // the bytes it moves and its routed path, or with adaptive routing (network::transfer_paths)
  // one sub-flow per sprayed route with an equal share of the bytes, and the channels the lowering
  // runs (a ring or tree spread over the NICs runs more than were tuned).
  struct FlowSet {
    std::vector<double> bytes;
    std::vector<topology::LinkId> links;  // every flow's route, one after another
    std::vector<size_t> first{0};         // flow f's route is links[first[f], first[f + 1])
    std::vector<int64_t> staged_pair;  // src * gpus + dst of a host-staged copy in one node, else -1
    std::vector<uint32_t> origin;      // the (sender, receiver, channel) flow it is (a share of)
    std::vector<double> weight;        // 1 / that flow's sub-flows: the flow gets one share in all
    int lowered_channels = 1;

    size_t size() const { return bytes.size(); }
    std::span<const topology::LinkId> path(size_t f) const {
      return std::span<const topology::LinkId>(links).subspan(first[f], first[f + 1] - first[f]);
    }
  };
  FlowSet flow_set(Algorithm algo, CollectiveKind kind, Bytes bytes, const Communicator& comm, int channels) const;
  // estimate() without the cache.
  CollectiveEstimate price(CollectiveKind kind, Bytes bytes, const Communicator& comm) const;

  using CacheKey = std::tuple<int, int64_t, std::vector<int>>;  // (kind, bytes, ranks)
  static CacheKey cache_key(CollectiveKind kind, Bytes bytes, const Communicator& comm);

  topology::ClusterSpec spec_;
  AnalyticalCollectiveModel analytical_;
  std::unique_ptr<topology::Cluster> cluster_;
  std::shared_ptr<network::flow::FlowSolver> accelerator_;
  int threads_ = 1;
  OnPriced on_priced_;
  uint64_t max_transfers_ = UINT64_MAX;
  std::vector<int> replica_shifts_;    // where the job's copies sit (background)
  std::vector<double> link_capacity_;  // bytes/s after the link class's efficiency
  mutable std::atomic<uint64_t> solves_{0};  // max-min problems solved (one a distinct collective)
  mutable std::atomic<uint64_t> flows_{0};   // flows in them
  mutable std::mutex accelerator_mutex_;  // the accelerator solves one problem at a time
  mutable std::mutex mutex_;              // guards the cache
  mutable std::map<CacheKey, CollectiveEstimate> cache_;
};

}  // namespace dtsim::collectives
