// FlowCollectiveModel: prices a collective on the routed cluster graph with max-min fair flows,
// for workloads (training, traces) run under `network.model: flow` with `network.execution:
// per_collective`. It prices by the one policy every run on flows shares (plan_on_network,
// network_plan.h, coalesced as online execution plans it): the collective's schedule runs,
// together with its sibling groups' copies, on an idle FlowNetworkModel, and takes as long as the
// last of them, or the plan's floor. So a collective priced here costs what the same collective
// costs online where nothing is in flight beside it but its siblings.
//
// Symmetry: a training graph simulates one GPU per pipeline stage, so when its data-parallel
// group all-reduces, the groups of every other GPU of the same nodes do too. Their schedules
// (the communicator's, shifted within each node onto GPUs it does not use) run beside its own,
// which is what makes them share NICs and leaf uplinks. Collectives of different kinds in flight
// at the same time (a TP reduce-scatter beside a DP all-gather) are priced apart.
//
// Background (`job_gpus`): a job on the first job_gpus GPUs of a larger cluster may have
// neighbours. With job_gpus > 0, the GPUs beyond the job run copies of it (replica_shifts,
// schedule.h: node-aligned, as many whole copies as fit), and each copy's collective runs at the
// same moment as the job's: a communicator spanning nodes is priced with its copies' schedules
// (and their siblings') too, so they contend where they share switches and uplinks. Everyone's
// traffic peaks together: the pessimistic neighbourhood.
//
// Distinct (collective, size, communicator) prices are cached; prepare() prices a workload's
// distinct collectives on `threads` threads at once, each on its own network model, so the prices
// do not depend on the thread count.
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
#include "collectives/network_plan.h"
#include "collectives/schedule.h"
#include "network/flow/flow_model.h"
#include "network/network_model.h"
#include "topology/cluster.h"

namespace dtsim::collectives {

// The share of line rate each kind of link carries for NCCL's traffic: NVLink at
// nvlink_efficiency, network links at the NIC kind's net_efficiency. PCIe stays at line rate:
// GPUDirect RDMA reaches the NIC's rate through it (a GPU-GPU peer copy's own limit,
// pcie_efficiency, is a cap on that copy, not on the link).
network::LinkEfficiency link_efficiency(const ModelParameters& params, topology::NicKind nic);

// The options a FlowNetworkModel moves NCCL's traffic with: links at link_efficiency, a GPU pair
// without peer access at the closed form's host-staged rate, PCIe peer copies at pcie_efficiency
// of their slowest PCIe link (the closed form's in-node PCIe rate).
network::FlowModelOptions flow_model_options(const AnalyticalCollectiveModel& model, topology::NicKind nic);

// Bytes per second on the wire one channel of `algo` moves at most, as the closed form caps a
// ring's: channel_bandwidth, or LL's rate inside a node or across it (channel_rate), times
// `cap_scale` (the tuned channels over the channels the lowering runs) over the protocol's
// payload fraction, as LL's flags ride beside its data. NVLS-tree: infinity (its rate is NVLS's
// or the network's, nvls_tree_cost). Trees take the ring's figure, not the closed form's
// tree_channel_bandwidth: in a sweep their store-and-forward slices would pay it on every hop.
double flow_channel_cap(const ModelParameters& p, Algorithm algo, Protocol protocol,
                        bool spans_nodes, int compute_capability, double cap_scale);

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
  // solves large flow sets (gpu_accel::make_cuda_max_min_solver()), one collective at a time;
  // null: the CPU solver. prepare() prices on `threads` threads (0: all cores). `job_gpus` > 0:
  // the job's GPUs, the first of the cluster; the rest run copies of it (background, above). 0:
  // no neighbours. `completion_window`, `completion_precision`: the flow model's
  // (FlowModelOptions).
  FlowCollectiveModel(const topology::ClusterSpec& spec, const CollectiveOptions& options,
                      const ModelParameters& params,
                      std::shared_ptr<network::flow::FlowSolver> accelerator = nullptr,
                      int threads = 1, int job_gpus = 0,
                      Time completion_window = network::kDefaultCompletionWindow,
                      double completion_precision = network::kDefaultCompletionPrecision);

  CollectiveEstimate estimate(CollectiveKind kind, Bytes bytes, const Communicator& comm) const override;
  void prepare(std::span<const CollectiveQuery> collectives) const override;

  // The schedule estimate() runs: the plan's for `comm`, then each sibling group's and neighbour
  // copy's, the same transfers on their GPUs (position i of the communicator maps to position i
  // of the group). NVLS, which keeps the closed form's price, is lowered here as the ring or tree
  // flow_choice gives. Empty for one rank or no bytes.
  Schedule priced_schedule(CollectiveKind kind, Bytes bytes, const Communicator& comm) const;

  // The bytes each link carries while this collective runs as estimate() prices it: its
  // priced_schedule's transfers on their routes (sprayed shares on theirs), on the wire (each
  // protocol's line format), by link, in link order. For the per-link table of a training run on
  // flows.
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
  // Max-min problems solved so far, and the flows those solves covered, summed.
  uint64_t solves() const { return solves_; }
  uint64_t flows() const { return flows_; }
  const topology::Cluster& cluster() const { return *cluster_; }

 private:
  // The plan estimate() runs for `comm` alone, with `tuned` the tuner's choice.
  NetworkPlan plan(CollectiveKind kind, Bytes bytes, const Communicator& comm, const CollectiveEstimate& tuned) const;
  // `plan`'s schedule, then each sibling group's and neighbour copy's copy of it.
  Schedule with_groups(const Schedule& own, const Communicator& comm) const;
  // `comm` and the sibling groups (and the job's copies' groups) that run beside it.
  std::vector<Communicator> groups_of(const Communicator& comm) const;
  Schedule with_groups(const Schedule& own, const Communicator& comm, const std::vector<Communicator>& groups) const;
  // estimate() without the cache.
  CollectiveEstimate price(CollectiveKind kind, Bytes bytes, const Communicator& comm) const;

  using CacheKey = std::tuple<int, int64_t, std::vector<int>>;  // (kind, bytes, ranks)
  static CacheKey cache_key(CollectiveKind kind, Bytes bytes, const Communicator& comm);

  AnalyticalCollectiveModel analytical_;
  std::unique_ptr<topology::Cluster> cluster_;
  std::shared_ptr<network::flow::FlowSolver> accelerator_;
  int threads_ = 1;
  OnPriced on_priced_;
  uint64_t max_transfers_ = UINT64_MAX;
  std::vector<int> replica_shifts_;  // where the job's copies sit (background)
  network::FlowModelOptions flow_options_;
  mutable std::atomic<uint64_t> solves_{0};  // max-min problems solved
  mutable std::atomic<uint64_t> flows_{0};   // flows those solves covered
  mutable std::mutex accelerator_mutex_;     // the accelerator runs one collective at a time
  mutable std::mutex mutex_;                 // guards the cache
  mutable std::map<CacheKey, CollectiveEstimate> cache_;
};

}  // namespace dtsim::collectives
