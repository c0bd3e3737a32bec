#include "runner/scenario_runner.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "runner/progress.h"
#include "collectives/analytical_model.h"
#include "collectives/flow_collective_model.h"
#include "collectives/model_parameters.h"
#include "collectives/network_plan.h"
#include "collectives/schedule.h"
#include "collectives/schedule_executor.h"
#include "collectives/tuner.h"
#include "config/enum_names.h"
#include "config/loader.h"
#include "network/flow/flow_model.h"
#include "network/link_ledger.h"
#include "network/packet/packet_model.h"
#include "network/packet/partition.h"
#include "report/chrome_trace.h"
#include "report/collective_sweep_writer.h"
#include "report/html_report.h"
#include "report/jobs_writer.h"
#include "report/svg_plot.h"
#include "report/training_writer.h"
#include "sim/engine.h"
#include "sim/error.h"
#include "sim/parallel_rows.h"
#include "sim/partitioned_engine.h"
#include "sim/run_watch.h"
#include "topology/catalog.h"
#include "topology/cluster.h"
#include "topology/describe.h"
#include "workloads/advice.h"
#include "workloads/chakra_trace.h"
#include "workloads/collective_sweep.h"
#include "workloads/compute_model.h"
#include "workloads/dlrm_generator.h"
#include "workloads/online_network.h"
#include "workloads/training.h"

#ifdef DTSIM_HAVE_CUDA_SOLVER
#include "gpu_accel/cuda_max_min_solver.h"
#endif

namespace dtsim::runner {
namespace {

SourceLocation where(const config::Scenario& s) { return SourceLocation{s.source_file, 0, 0}; }

// The most packet hops a packet-model sweep may cost (about two engine events each): about a
// minute on one core at the speed measured in bench/network.md.
constexpr uint64_t kMaxPacketHops = 300'000'000;

// A file a scenario names (its calibration, its traces): a relative path is relative to the
// scenario file, so a scenario and the files it names move together.
std::string beside_scenario(const config::Scenario& s, const std::string& name) {
  std::filesystem::path path = name;
  if (path.is_relative() && !s.source_file.empty()) {
    path = std::filesystem::path(s.source_file).parent_path() / path;
  }
  return path.lexically_normal().string();
}

collectives::ModelParameters model_parameters(const config::Scenario& s) {
  if (!s.calibration) return collectives::ModelParameters{};
  return collectives::load_calibration(beside_scenario(s, *s.calibration));
}

// The packet model runs collective sweeps only, with the options it models (docs/packet-model.md).
void require_supported_model(const config::Scenario& s) {
  // The closed form prices a node and a fabric from the spec's figures; a whole-graph topology
  // file's links between nodes are not among them.
  if (s.network.model == config::NetworkModelKind::analytical && s.cluster.uses_topology_file() &&
      !s.cluster.topology_file->ends_with(".xml")) {
    throw InputError(where(s), "network.model",
                     "the analytical model prices the fabric from cluster.fabric and cannot follow the links of a "
                     "whole-graph topology file (" + *s.cluster.topology_file + "); use flow or packet");
  }
  if (s.network.model != config::NetworkModelKind::packet) return;
  const config::PacketSpec& p = s.network.packet;
  if (!p.pfc && s.cluster.nic.kind != topology::NicKind::infiniband && p.flow_control != network::FlowControl::lossy) {
    throw InputError(where(s), "network.packet.pfc",
                     "a lossy fabric (drops and go-back-N retransmission) runs with network.packet.flow_control: "
                     "lossy; with credits or pfc the packet model is lossless, expected true");
  }
  if (!p.pfc && p.flow_control == network::FlowControl::pfc) {
    throw InputError(where(s), "network.packet.flow_control",
                     "pfc runs priority flow control, which network.packet.pfc: false turns off; expected credits");
  }
}

#ifdef DTSIM_HAVE_CUDA_SOLVER
// The CUDA solver, started at its first solve: finding the GPU and creating a context costs a
// run a few hundred milliseconds, which runs whose problems all stay under
// kAcceleratorMinFlows should not pay. Without a GPU it solves on the CPU.
class LazyCudaSolver final : public network::flow::FlowSolver {
 public:
  std::string_view name() const override { return solver_ ? solver_->name() : cpu_.name(); }
  void solve(const network::flow::FlowProblem& p, std::span<double> rates) override {
    if (!started_) {
      solver_ = gpu_accel::make_cuda_max_min_solver();
      started_ = true;
    }
    if (solver_) {
      solver_->solve(p, rates);
    } else {
      cpu_.solve(p, rates);
    }
  }

 private:
  bool started_ = false;
  std::unique_ptr<network::flow::FlowSolver> solver_;
  network::flow::CpuMaxMinSolver cpu_;
};
#endif

std::shared_ptr<network::flow::FlowSolver> flow_accelerator() {
#ifdef DTSIM_HAVE_CUDA_SOLVER
  return std::make_shared<LazyCudaSolver>();
#else
  return nullptr;
#endif
}

// The schedule a sweep row runs on a flow or packet network (plan_on_network, network_plan.h), its
// floor raised to the host's launches (workload.gpus_per_thread): one host thread launching on
// several GPUs (nccl-tests -g) holds every model to it.
using SweepPlan = collectives::NetworkPlan;
SweepPlan plan_row(const config::Scenario& s, const collectives::AnalyticalCollectiveModel& model,
                   const topology::Cluster& cluster, const workloads::SweepRow& row) {
  collectives::Communicator comm;
  for (int r = 0; r < row.ranks; ++r) comm.ranks.push_back(r);
  collectives::CollectiveEstimate tuned;
  tuned.algorithm = row.algorithm;
  tuned.protocol = row.protocol;
  tuned.channels = row.channels;
  tuned.time = row.time;
  SweepPlan plan = collectives::plan_on_network(model, cluster, s.workload.sweep.collective, row.bytes, comm, tuned);
  const Time launches = workloads::host_launch_floor(s.workload.sweep.gpus_per_thread, model.parameters(), s.cluster.gpu);
  if (launches > plan.floor) plan.floor = launches, plan.floor_from = "the host thread's launches (workload.gpus_per_thread)";
  return plan;
}

// Where copies of a sweep row's `ranks` run beside them (network.background: replicas); none
// without.
std::vector<int> neighbour_shifts(const config::Scenario& s, int ranks, int gpu_count) {
  if (s.network.background != config::Background::replicas) return {};
  return collectives::replica_shifts(ranks, s.cluster.gpus_per_node, gpu_count);
}

// Makes the network model a sweep row runs on: every row gets its own, as it gets its own engine.
using RowNetwork = std::function<std::unique_ptr<network::NetworkModel>()>;

// What a run did, for --stats: engine events, and what the network models did.
struct RunStats {
  uint64_t events = 0;
  network::NetworkCounters net;
  uint64_t unpartitioned_rows = 0;  // with --partitions: rows whose schedule could not be cut
  RunStats& operator+=(const RunStats& o) {
    events += o.events;
    net += o.net;
    unpartitioned_rows += o.unpartitioned_rows;
    return *this;
  }
};

// The flow or packet models' part of a sweep run: the rows' fingerprints combined, and their
// stats; `stopped` says what a wall-clock limit left undone (empty when every row ran).
struct NetworkRun {
  uint64_t fingerprint = sim::kEmptyFingerprint;
  RunStats stats;
  std::string stopped;
};

// A collective sweep's rows and its fingerprint: the analytical sweep's one engine's, or the flow
// and packet models' rows' engines' combined (run_sweep_on_network).
struct SweepRun : NetworkRun {
  std::vector<workloads::SweepRow> rows;
};

// How a run on flows or packets goes: on `threads` workers (0: all cores); with a progress bar on
// a terminal and its cost stated on stderr unless `quiet`; stopped when `deadline` (null: none)
// passes; refused before it would hold more than `max_memory_bytes` (0: the machine's available
// memory).
struct RunControl {
  int threads = 0;
  int partitions = 1;  // a packet sweep row's partitions (sim/partitioned_engine.h); 1: a plain Engine
  bool quiet = true;
  sim::WallDeadline* deadline = nullptr;
  double max_memory_bytes = 0;
};

// What one sweep row's run leaves besides the row itself: its bytes per link (with `links`), its
// engine's fingerprint and what the run did; `complete` is false when the run's wall-clock limit
// stopped it (`started`: it had begun), with the simulated time it reached and the share of its
// bytes delivered by then.
struct RowRun {
  std::vector<network::LinkLoad> links;
  uint64_t fingerprint = sim::kEmptyFingerprint;
  RunStats stats;
  bool complete = true;
  bool started = true;
  Time reached;
  double delivered = 0;
};

// What watches a sweep's rows while they run: the progress bar, which counts rows and moves by
// the thousandths of each row's bytes delivered, and the run's wall-clock limit (--max-wall).
struct RowControl {
  Progress& progress;
  sim::WallDeadline& deadline;
  int partitions = 1;
};
inline constexpr int64_t kRowUnits = 1000;

// Watches one row's engine: at each clock read it moves the bar by the share of the row's bytes
// delivered (copies of the row, network.background: replicas, included) and notes the simulated
// time reached, and it stops the engine once the run's wall-clock limit has passed.
class RowWatch final : public sim::EngineWatch {
 public:
  RowWatch(RowControl control, const network::NetworkModel& net, double total_bytes)
      : control_(control), net_(net), total_bytes_(total_bytes) {}
  // Called after every event: a counter increment but at the clock's reads.
  bool keep_running(const sim::Engine& engine) override { return clock_.skip() || at_clock_read(engine, clock_.read()); }
  // The share of the row's bytes delivered so far.
  double delivered() const {
    return total_bytes_ > 0 ? std::min(1.0, net_.bytes_delivered().as_double() / total_bytes_) : 1.0;
  }
  // Moves the bar to `units` thousandths of the row (never back).
  void advance_to(int64_t units) {
    if (units <= reported_) return;
    control_.progress.advance(units - reported_);
    reported_ = units;
  }

 private:
  // Out of line, so that keep_running's frame stays a counter's.
  [[gnu::noinline]] bool at_clock_read(const sim::Engine& engine, sim::WallClock::time_point now) {
    advance_to(static_cast<int64_t>(delivered() * kRowUnits));
    control_.progress.set_note(fmt::format("{:.4g} us simulated, {} events", engine.now().us(),
                                           engine.events_executed()));
    return !control_.deadline.passed(now);
  }

  RowControl control_;
  const network::NetworkModel& net_;
  double total_bytes_;
  sim::ClockSampler clock_;
  int64_t reported_ = 0;
};

// Runs one row's schedule on a fresh engine and network model from `make_net` and fills in the
// row's time and bandwidths from when its last transfer lands.
RowRun run_row(const config::Scenario& s, const SweepPlan& plan, workloads::SweepRow& row, const RowNetwork& make_net,
               const topology::Cluster& cluster, bool links, RowControl control) {
  if (plan.closed_form) {
    row.floor_from = "NVLS inside one NVLink domain, priced in closed form";
    control.progress.advance(kRowUnits);
    return {};
  }
  if (control.deadline.expired()) {
    RowRun skipped;
    skipped.complete = skipped.started = false;
    return skipped;
  }
  const std::unique_ptr<network::NetworkModel> model_net = make_net();
  std::optional<network::LinkLedger> ledger;
  if (links) ledger.emplace(cluster, *model_net);
  network::NetworkModel& net = ledger ? static_cast<network::NetworkModel&>(*ledger) : *model_net;
  const collectives::ExecutorOptions launch = collectives::executor_options(plan);
  collectives::ScheduleExecutor exec(plan.schedule, net, launch);
  // With network.background: replicas, copies of the row's communicator on the GPUs after it run
  // the same schedule at the same moment, on the same network; the row times its own.
  std::vector<collectives::Schedule> copies;
  for (const int shift : neighbour_shifts(s, row.ranks, cluster.gpu_count()))
    copies.push_back(collectives::shifted(plan.schedule, shift));
  std::vector<std::unique_ptr<collectives::ScheduleExecutor>> neighbours;
  for (const collectives::Schedule& copy : copies)
    neighbours.push_back(std::make_unique<collectives::ScheduleExecutor>(copy, net, launch));
  double total_bytes = 0;
  for (const auto& t : plan.schedule.transfers()) total_bytes += t.bytes.as_double();
  RowWatch watch(control, net, total_bytes * static_cast<double>(1 + copies.size()));
  // On packets with partitions, the row runs on a partitioned engine cut by node blocks
  // (network/packet/partition.h); its events, times and fingerprint are the plain engine's.
  auto* packet_net = dynamic_cast<network::PacketNetworkModel*>(model_net.get());
  std::unique_ptr<sim::PartitionedEngine> engines;
  sim::Engine plain;
  RowRun run;
  if (packet_net != nullptr && control.partitions > 1) {
    const network::ClusterPartition cut =
        network::partition_cluster(cluster, static_cast<uint32_t>(control.partitions));
    // A schedule whose senders wait on their own sends landing on another node (trees) hands
    // work across the cut without a message; such a row runs on one thread, with the same result.
    bool local = exec.hands_off_within(cut.of_gpu);
    for (const auto& n : neighbours) local = local && n->hands_off_within(cut.of_gpu);
    if (local) {
      packet_net->set_partitions(cut.partitions);
      if (ledger) ledger->set_partitions(cut.partitions);
      engines = std::make_unique<sim::PartitionedEngine>(cut.owner, cut.lookahead);
      engines->set_watch(&watch);
    } else {
      run.stats.unpartitioned_rows = 1;
    }
  }
  if (!engines) plain.set_watch(&watch);
  sim::Engine& setup = engines ? engines->engine_of(0) : plain;
  exec.start(setup);
  for (auto& n : neighbours) n->start(setup);
  if (engines) {
    engines->run();
  } else {
    plain.run();
  }
  run.stats.events = engines ? engines->events_executed() : plain.events_executed();
  run.stats.net = net.counters();
  if (!exec.done() && control.deadline.expired()) {
    run.complete = false;
    run.reached = engines ? engines->now() : plain.now();
    run.delivered = watch.delivered();
    return run;
  }
  watch.advance_to(kRowUnits);
  const auto kind = s.workload.sweep.collective;
  // A lossless packet fabric whose buffers wait on each other in a cycle never drains.
  if (net.name() == "packet" && !exec.done()) {
    throw std::runtime_error(fmt::format("{} model: the {} schedule at {} bytes did not complete",
                                         net.name(), collectives::name(kind), row.bytes.count()));
  }
  row.algorithm = plan.algorithm;
  row.protocol = plan.protocol;
  row.neighbour_copies = static_cast<int>(copies.size());
  row.network_time = exec.finish_time() - exec.start_time();
  row.time = std::max(row.network_time, plan.floor);
  if (plan.floor > row.network_time) row.floor_from = plan.floor_from;
  row.algbw_gbytes = row.time.ps() > 0 ? row.bytes.as_double() / row.time.seconds() * 1e-9 : 0;
  row.busbw_gbytes = row.algbw_gbytes * collectives::busbw_factor(kind, row.ranks);
  if (ledger) run.links = ledger->loads(row.time);
  run.fingerprint = engines ? engines->fingerprint() : plain.fingerprint();
  return run;
}

// What a sweep on flows or packets holds in memory, bounds from measured peaks (bench/README.md,
// "Memory of a sweep"). Counted exactly: every planned schedule, held from planning to the end of
// the run, and while a row runs its executors' state and its copies' schedules. Bounded: per
// transfer in flight, the network model's state, a transfer's flows (one per route; adaptive
// routing sprays a transfer over several) or its packet-level record with its routes and packets;
// the router's plan per pair of GPUs and each route it keeps; the program itself with its
// libraries and a small cluster's graph, a 2 MiB huge page more, by which a heap of huge pages
// (apps/command_main.h) can outgrow what it holds, and another for the flow model's per-slot
// tables, which take 2 MiB blocks once large (sim/block_arena.h).
// `kScheduleBytesPerTransfer` sizes the planning budget only: planning stops before schedules of
// that size would exhaust the machine.
constexpr double kScheduleBytesPerTransfer = 64;
constexpr double kFlowBytesInFlight = 408;    // and per route:
constexpr double kFlowBytesPerRoute = 320;
constexpr double kPacketBytesInFlight = 656;  // and per route: kRouteBytes
constexpr double kPlanBytes = 640;
constexpr double kRouteBytes = 128;
constexpr double kProgramBytes = 20.0 * 1024 * 1024;

// The memory this machine has available now (MemAvailable), else its physical memory.
double available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
}

// The memory a run may hold: --max-memory, else what the machine has available; `allows` names
// it as the refusal quotes it, `allowed` as the stated cost does.
struct MemoryLimit {
  double bytes = 0;
  std::string_view allows;
  std::string_view allowed;
};
MemoryLimit memory_limit(const RunControl& control) {
  if (control.max_memory_bytes > 0) return {control.max_memory_bytes, "--max-memory allows", "allowed"};
  return {available_memory_bytes(), "this machine has available", "available"};
}

std::string memory_size(double bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  if (bytes < kMiB) return fmt::format("{:.3g} KiB", bytes / 1024);
  if (bytes < 1024 * kMiB) return fmt::format("{:.3g} MiB", bytes / kMiB);
  return fmt::format("{:.3g} GiB", bytes / (1024 * kMiB));
}

// A sweep's rows planned before any of them runs, and what running them costs: transfers over
// every row (copies of the communicator, network.background: replicas, included), the largest
// row's, the packet hops on packets, and the memory the run holds.
struct SweepCost {
  std::vector<SweepPlan> plans;  // every row's, or fewer where the wall-clock limit stopped the planning
  uint64_t transfers = 0;
  uint64_t largest_row = 0;
  uint64_t packet_hops = 0;
  double memory_bytes = 0;
};

// What running one row of a sweep costs, its `copies` (network.background: replicas) included:
// the packet hops, the router's plans and routes (bytes it keeps for the rest of the sweep), and
// the bytes the row holds while it runs besides its planned schedule.
struct RowCost {
  uint64_t packet_hops = 0;
  double router_bytes = 0;
  double run_bytes = 0;
};
RowCost cost_of_row(const collectives::Schedule& schedule, const topology::Cluster& cluster, uint64_t copies,
                    bool on_packets, Bytes mtu) {
  // Each pair of GPUs the row sends between, routed once: its route's length and latency
  // (equal-cost routes are alike in both), and how many transfers it carries.
  struct PairUse {
    uint64_t transfers = 0;
    size_t hops = 0;
    Time latency;
  };
  std::unordered_map<uint64_t, PairUse> pairs;
  RowCost cost;
  for (const auto& t : schedule.transfers()) {
    if (t.src_gpu == t.dst_gpu) continue;
    const uint64_t key = (uint64_t{static_cast<uint32_t>(t.src_gpu)} << 32) | static_cast<uint32_t>(t.dst_gpu);
    auto [it, added] = pairs.try_emplace(key);
    PairUse& use = it->second;
    if (added) {
      const std::vector<topology::LinkId> route = cluster.route(t.src_gpu, t.dst_gpu);
      use.hops = route.size();
      use.latency = network::route_latency(cluster, route);
    }
    ++use.transfers;
    // Copies of the row's communicator run as many transfers and hops, routed alike.
    if (on_packets) cost.packet_hops += copies * network::PacketNetworkModel::packet_hops(t.bytes, use.hops, mtu);
  }
  // The router keeps a plan per pair and each route a transfer took: at most the routes of every
  // transfer (several where adaptive routing sprays it) and no more than the pair has. A
  // packet-level transfer's record is kept until its acknowledgement has come back, its route's
  // latency after it landed: the shortest and longest routes bound how many land meanwhile.
  Time shortest = Time::max();
  Time longest;
  uint64_t spray = 1;  // the most routes a transfer of the row takes
  double routes = 0;
  for (const auto& [key, use] : pairs) {
    const int src = static_cast<int>(key >> 32);
    const int dst = static_cast<int>(key & 0xffffffffu);
    const uint64_t paths = cluster.path_count(src, dst);
    const uint64_t per_transfer =
        network::sprayed(cluster, src, dst) ? std::min<uint64_t>(topology::kSprayRoutes, paths) : 1;
    spray = std::max(spray, per_transfer);
    routes += static_cast<double>(std::min(use.transfers * per_transfer, paths));
    shortest = std::min(shortest, use.latency);
    longest = std::max(longest, use.latency);
  }
  const auto scale = static_cast<double>(copies);
  cost.router_bytes = scale * (static_cast<double>(pairs.size()) * kPlanBytes + routes * kRouteBytes);
  // In flight at once: at most one transfer of each chain of dependencies
  // (max_concurrent_transfers), and on packets, besides it, those of the chain that landed less
  // than an acknowledgement's trip ago, one each shortest route's latency at most.
  const auto transfers = static_cast<double>(schedule.transfers().size());
  double per_chain = 1;
  if (on_packets && longest > Time()) per_chain = shortest > Time() ? 2 + std::floor(longest / shortest) : transfers;
  const double in_flight =
      std::min(transfers, per_chain * static_cast<double>(collectives::max_concurrent_transfers(schedule)));
  const double per_transfer = on_packets ? kPacketBytesInFlight + static_cast<double>(spray) * kRouteBytes
                                         : kFlowBytesInFlight + static_cast<double>(spray) * kFlowBytesPerRoute;
  const double executor = static_cast<double>(collectives::ScheduleExecutor::heap_bytes(schedule));
  // Each copy runs its own executor; the copies' schedules are made when the row starts.
  cost.run_bytes = scale * (executor + in_flight * per_transfer) + (scale - 1) * static_cast<double>(schedule.heap_bytes());
  return cost;
}

// Plans every row of a sweep on flows or packets under a budget from the machine's available
// memory, states the run's cost on stderr (unless quiet), and refuses, in one line naming the key
// to change, a sweep whose schedules or run would not fit in memory, or whose packet hops would
// take more than minutes. Past the wall-clock limit (--max-wall) it stops planning: fewer plans
// than rows.
SweepCost plan_sweep(const config::Scenario& s, const collectives::AnalyticalCollectiveModel& model,
                     const topology::Cluster& cluster, const std::vector<workloads::SweepRow>& rows,
                     const RunControl& control) {
  const bool on_packets = s.network.model == config::NetworkModelKind::packet;
  const std::string_view model_name = on_packets ? "packet" : "flow";
  const MemoryLimit limit = memory_limit(control);
  const double available = limit.bytes;
  auto too_big = [&](const std::string& what) {
    return InputError(where(s), "workload.ranks",
                      fmt::format("the {} model would {}, more than the {} {}; lower workload.ranks (or "
                                  "cluster.nodes) or workload.max_bytes, or use network.model: analytical",
                                  model_name, what, memory_size(available), limit.allows));
  };
  SweepCost cost;
  std::vector<double> row_bytes;  // what each row holds while it runs, besides its planned schedule
  double planned_bytes = 0;
  double router_bytes = 0;
  {
    const auto budget = static_cast<uint64_t>(std::min(available / kScheduleBytesPerTransfer, 4.0e9));
    const collectives::ScheduleBudget planning(budget, control.deadline);
    for (const auto& row : rows) {
      if (control.deadline != nullptr && control.deadline->passed(sim::WallClock::now())) return cost;
      try {
        cost.plans.push_back(plan_row(s, model, cluster, row));
      } catch (const collectives::ScheduleStopped&) {
        return cost;
      } catch (const collectives::ScheduleTooLarge& e) {
        throw too_big(fmt::format("plan more than {:.3g} transfers for the {}-byte row (about {})",
                                  static_cast<double>(e.limit()), row.bytes.count(),
                                  memory_size(static_cast<double>(e.limit()) * kScheduleBytesPerTransfer)));
      }
      const collectives::Schedule& schedule = cost.plans.back().schedule;
      const uint64_t copies = 1 + neighbour_shifts(s, row.ranks, cluster.gpu_count()).size();
      const RowCost row_cost = cost_of_row(schedule, cluster, copies, on_packets, s.network.packet.mtu);
      cost.packet_hops += row_cost.packet_hops;
      cost.transfers += schedule.transfers().size();
      cost.largest_row = std::max<uint64_t>(cost.largest_row, schedule.transfers().size() * copies);
      planned_bytes += static_cast<double>(schedule.heap_bytes());
      router_bytes += row_cost.router_bytes;
      row_bytes.push_back(row_cost.run_bytes);
    }
  }
  // The rows running at once hold their run state; the router keeps its plans and routes over the
  // whole sweep.
  std::sort(row_bytes.begin(), row_bytes.end(), std::greater<>());
  const size_t workers = std::min(sim::worker_count(control.threads), row_bytes.size());
  double running = 0;
  for (size_t i = 0; i < workers; ++i) running += row_bytes[i];
  // A schedule's vectors are counted at their capacity, which also covers their last move while
  // planning (the old half beside the new, with only that half's pages touched).
  cost.memory_bytes = kProgramBytes + planned_bytes + running + router_bytes;
  if (cost.memory_bytes > available) {
    throw too_big(fmt::format("hold about {} for this sweep ({:.3g} transfers, the {} largest rows running at once)",
                              memory_size(cost.memory_bytes), static_cast<double>(cost.transfers), workers));
  }
  if (cost.packet_hops > kMaxPacketHops) {
    throw InputError(where(s), "network.model",
                     fmt::format("the packet model would simulate {:.3g} packet hops for this sweep, more than "
                                 "its limit of {:.3g} (minutes of run time); lower workload.max_bytes or "
                                 "use flow",
                                 static_cast<double>(cost.packet_hops), static_cast<double>(kMaxPacketHops)));
  }
  if (!control.quiet) {
    std::cerr << fmt::format("simulate: {} model: {} rows, {:.3g} transfers ({:.3g} in the largest row){}; at most "
                             "about {} of memory ({} {})\n",
                             model_name, rows.size(), static_cast<double>(cost.transfers),
                             static_cast<double>(cost.largest_row),
                             on_packets ? fmt::format(", {:.3g} packet hops", static_cast<double>(cost.packet_hops)) : "",
                             memory_size(cost.memory_bytes), memory_size(available), limit.allowed);
  }
  return cost;
}

// Runs the rows on `threads` workers (0: all cores), each row on its own engine and network model
// (run_row), so a row's result cannot depend on the others or on which thread ran it; returns the
// sweep's fingerprint, the rows' engine fingerprints combined in row order
// (sim::combine_fingerprints), the same for every thread count, 1 included. `plans` holds the
// rows' schedules (plan_sweep), or those planned before the wall-clock limit stopped the planning:
// then no row runs. With `links`, each row's bytes per link are appended there in row
// order; rows a wall-clock limit stopped leave `rows`. Shared between the workers, read only: the
// scenario, the model
// and the cluster, whose route() is safe from several threads (its caches take a lock,
// topology/ecmp_router.h). An error in a row (a packet deadlock) is rethrown as it was thrown,
// the first row's when several fail, as a serial run would (for_each_row).
NetworkRun run_sweep_on_network(const config::Scenario& s, std::vector<workloads::SweepRow>& rows, const RowNetwork& make_net,
                              const topology::Cluster& cluster, const RunControl& control,
                              std::vector<report::SweepLinkLoad>* links, std::vector<SweepPlan> plans) {
  if (plans.size() < rows.size()) {
    // The wall-clock limit passed while the rows were planned: none ran.
    NetworkRun out;
    out.stopped = fmt::format("stopped at --max-wall {:g} s while planning the rows' schedules ({} of {} planned): "
                              "0 of {} rows done",
                              control.deadline->limit_s(), plans.size(), rows.size(), rows.size());
    rows.clear();
    return out;
  }
  const bool on_packets = s.network.model == config::NetworkModelKind::packet;
  Progress progress(static_cast<int64_t>(rows.size()) * kRowUnits,
                    std::string(collectives::name(s.workload.sweep.collective)) +
                        (on_packets ? " on packets" : " on flows"),
                    !control.quiet && Progress::stderr_is_terminal());
  progress.set_units_per_item(kRowUnits);
  const size_t n = rows.size();
  std::vector<RowRun> runs(n);
  // A row on partitions takes that many threads itself: rows then share the rest.
  const int row_threads =
      control.partitions > 1
          ? std::max(1, static_cast<int>(sim::worker_count(control.threads)) / control.partitions)
          : control.threads;
  sim::for_each_row(n, row_threads, [&](size_t i) {
    const SweepPlan plan = std::move(plans[i]);
    runs[i] = run_row(s, plan, rows[i], make_net, cluster, links != nullptr,
                      {progress, *control.deadline, control.partitions});
  }, control.deadline->has_limit() ? sim::RowOrder::smallest_first : sim::RowOrder::largest_first);
  progress.finish();
  std::vector<uint64_t> fingerprints;
  NetworkRun out;
  // Rows a wall-clock limit stopped leave the results; the others keep their order.
  std::vector<workloads::SweepRow> kept;
  std::vector<std::string> in_flight;
  size_t not_started = 0;
  for (size_t i = 0; i < n; ++i) {
    RowRun& run = runs[i];
    out.stats += run.stats;
    if (!run.complete) {
      if (!run.started) {
        ++not_started;
      } else {
        in_flight.push_back(fmt::format("{} bytes had reached {:.4g} us simulated with {:.0f}% of its bytes delivered",
                                        rows[i].bytes.count(), run.reached.us(), 100 * run.delivered));
      }
      continue;
    }
    if (links) {
      for (auto& load : run.links) links->push_back({kept.size(), std::move(load)});
    }
    kept.push_back(std::move(rows[i]));
    fingerprints.push_back(run.fingerprint);
  }
  if (kept.size() < n) {
    out.stopped = fmt::format("stopped at --max-wall {:g} s: {} of {} rows done{}", control.deadline->limit_s(),
                              kept.size(), n, kept.empty() ? "" : " (printed)");
    for (const std::string& row : in_flight) out.stopped += "; the row of " + row;
    if (not_started > 0) out.stopped += fmt::format("; {} not started", not_started);
  }
  rows = std::move(kept);
  out.fingerprint = sim::combine_fingerprints(fingerprints);
  return out;
}

// The flow model's options: links at the share of line rate NCCL's traffic reaches, the scenario's
// completion window, and without peer access, copies inside a node through host memory at the
// closed form's rate.
network::FlowModelOptions flow_options(const config::Scenario& s, const collectives::AnalyticalCollectiveModel& model) {
  network::FlowModelOptions options = collectives::flow_model_options(model, s.cluster.nic.kind);
  options.completion_window = s.network.flow.completion_window;
  options.completion_precision = s.network.flow.completion_precision;
  return options;
}

// Under the flow model each size's schedule runs as flows on the routed cluster graph, sharing
// link capacity max-min fairly. The algorithm is the tuner's when it has a point-to-point lowering
// (NVLS-tree's is its network part, its in-switch part priced in closed form: plan_row); NVLS
// inside one domain keeps the closed form's time; CollNet and PAT have none, so those sizes run
// the cheaper of ring and tree instead, and the row says which ran.
NetworkRun run_sweep_on_flows(const config::Scenario& s, const collectives::AnalyticalCollectiveModel& model,
                              std::vector<workloads::SweepRow>& rows, const RunControl& control,
                              std::vector<report::SweepLinkLoad>* links) {
  if (rows.empty()) return {};
  auto cluster = topology::build_cluster(s.cluster);
  const network::FlowModelOptions options = flow_options(s, model);
  // The CUDA solver keeps its problem on the device and is not safe to share between threads:
  // each row's model gets its own, which starts CUDA only at its first solve large enough for the
  // GPU (LazyCudaSolver). Its rates are the CPU solver's bit for bit, so the outputs do not depend
  // on which rows, or how many threads, used it.
  const RowNetwork make_net = [&]() -> std::unique_ptr<network::NetworkModel> {
    network::FlowModelOptions row_options = options;
    row_options.accelerator = flow_accelerator();
    return std::make_unique<network::FlowNetworkModel>(*cluster, std::move(row_options));
  };
  SweepCost cost = plan_sweep(s, model, *cluster, rows, control);
  return run_sweep_on_network(s, rows, make_net, *cluster, control, links, std::move(cost.plans));
}

// DCQCN runs where RoCE runs it: on RoCE NICs with ECN marking and cc: dcqcn (the defaults).
// DCTCP runs on TCP NICs with ECN marking and cc: dctcp (opt-in), on credits or PFC.
// Links serialize at the share of line rate NCCL's traffic reaches, as on flows.
// With PFC every link's buffer must cover its headroom, or the run is refused in one line.
network::PacketModelOptions packet_options(const config::Scenario& s, const collectives::ModelParameters& params,
                                           const topology::Cluster& cluster) {
  const config::PacketSpec& p = s.network.packet;
  const bool dcqcn = s.cluster.nic.kind == topology::NicKind::roce && p.ecn && p.cc == "dcqcn";
  network::DcqcnOptions settings = p.dcqcn;
  settings.enabled = dcqcn;
  settings.seed = s.seed;
  network::DctcpOptions window = p.dctcp;
  window.enabled = s.cluster.nic.kind == topology::NicKind::tcp && p.ecn && p.cc == "dctcp";
  if (s.cluster.nic.kind == topology::NicKind::tcp && p.cc == "dctcp" && !p.ecn) {
    throw InputError(where(s), "network.packet.ecn", "cc: dctcp reacts to ECN marks: expected ecn: true");
  }
  if (window.enabled && p.flow_control == network::FlowControl::lossy) {
    throw InputError(where(s), "network.packet.cc",
                     "dctcp runs on flow_control: credits or pfc; lossy's go-back-N has no TCP window");
  }
  network::PacketModelOptions options{.mtu = p.mtu,
                                      .buffer_per_port = p.buffer_per_port,
                                      .dcqcn = settings,
                                      .link_efficiency = collectives::link_efficiency(params, s.cluster.nic.kind),
                                      .flow_control = p.flow_control,
                                      .retransmit_timeout = p.retransmit_timeout,
                                      .dctcp = window,
                                      .switch_buffer = p.switch_buffer,
                                      .shared_buffer = p.shared_buffer,
                                      .dt_alpha = p.dt_alpha};
  if (const std::string shortfall = network::PacketNetworkModel::pfc_shortfall(cluster, options); !shortfall.empty()) {
    throw InputError(where(s), "network.packet.buffer_per_port", shortfall);
  }
  if (const std::string shortfall = network::PacketNetworkModel::shared_shortfall(cluster, options);
      !shortfall.empty()) {
    throw InputError(where(s), "network.packet.shared_buffer", shortfall);
  }
  return options;
}

// The packet model runs the same schedules as the flow model, packet by packet; a sweep whose
// packet hops would take more than minutes is refused before it starts (plan_sweep).
NetworkRun run_sweep_on_packets(const config::Scenario& s, const collectives::AnalyticalCollectiveModel& model,
                              std::vector<workloads::SweepRow>& rows, const RunControl& control,
                              std::vector<report::SweepLinkLoad>* links) {
  if (rows.empty()) return {};
  auto cluster = topology::build_cluster(s.cluster);
  SweepCost cost = plan_sweep(s, model, *cluster, rows, control);
  const network::PacketModelOptions options = packet_options(s, model.parameters(), *cluster);
  const RowNetwork make_net = [&]() -> std::unique_ptr<network::NetworkModel> {
    return std::make_unique<network::PacketNetworkModel>(*cluster, options);
  };
  return run_sweep_on_network(s, rows, make_net, *cluster, control, links, std::move(cost.plans));
}

// The analytical sweep is one engine event per collective, completing after its estimated time,
// so the run has an event trace (and a fingerprint) like every other model.
struct SweepClock final : sim::EventHandler {
  void on_event(sim::Engine&, uint64_t) override {}
};



// The flow and packet models run the rows on `threads` workers (0: all cores) and, with `links`,
// append each row's bytes per link there. The analytical model's rows cost microseconds each and
// run on the calling thread.
SweepRun run_sweep(const config::Scenario& s, const collectives::ModelParameters& params,
                   RunControl control, std::vector<report::SweepLinkLoad>* links = nullptr) {
  sim::WallDeadline no_limit;
  if (control.deadline == nullptr) control.deadline = &no_limit;
  collectives::AnalyticalCollectiveModel model(s.cluster, s.collectives, params);
  SweepRun run;
  run.rows = workloads::run_collective_sweep(
      s.workload.sweep, s.cluster, model,
      workloads::host_launch_floor(s.workload.sweep.gpus_per_thread, params, s.cluster.gpu));
  if (s.network.model != config::NetworkModelKind::analytical) {
    static_cast<NetworkRun&>(run) = s.network.model == config::NetworkModelKind::flow
                                        ? run_sweep_on_flows(s, model, run.rows, control, links)
                                        : run_sweep_on_packets(s, model, run.rows, control, links);
    return run;
  }
  sim::Engine engine;
  SweepClock clock;
  for (size_t i = 0; i < run.rows.size(); ++i) {
    engine.schedule_in(run.rows[i].time, clock, i);
    engine.run();
  }
  run.fingerprint = engine.fingerprint();
  run.stats.events = engine.events_executed();
  return run;
}

bool wants(const config::Scenario& s, std::string_view format) {
  for (const auto& f : s.output.formats) {
    if (f == format) return true;
  }
  return false;
}

std::filesystem::path output_dir(const config::Scenario& s, const RunOptions& options) {
  if (options.out_dir) return *options.out_dir;
  return s.output.dir.empty() ? "out/" + s.name : s.output.dir;
}

std::ofstream open_output(const std::filesystem::path& dir, const std::string& file) {
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / file);
  if (!out) throw InputError(SourceLocation{}, "output.dir", "cannot write to " + (dir / file).string());
  return out;
}

// The collective cost model a training or trace workload runs on: closed form, or each
// distinct collective priced as max-min fair flows on the routed graph (flow_collective_model.h),
// `threads` at a time (0: all cores).
std::unique_ptr<collectives::CollectiveCostModel> workload_comm_model(const config::Scenario& s,
                                                                      int threads) {
  if (s.network.model == config::NetworkModelKind::flow) {
    // With network.background: replicas, the GPUs beyond the job run copies of it (the loader
    // refuses it for traces; a training job's parallel sizes are resolved by then).
    const workloads::ParallelSpec& p = s.workload.training.parallel;
    const int job_gpus = s.network.background == config::Background::replicas ? p.tp * p.pp * p.cp * p.dp : 0;
    return std::make_unique<collectives::FlowCollectiveModel>(
        s.cluster, s.collectives, model_parameters(s), flow_accelerator(), threads, job_gpus,
        s.network.flow.completion_window, s.network.flow.completion_precision);
  }
  return std::make_unique<collectives::AnalyticalCollectiveModel>(s.cluster, s.collectives, model_parameters(s));
}

// A training or trace run: its result and, when traced on flows or packets, the links its
// communication crossed (with the graph that names them: the per-collective model's, or the online
// run's own `cluster`).
struct TrainingRun {
  workloads::TrainingResult result;
  std::vector<workloads::LinkTraffic> links;
  std::unique_ptr<collectives::CollectiveCostModel> model;
  RunStats stats;  // online execution: what the network model did
  std::unique_ptr<topology::Cluster> cluster;  // online execution's graph, which names `links`
  std::vector<network::PortTimeline> ports;     // traced online on packets with sampling: the ports' queues
};

// `read`: the scenario's trace, where the caller has read it already (it is moved from).
workloads::TrainingResult evaluate_training(const config::Scenario& s, const collectives::CollectiveCostModel& model,
                                            workloads::TrainingTrace* trace,
                                            const workloads::OnlineExecution& online = {},
                                            workloads::Workload* read = nullptr);

// What the scenario's network model moves, for messages: "flows" or "packets".
std::string_view moved_as(const config::Scenario& s) {
  return s.network.model == config::NetworkModelKind::packet ? "packets" : "flows";
}

// Where copies of a training job run beside it (network.background: replicas): the GPU shift of
// each; none without. The loader has resolved the job's parallel sizes.
std::vector<int> training_copies(const config::Scenario& s) {
  if (s.network.background != config::Background::replicas || s.workload.kind != workloads::WorkloadKind::training)
    return {};
  const workloads::ParallelSpec& p = s.workload.training.parallel;
  return collectives::replica_shifts(p.tp * p.pp * p.cp * p.dp, s.cluster.gpus_per_node, s.cluster.total_gpus());
}

// Whether a training, trace or dlrm workload runs online: on packets always, on flows unless
// network.execution: per_collective.
bool runs_online(const config::Scenario& s) {
  return s.network.model == config::NetworkModelKind::packet ||
         (s.network.model == config::NetworkModelKind::flow && s.network.execution == config::Execution::online);
}

network::PacketModelOptions packet_options(const config::Scenario& s, const collectives::ModelParameters& params,
                                           const topology::Cluster& cluster);
network::FlowModelOptions flow_options(const config::Scenario& s, const collectives::AnalyticalCollectiveModel& model);

// What an online run holds per op of every rank, a bound from measured peaks (bench/README.md,
// "Online execution"): the op and its dependencies, the executor's state for it, its start and end
// when traced, and the network model's share.
constexpr double kOnlineBytesPerOp = 224;

workloads::Workload read_trace(const config::Scenario& s, const workloads::TraceSpec& t, int gpus,
                               const std::string& key);

// The job an online run runs: a generated workload as its representative ranks (each standing for
// the GPUs of its `represents`; generated in milliseconds), a trace as read (the run then takes it).
workloads::Workload online_workload(const config::Scenario& s) {
  if (s.workload.kind == workloads::WorkloadKind::training)
    return workloads::generate_megatron(s.workload.training, s.cluster, {.layers_per_block = s.workload.layers_per_block});
  if (s.workload.kind == workloads::WorkloadKind::dlrm) return workloads::generate_dlrm(s.workload.dlrm, s.cluster);
  if (s.workload.kind == workloads::WorkloadKind::trace)
    return read_trace(s, s.workload.trace, s.cluster.total_gpus(), "workload");
  return {};
}

// The ops an online run holds: every representative rank's, times the GPUs it stands for, and its
// copies' with network.background: replicas.
double online_ops(const config::Scenario& s, const workloads::Workload& w) {
  double ops = 0;
  for (const workloads::RankGraph& r : w.ranks) ops += static_cast<double>(r.ops.size()) * r.represents;
  return ops * (1.0 + static_cast<double>(training_copies(s).size()));
}

// What an online run holds for its collectives and sends besides their ops (OnlineNetwork), and
// the transfers they move.
struct OnlinePlanCost {
  double bytes = 0;
  double transfers = 0;
};

// The plans' memory: a plan for each (collective, bytes, communicator), kept for the run, its
// schedule and rank plan, and with one instance of it running, its executor, what the network
// model keeps for the transfers it can have in flight and the router's plans and routes
// (cost_of_row). The job's communicators of one size cut its GPUs into groups (tensor, data,
// expert parallel), so there are at most its GPUs over the size of them, and a send's pairs at
// most its GPUs; those of one size and span of nodes lower alike, so one of each is lowered. The
// transfers: each instance of a collective (one for its members' ops) or send moves its plan's.
OnlinePlanCost online_plan_cost(const config::Scenario& s, const workloads::Workload& w,
                                const collectives::AnalyticalCollectiveModel& model, const topology::Cluster& cluster) {
  const bool on_packets = s.network.model == config::NetworkModelKind::packet;
  using Shape = std::tuple<int, int64_t, size_t, size_t>;  // collective, bytes, members, nodes spanned
  // Each communicator's nodes spanned, worked out once.
  std::vector<size_t> spans(w.comms.size());
  for (size_t c = 0; c < w.comms.size(); ++c) {
    std::vector<int> nodes;
    for (const int g : w.comms[c].ranks) nodes.push_back(cluster.node_of(g));
    std::sort(nodes.begin(), nodes.end());
    spans[c] = static_cast<size_t>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
  }
  // The members whose ops reach each communicator's collectives: all of them where ranks stand
  // for GPUs they do not list (generated), those listed where each rank is one GPU (every rank
  // generated, or a trace, whose collectives run once for the members it lists).
  const bool listed_only =
      std::all_of(w.ranks.begin(), w.ranks.end(), [](const workloads::RankGraph& r) { return r.represents == 1; });
  std::vector<char> is_rank(static_cast<size_t>(std::max(cluster.gpu_count(), 1)), 0);
  for (const workloads::RankGraph& r : w.ranks) {
    if (r.gpu >= 0 && r.gpu < cluster.gpu_count()) is_rank[static_cast<size_t>(r.gpu)] = 1;
  }
  std::vector<double> reaching(w.comms.size());
  for (size_t c = 0; c < w.comms.size(); ++c) {
    const std::vector<int>& members = w.comms[c].ranks;
    const auto listed = std::count_if(members.begin(), members.end(), [&](int g) {
      return g >= 0 && g < cluster.gpu_count() && is_rank[static_cast<size_t>(g)];
    });
    reaching[c] = static_cast<double>(std::max<int64_t>(listed_only ? listed : std::ssize(members), 1));
  }
  struct Uses {
    const collectives::Communicator* comm = nullptr;
    double instances = 0;  // run by the job: the members' ops of this shape over the members (a send's: its sender's)
  };
  std::map<Shape, Uses> shapes;
  for (const workloads::RankGraph& r : w.ranks) {
    for (const workloads::Op& op : r.ops) {
      if ((op.kind != workloads::OpKind::collective && op.kind != workloads::OpKind::send) || op.comm < 0) continue;
      const auto c = static_cast<size_t>(op.comm);
      const collectives::CollectiveKind kind =
          op.kind == workloads::OpKind::send ? collectives::CollectiveKind::send_recv : op.collective;
      Uses& uses = shapes[{static_cast<int>(kind), op.bytes.count(), w.comms[c].ranks.size(), spans[c]}];
      uses.comm = &w.comms[c];
      const double ops = static_cast<double>(r.represents) * op.repeat;
      uses.instances += op.kind == workloads::OpKind::send ? ops : ops / reaching[c];
    }
  }
  const double gpus = w.total_gpus > 0 ? w.total_gpus : cluster.gpu_count();
  OnlinePlanCost cost;
  for (const auto& [shape, uses] : shapes) {
    const auto kind = static_cast<collectives::CollectiveKind>(std::get<0>(shape));
    const collectives::NetworkPlan plan = workloads::online_plan(model, cluster, kind, Bytes(std::get<1>(shape)), *uses.comm);
    const collectives::RankPlan ranks = collectives::rank_plan_on(plan.schedule, uses.comm->ranks, cluster);
    const RowCost running = cost_of_row(plan.schedule, cluster, 1, on_packets, s.network.packet.mtu);
    const double members = static_cast<double>(std::max<size_t>(std::get<2>(shape), 1));
    const bool send = kind == collectives::CollectiveKind::send_recv;
    const double count = send ? gpus : std::ceil(gpus / members);
    cost.bytes += count * (static_cast<double>(plan.schedule.heap_bytes() + ranks.heap_bytes()) + running.run_bytes +
                           running.router_bytes);
    cost.transfers += uses.instances * static_cast<double>(plan.schedule.transfers().size());
  }
  const double copies = 1.0 + static_cast<double>(training_copies(s).size());
  return {.bytes = cost.bytes * copies, .transfers = cost.transfers * copies};
}

// States an online run's size on stderr (unless quiet) and refuses, in one line naming
// network.execution, a run whose every-rank graphs would not fit in the memory limit. Returns the
// workload it costed (a trace, read once, for the run to take).
workloads::Workload check_online_cost(const config::Scenario& s, const RunControl& control,
                                      const collectives::AnalyticalCollectiveModel& analytical,
                                      const topology::Cluster& cluster) {
  workloads::Workload w = online_workload(s);
  const double ops = online_ops(s, w);
  if (ops <= 0) return w;
  const MemoryLimit limit = memory_limit(control);
  const OnlinePlanCost plans = online_plan_cost(s, w, analytical, cluster);
  const double bytes = kProgramBytes + ops * kOnlineBytesPerOp + plans.bytes;
  const std::string_view model = moved_as(s);
  if (bytes > limit.bytes) {
    throw InputError(where(s), "network.execution",
                     fmt::format("online on {}, every rank's ops ({:.3g}) would hold about {}, more than the {} {}; "
                                 "use network.execution: per_collective on flows, a smaller job or network.model: "
                                 "analytical",
                                 model, ops, memory_size(bytes), memory_size(limit.bytes), limit.allows));
  }
  if (!control.quiet) {
    std::cerr << fmt::format("simulate: online on {}: every rank's ops ({:.3g}) on one engine, {:.3g} transfers, "
                             "about {} ({} {})\n",
                             model, ops, plans.transfers, memory_size(bytes), memory_size(limit.bytes), limit.allowed);
  }
  return w;
}

// Watches an online run's engine: at each clock read it moves the bar (on a terminal, unless
// quiet) to the ops done and notes the simulated time and events, and it stops the engine once
// the run's wall-clock limit has passed. The bar is erased when the watch goes.
class OnlineWatch final : public sim::EngineWatch {
 public:
  OnlineWatch(const RunControl& control, std::string label)
      : deadline_(control.deadline), bar_(!control.quiet && Progress::stderr_is_terminal()), label_(std::move(label)) {}
  // Called after every event: a counter increment but at the clock's reads.
  bool keep_running(const sim::Engine& engine) override { return clock_.skip() || at_clock_read(engine, clock_.read()); }
  workloads::ExecutionProgress progress;

 private:
  // Out of line, so that keep_running's frame stays a counter's.
  [[gnu::noinline]] bool at_clock_read(const sim::Engine& engine, sim::WallClock::time_point now) {
    if (bar_ && progress.total > 0) {
      if (!progress_bar_) progress_bar_.emplace(static_cast<int64_t>(progress.total), label_, true);
      progress_bar_->advance(static_cast<int64_t>(progress.done.load(std::memory_order_relaxed)) - progress_bar_->done());
      progress_bar_->set_note(
          fmt::format("{:.4g} s simulated, {} events", engine.now().seconds(), engine.events_executed()));
    }
    return deadline_ == nullptr || !deadline_->passed(now);
  }
  sim::WallDeadline* deadline_;
  bool bar_;
  std::string label_;
  sim::ClockSampler clock_;
  std::optional<Progress> progress_bar_;
};

// The flow or packet model an online run moves its bytes on. With `sample_ports` (a run that
// writes a trace) the packet model samples its ports' queues at network.packet.sample_interval;
// samples go nowhere else, so other runs (and sweeps) leave them off.
std::unique_ptr<network::NetworkModel> online_network_model(const config::Scenario& s,
                                                            const collectives::AnalyticalCollectiveModel& model,
                                                            const topology::Cluster& cluster, bool sample_ports = false) {
  if (s.network.model == config::NetworkModelKind::packet) {
    network::PacketModelOptions options = packet_options(s, model.parameters(), cluster);
    if (sample_ports) options.sample_interval = s.network.packet.sample_interval;
    return std::make_unique<network::PacketNetworkModel>(cluster, options);
  }
  return std::make_unique<network::FlowNetworkModel>(cluster, flow_options(s, model));
}

// An online run must have delivered every byte its schedules sent, with nothing left in flight.
void check_delivered(const workloads::OnlineNetwork& online, const network::NetworkModel& net) {
  if (online.in_flight() != 0 || net.bytes_delivered() != online.bytes_sent()) {
    throw std::logic_error(fmt::format("{} model: {} bytes sent but {} delivered ({} operations in flight)", net.name(),
                                       online.bytes_sent().count(), net.bytes_delivered().count(),
                                       online.in_flight()));
  }
}

// Online execution (workloads/online_network.h): every rank's op graph runs on one engine with the
// flow or packet model, each collective and send lowered to its schedule when it starts, so that
// all traffic in flight shares the links. Every byte the schedules sent must have been delivered.
// Past the deadline the engine stops and workloads::ExecutionStopped says how far it got.
TrainingRun run_training_online(const config::Scenario& s, const RunControl& control, workloads::TrainingTrace* trace) {
  TrainingRun run;
  auto analytical = std::make_unique<collectives::AnalyticalCollectiveModel>(s.cluster, s.collectives,
                                                                             model_parameters(s));
  auto cluster = topology::build_cluster(s.cluster);
  workloads::Workload costed = check_online_cost(s, control, *analytical, *cluster);
  std::unique_ptr<network::NetworkModel> model_net =
      online_network_model(s, *analytical, *cluster, trace != nullptr && wants(s, "trace"));
  // A traced run (its views written) counts each link's bytes and busy time for the link table.
  std::optional<network::LinkLedger> ledger;
  if (trace) ledger.emplace(*cluster, *model_net);
  network::NetworkModel* net = ledger ? static_cast<network::NetworkModel*>(&*ledger) : model_net.get();
  workloads::OnlineNetwork online(*analytical, *cluster, *net);
  // With --partitions, on a partitioned engine cut by node blocks (network/packet/partition.h);
  // the ledger then keeps a part per partition.
  std::optional<workloads::EnginePartitions> partitions;
  if (control.partitions > 1) {
    auto* packets = dynamic_cast<network::PacketNetworkModel*>(model_net.get());
    if (packets == nullptr) throw std::logic_error("--partitions: online execution on partitions needs packets");
    const network::ClusterPartition cut = network::partition_cluster(*cluster, static_cast<uint32_t>(control.partitions));
    online.set_partitions(cut.of_gpu);
    packets->set_partitions(cut.partitions);
    if (ledger) ledger->set_partitions(cut.partitions);
    partitions = workloads::EnginePartitions{cut.owner, cut.lookahead};
  }
  const std::vector<int> copies = training_copies(s);
  {
    OnlineWatch watch(control, fmt::format("ops online on {}", moved_as(s)));
    run.result = evaluate_training(s, *analytical, trace,
                                   {.network = &online,
                                    .watch = &watch,
                                    .progress = &watch.progress,
                                    .partitions = partitions ? &*partitions : nullptr,
                                    .copies = copies},
                                   s.workload.kind == workloads::WorkloadKind::trace ? &costed : nullptr);
  }
  run.result.neighbour_copies = static_cast<int>(copies.size());
  check_delivered(online, *net);
  run.stats.events = run.result.events;
  run.stats.net = net->counters();
  if (ledger) {
    for (const network::LinkLoad& load : ledger->loads(Time::zero()))
      run.links.push_back({load.link, load.bytes.as_double(), load.busy.seconds(), load.port});
  }
  if (const auto* packets = dynamic_cast<const network::PacketNetworkModel*>(model_net.get()); packets && trace) {
    const auto& ends = trace->execution.rank_end;
    run.ports = packets->port_timelines(ends.empty() ? Time::zero() : *std::max_element(ends.begin(), ends.end()));
  }
  run.model = std::move(analytical);
  run.cluster = std::move(cluster);
  return run;
}

// Bytes pricing a collective on flows holds per transfer of its lowering, as a bound: the
// schedule, its flows (sprayed over up to 32 routes under adaptive routing) and the max-min
// problem.
constexpr double kPricedBytesPerTransfer = 1024;

// A training or trace run. On flows, unless `quiet`, its cost is stated on stderr before the
// pricing (the distinct collectives, the budget each is priced under) with, on a terminal, a bar
// over them; pricing stops with collectives::PricingStopped once the deadline has passed, and a
// collective whose lowering would not fit in the memory limit over the pricing threads is
// refused.
TrainingRun run_training_workload(const config::Scenario& s, const RunControl& control,
                                  workloads::TrainingTrace* trace = nullptr) {
  if (runs_online(s)) return run_training_online(s, control, trace);
  TrainingRun run;
  run.model = workload_comm_model(s, control.threads);
  std::optional<Progress> pricing;
  auto* flows = dynamic_cast<collectives::FlowCollectiveModel*>(run.model.get());
  const bool bar = !control.quiet && Progress::stderr_is_terminal();
  const MemoryLimit limit = memory_limit(control);
  const size_t workers = sim::worker_count(control.threads);
  const auto max_transfers =
      static_cast<uint64_t>(limit.bytes / (kPricedBytesPerTransfer * static_cast<double>(workers)));
  if (flows != nullptr) {
    flows->set_max_transfers(max_transfers);
    flows->set_on_priced([&](size_t done, size_t total) {
      if (done == 0) {
        if (!control.quiet) {
          std::cerr << fmt::format("simulate: flow model: {} distinct collectives to price on {} thread{}, each under "
                                   "{:.3g} transfers ({} of memory {})\n",
                                   total, workers, workers == 1 ? "" : "s", static_cast<double>(max_transfers),
                                   memory_size(limit.bytes), limit.allowed);
        }
        if (bar) pricing.emplace(static_cast<int64_t>(total), "pricing collectives on flows", true);
      } else if (pricing) {
        pricing->advance();
      }
      return control.deadline == nullptr || !control.deadline->passed(sim::WallClock::now());
    });
  }
  try {
    run.result = evaluate_training(s, *run.model, trace);
  } catch (const collectives::ScheduleTooLarge& e) {
    throw InputError(where(s), "cluster.nodes",
                     fmt::format("the flow model would plan more than {:.3g} transfers for one collective (about {} on "
                                 "each of {} pricing threads), more than the {} {}; use a smaller job, fewer --threads "
                                 "or network.model: analytical",
                                 static_cast<double>(e.limit()),
                                 memory_size(static_cast<double>(e.limit()) * kPricedBytesPerTransfer), workers,
                                 memory_size(limit.bytes), limit.allows));
  }
  if (flows != nullptr) flows->set_on_priced(nullptr);  // the bar ends with this call
  if (pricing) pricing->finish();
  if (flows != nullptr) {
    run.result.neighbour_copies = flows->neighbour_copies();
    if (trace) run.links = workloads::link_traffic(trace->workload, *flows);
  }
  return run;
}

// The traces `t` names, read for a job of `gpus` GPUs; errors name the keys under `key`.
workloads::Workload read_trace(const config::Scenario& s, const workloads::TraceSpec& t, int gpus,
                               const std::string& key) {
  if (t.format != "chakra") throw InputError(where(s), key + ".format", "expected chakra, got \"" + t.format + "\"");
  workloads::Workload w;
  const std::string prefix = beside_scenario(s, t.path);
  try {
    w = workloads::read_chakra(prefix);
  } catch (const std::runtime_error& e) {
    // A missing, truncated or inconsistent trace is the input's fault: one line naming it.
    throw InputError(where(s), key + ".path", e.what());
  }
  if (const std::string why = w.misfit(gpus); !why.empty()) {
    throw InputError(where(s), key + ".path", prefix + ": " + why);
  }
  return w;
}

// Which ranks a training, trace or dlrm run simulates, and why the others need no simulation of
// their own (the report's GPUs line).
std::string ranks_basis(const config::Scenario& s, bool online) {
  if (s.workload.kind == workloads::WorkloadKind::trace) return "the ranks the trace lists";
  if (online) return "every GPU, online on one engine";
  const std::string one = s.workload.kind == workloads::WorkloadKind::dlrm ? "one GPU" : "one GPU per pipeline stage";
  if (s.network.model == config::NetworkModelKind::analytical) {
    return one + "; the others run the same ops in step, exact on the closed form, which has no contention";
  }
  return one + "; the others run the same ops in step, their collectives priced beside its own as sibling groups "
               "(network.execution: per_collective)";
}

// The run of the scenario's workload by its kind.
workloads::TrainingResult evaluate_by_kind(const config::Scenario& s, const collectives::CollectiveCostModel& model,
                                           workloads::TrainingTrace* trace, const workloads::OnlineExecution& online,
                                           workloads::Workload* read) {
  if (s.workload.kind == workloads::WorkloadKind::trace) {
    workloads::Workload w =
        read != nullptr ? std::move(*read) : read_trace(s, s.workload.trace, s.cluster.total_gpus(), "workload");
    // A trace that does not name itself (dtsim's own traces do) takes the scenario's name.
    if (w.name.empty()) w.name = s.name;
    workloads::ComputeModel compute(s.cluster.gpu, s.workload.training.attention);
    const topology::Dtype precision = s.workload.training.precision;
    if (trace) {
      return workloads::evaluate_workload_traced(std::move(w), s.cluster, model, precision, compute, *trace, online);
    }
    return workloads::evaluate_workload(w, s.cluster, model, precision, compute, online);
  }
  if (s.workload.kind == workloads::WorkloadKind::dlrm) {
    workloads::Workload w = workloads::generate_dlrm(s.workload.dlrm, s.cluster, online.network != nullptr);
    w.name = s.name;
    workloads::ComputeModel compute(s.cluster.gpu, s.workload.training.attention);
    const topology::Dtype precision = s.workload.dlrm.precision;
    if (trace) {
      return workloads::evaluate_workload_traced(std::move(w), s.cluster, model, precision, compute, *trace, online);
    }
    return workloads::evaluate_workload(w, s.cluster, model, precision, compute, online);
  }
  // Online, the network carries every GPU's traffic: every GPU is a rank of its own.
  const workloads::GeneratorOptions generator{.layers_per_block = s.workload.layers_per_block,
                                              .all_ranks = online.network != nullptr};
  if (trace) return workloads::run_training_traced(s.workload.training, s.cluster, model, *trace, generator, online);
  return workloads::run_training(s.workload.training, s.cluster, model, generator, online);
}

workloads::TrainingResult evaluate_training(const config::Scenario& s, const collectives::CollectiveCostModel& model,
                                            workloads::TrainingTrace* trace, const workloads::OnlineExecution& online,
                                            workloads::Workload* read) {
  workloads::TrainingResult result = evaluate_by_kind(s, model, trace, online, read);
  result.ranks_basis = ranks_basis(s, online.network != nullptr);
  return result;
}

// Jobs on one fabric (scenario `jobs:`, workloads/jobs.h).

// A job's op graph on the GPUs of its own nodes, numbered from 0, every GPU a rank of its own (it
// runs online).
workloads::Workload job_workload(const config::Scenario& s, size_t i) {
  const config::JobSpec& job = s.jobs[i];
  topology::ClusterSpec own = s.cluster;
  own.nodes = static_cast<int>(job.nodes.size());
  if (job.is_traffic) return workloads::generate_traffic(job.traffic, own.total_gpus());
  const workloads::WorkloadSpec& w = job.workload;
  switch (w.kind) {
    case workloads::WorkloadKind::training:
      return workloads::generate_megatron(w.training, own, {.layers_per_block = w.layers_per_block, .all_ranks = true});
    case workloads::WorkloadKind::dlrm: return workloads::generate_dlrm(w.dlrm, own, true);
    case workloads::WorkloadKind::trace:
      return read_trace(s, w.trace, own.total_gpus(), fmt::format("jobs[{}].workload", i));
    case workloads::WorkloadKind::collective_sweep: break;
  }
  throw std::logic_error("a job runs training, dlrm, a trace or traffic (the loader refuses a collective sweep)");
}

std::string job_kind(const config::JobSpec& job) {
  return job.is_traffic ? "traffic" : std::string(config::enum_name(job.workload.kind, config::workload_kind_names()));
}

// Runs `w` online on the scenario's flow or packet model, on an engine of its own: the run of all
// jobs together, or of one alone. The deadline stops it as it stops a training run.
workloads::ExecutionResult run_jobs_workload(const config::Scenario& s, const workloads::Workload& w,
                                             workloads::Attention attention, const RunControl& control,
                                             network::NetworkCounters& counters) {
  const collectives::AnalyticalCollectiveModel analytical(s.cluster, s.collectives, model_parameters(s));
  const auto cluster = topology::build_cluster(s.cluster);
  const std::unique_ptr<network::NetworkModel> net = online_network_model(s, analytical, *cluster);
  workloads::OnlineNetwork online(analytical, *cluster, *net);
  // Each job hashes its transfers to the same ECMP routes together and alone.
  std::vector<int> job_of_gpu(static_cast<size_t>(s.cluster.total_gpus()), 0);
  for (size_t i = 0; i < s.jobs.size(); ++i) {
    for (int g : workloads::job_gpus(s.jobs[i].nodes, s.cluster.gpus_per_node))
      job_of_gpu[static_cast<size_t>(g)] = static_cast<int>(i);
  }
  online.set_salt_domains(std::move(job_of_gpu));
  const workloads::ComputeModel compute(s.cluster.gpu, attention);
  RunControl silent = control;
  silent.quiet = true;  // runs side by side: no bars
  OnlineWatch watch(silent, "");
  workloads::ExecutionResult r =
      workloads::Executor(compute, analytical, {.critical_path = false, .network = &online, .watch = &watch}).run(w);
  check_delivered(online, *net);
  counters = net->counters();
  return r;
}

// The jobs' times, and what the network model did in the run together.
struct JobsRun {
  workloads::JobsResult result;
  RunStats stats;
};

// Every job of the scenario together on one engine, and each alone on the same nodes (its
// oracle), these runs on `control.threads` workers; each job's time is when the last of its ranks
// finished, over its iterations. Refused, in one line naming jobs, when the runs would not fit in
// memory.
JobsRun run_jobs_online(const config::Scenario& s, const RunControl& control) {
  const size_t n = s.jobs.size();
  workloads::Workload together;
  together.name = s.name;
  together.total_gpus = s.cluster.total_gpus();
  std::vector<workloads::Workload> alone(n);
  std::vector<size_t> first(n), ranks(n);
  // One compute model for all: the loader has checked that every job asks for the same attention.
  workloads::Attention attention = workloads::Attention::flash3;
  for (const config::JobSpec& job : s.jobs) {
    if (!job.is_traffic) {
      attention = job.workload.training.attention;
      break;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    workloads::Workload own = job_workload(s, i);
    workloads::repeat_iterations(own, s.jobs[i].iterations);
    const std::vector<int> gpus = workloads::job_gpus(s.jobs[i].nodes, s.cluster.gpus_per_node);
    first[i] = together.ranks.size();
    ranks[i] = own.ranks.size();
    workloads::add_job(together, own, gpus);
    alone[i].name = s.jobs[i].name;
    alone[i].total_gpus = s.cluster.total_gpus();
    workloads::add_job(alone[i], own, gpus);
  }
  // The runs alone hold the ops of the run together once more, at most, and the plans of its
  // collectives and sends once more where they run beside it.
  const double ops = static_cast<double>(together.op_count());
  const collectives::AnalyticalCollectiveModel analytical(s.cluster, s.collectives, model_parameters(s));
  const OnlinePlanCost plans = online_plan_cost(s, together, analytical, *topology::build_cluster(s.cluster));
  const double bytes = kProgramBytes + 2 * (ops * kOnlineBytesPerOp + plans.bytes);
  const MemoryLimit limit = memory_limit(control);
  if (bytes > limit.bytes) {
    throw InputError(where(s), "jobs",
                     fmt::format("{} jobs online on {}, every rank's ops ({:.3g}) run together and alone, would hold "
                                 "about {}, more than the {} {}; use smaller jobs",
                                 n, moved_as(s), ops, memory_size(bytes), memory_size(limit.bytes), limit.allows));
  }
  if (!control.quiet) {
    std::cerr << fmt::format("simulate: {} jobs online on {}: together on one engine and each alone; every rank's "
                             "ops ({:.3g}), {:.3g} transfers together, about {} ({} {})\n",
                             n, moved_as(s), ops, plans.transfers, memory_size(bytes), memory_size(limit.bytes),
                             limit.allowed);
  }
  std::vector<workloads::ExecutionResult> runs(n + 1);
  std::vector<network::NetworkCounters> counters(n + 1);
  sim::for_each_row(
      n + 1, control.threads,
      [&](size_t k) {
        runs[k] = run_jobs_workload(s, k == 0 ? together : alone[k - 1], attention, control, counters[k]);
      },
      sim::RowOrder::smallest_first);
  JobsRun run;
  run.stats.events = runs[0].events;
  run.stats.net = counters[0];
  workloads::JobsResult& result = run.result;
  result.model = s.network.model == config::NetworkModelKind::packet ? "packet" : "flow";
  result.cluster_nodes = s.cluster.nodes;
  result.events = runs[0].events;
  result.fingerprint = runs[0].fingerprint;
  for (size_t i = 0; i < n; ++i) {
    const config::JobSpec& job = s.jobs[i];
    result.jobs.push_back({.name = job.name,
                           .workload = job_kind(job),
                           .nodes = job.nodes,
                           .gpus = static_cast<int>(job.nodes.size()) * s.cluster.gpus_per_node,
                           .iterations = job.iterations,
                           .alone_s = runs[i + 1].iteration.seconds() / job.iterations,
                           .together_s = workloads::job_time(runs[0], first[i], ranks[i]).seconds() / job.iterations});
  }
  return run;
}

// The page's op table: the `limit` busiest (stage, stream, op) rows per GPU, busiest first.
report::TableSection busiest_ops(const workloads::TrainingResult& r, std::vector<workloads::OpTotal> ops,
                                 size_t limit) {
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.busy_s > b.busy_s; });
  if (ops.size() > limit) ops.resize(limit);
  report::TableSection t{"Busiest ops (per GPU)",
                         {"stage", "stream", "op", "count", "busy", "share", "on critical path"},
                         {}};
  for (const auto& o : ops) {
    t.rows.push_back({std::to_string(o.stage), o.stream, o.label, fmt::format("{:.4g}", o.count),
                      fmt::format("{:.4g} s", o.busy_s),
                      fmt::format("{:.1f}%", r.iteration_time_s > 0 ? 100 * o.busy_s / r.iteration_time_s : 0.0),
                      fmt::format("{:.4g} s", o.critical_s)});
  }
  return t;
}

// The `limit` rows of a run's per-link table busiest while in use (then by bytes), busiest
// first, as indices into it (and into TrainingRun::links, which it follows).
std::vector<size_t> busiest(const std::vector<report::LinkRow>& rows, size_t limit) {
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const report::LinkRow &x = rows[a], &y = rows[b];
    return x.utilisation_busy != y.utilisation_busy ? x.utilisation_busy > y.utilisation_busy : x.bytes > y.bytes;
  });
  if (order.size() > limit) order.resize(limit);
  return order;
}

// Links of a run on flows that get a track in its trace and page: the busiest while in use.
constexpr size_t kTimelineLinks = 32;

// The page's link table on flows and packets: the `limit` links busiest while in use (then by
// bytes); on packets with the counters at each link's port.
report::TableSection busiest_links(const std::vector<report::LinkRow>& rows, size_t limit, std::string_view model) {
  report::TableSection table{fmt::format("Busiest links ({})", model),
                             {"link", "kind", "GB per iteration", "in use", "utilisation in use", "over the iteration"},
                             {}};
  const bool ports = std::any_of(rows.begin(), rows.end(), [](const report::LinkRow& r) { return r.port.has_value(); });
  if (ports) {
    for (const char* column : {"peak egress queue", "peak ingress queue", "pauses", "paused", "drops", "ECN marks"})
      table.columns.emplace_back(column);
  }
  for (size_t i : busiest(rows, limit)) {
    const report::LinkRow& row = rows[i];
    std::vector<std::string> cells{row.name, std::string(row.kind), fmt::format("{:.4g}", row.bytes * 1e-9),
                                   fmt::format("{:.4g} s", row.busy_s), fmt::format("{:.1f}%", 100 * row.utilisation_busy),
                                   fmt::format("{:.1f}%", 100 * row.utilisation_iteration)};
    if (const auto& p = row.port) {
      cells.insert(cells.end(), {fmt::format("{} B", p->peak_egress.count()), fmt::format("{} B", p->peak_ingress.count()),
                                 fmt::format("{}", p->pause_frames), fmt::format("{:.4g} us", p->paused.us()),
                                 fmt::format("{}", p->drops), fmt::format("{}", p->ecn_marks)});
    } else if (ports) {
      cells.resize(table.columns.size());
    }
    table.rows.push_back(std::move(cells));
  }
  return table;
}

// The files of a training or trace run besides its summary: the per-op table (NAME.ops.csv,
// NAME.ops.json), on flows the per-link table (NAME.links.csv, NAME.links.json), a
// Chrome/Perfetto trace of every simulated rank's streams, and a self-contained page with the
// summary, breakdown and timeline.
void write_training_views(const config::Scenario& s, const RunOptions& options, const TrainingRun& run,
                          const workloads::TrainingTrace& trace) {
  const workloads::TrainingResult& r = run.result;
  const auto dir = output_dir(s, options);
  const bool tables = wants(s, "csv") || wants(s, "json");
  const auto ops = tables || wants(s, "html") ? workloads::op_totals(trace) : std::vector<workloads::OpTotal>{};
  // On flows, the per-link rows, built once: the link table, the page's busiest links and the
  // trace's link tracks all read them (run.links follows the same order).
  // Per collective on flows the model's graph names the links; online, the run's own.
  const auto* flows = dynamic_cast<const collectives::FlowCollectiveModel*>(run.model.get());
  const topology::Cluster* graph = flows ? &flows->cluster() : run.cluster.get();
  const std::vector<report::LinkRow> link_rows =
      graph ? report::link_rows(r, run.links, *graph) : std::vector<report::LinkRow>{};
  if (tables) {
    for (const char* f : {"csv", "json"}) {
      if (!wants(s, f)) continue;
      auto out = open_output(dir, s.name + ".ops." + f);
      report::write_op_table(r, ops, f, out);
      if (graph) {
        auto links = open_output(dir, s.name + ".links." + f);
        report::write_link_table(r, link_rows, f, links);
      }
    }
  }
  if (!wants(s, "trace") && !wants(s, "html")) return;
  report::Timeline timeline;
  // Online, a generated job lists every GPU, and the GPUs of one stage run the same program: the
  // first rank of each stage draws it (a trace's ranks are drawn whole).
  const bool every_gpu = runs_online(s) && s.workload.kind != workloads::WorkloadKind::trace;
  report::add_training_timeline(trace, timeline, every_gpu ? 1 : 0);
  if (flows) {
    // The busiest links get a track each: when each operation used them, and their utilisation.
    std::vector<topology::LinkId> wanted;
    for (size_t i : busiest(link_rows, kTimelineLinks)) {
      wanted.push_back(run.links[i].link);
    }
    report::add_link_timeline(trace, workloads::link_uses(trace, *flows, wanted), flows->cluster(), timeline);
  }
  // Online on packets with network.packet.sample_interval: each port that queued, its depth and pauses.
  if (run.cluster) report::add_port_timeline(run.ports, *run.cluster, timeline);
  const std::string resolved = config::dump_scenario(s);
  if (wants(s, "trace")) {
    auto out = open_output(dir, s.name + ".trace.json");
    report::write_chrome_trace(timeline, {s.name, resolved}, out);
  }
  if (wants(s, "html")) {
    report::RunReport page;
    page.name = s.name;
    page.scenario = resolved;
    page.summary = {{"iteration time", fmt::format("{:.4g} s", r.iteration_time_s)},
                    {"TFLOP/s per GPU", fmt::format("{:.1f}", r.tflops_per_gpu)},
                    {"MFU", fmt::format("{:.1f}%", 100 * r.mfu)},
                    {"tokens/s per GPU", fmt::format("{:.0f}", r.tokens_per_s_per_gpu)},
                    {"GPUs", std::to_string(r.gpus)}};
    if (r.memory) {
      const double gib = 1024.0 * 1024.0 * 1024.0;
      page.summary.emplace_back("memory per GPU", fmt::format("{:.1f} of {:.0f} GiB{}", r.memory->total() / gib,
                                                             r.memory->capacity / gib,
                                                             r.memory->fits() ? "" : " (does not fit)"));
    }
    report::TimeBreakdown bar{"per GPU", {{"compute", r.breakdown.compute.seconds()}}};
    for (int c = 0; c < 5; ++c) {
      bar.parts.emplace_back(
          "exposed " + std::string(workloads::name(static_cast<workloads::CommCategory>(c))),
          r.breakdown.exposed[static_cast<size_t>(c)].seconds());
    }
    bar.parts.emplace_back("host wait", r.breakdown.host.seconds());
    bar.parts.emplace_back("bubble", r.breakdown.bubble.seconds());
    page.breakdown.push_back(std::move(bar));
    page.tables.push_back(busiest_ops(r, ops, 25));
    if (graph) {
      page.tables.push_back(
          busiest_links(link_rows, 25, moved_as(s)));
    }
    page.timeline = &timeline;
    auto out = open_output(dir, s.name + ".html");
    report::write_run_html(page, out);
  }
}

report::SweepFormat sweep_format(OutputFormat f) {
  switch (f) {
    case OutputFormat::csv: return report::SweepFormat::csv;
    case OutputFormat::json: return report::SweepFormat::json;
    default: return report::SweepFormat::table;
  }
}

std::string_view format_name(OutputFormat f) {
  switch (f) {
    case OutputFormat::csv: return "csv";
    case OutputFormat::json: return "json";
    case OutputFormat::dot: return "dot";
    case OutputFormat::table: return "table";
  }
  return "table";
}

// Files the scenario's output.formats ask for besides the stdout table, under the output dir.
void write_files(const config::Scenario& s, const RunOptions& options,
                 const std::function<void(OutputFormat, std::ostream&)>& write) {
  const std::filesystem::path dir = output_dir(s, options);
  for (const auto& f : s.output.formats) {
    OutputFormat fmt_kind;
    if (f == "csv") fmt_kind = OutputFormat::csv;
    else if (f == "json") fmt_kind = OutputFormat::json;
    else continue;  // table prints on stdout; trace and html are written by their own writers
    auto file = open_output(dir, s.name + "." + f);
    // CSV opens with a comment naming the scenario; JSON has no comments (the object names it).
    if (fmt_kind == OutputFormat::csv) file << "# scenario: " << s.name << "\n";
    write(fmt_kind, file);
  }
}

void describe_cluster(const config::Scenario& s, OutputFormat format, std::ostream& out) {
  auto cluster = topology::build_cluster(s.cluster);
  topology::DescribeFormat df = format == OutputFormat::json ? topology::DescribeFormat::json
                                : format == OutputFormat::dot ? topology::DescribeFormat::dot
                                                              : topology::DescribeFormat::text;
  topology::describe(*cluster, df, out);
}

// The html output of a collective sweep: busbw and time against size, with the table.
void write_sweep_views(const config::Scenario& s, const RunOptions& options,
                       const std::vector<workloads::SweepRow>& rows) {
  if (!wants(s, "html") || rows.empty()) return;
  std::vector<std::pair<double, double>> busbw, time_us;
  for (const auto& r : rows) {
    busbw.emplace_back(r.bytes.as_double(), r.busbw_gbytes);
    time_us.emplace_back(r.bytes.as_double(), r.time.us());
  }
  const std::string what(collectives::name(s.workload.sweep.collective));
  report::HtmlPage page(s.name);
  page.key_values("Summary", {{"collective", what},
                              {"ranks", std::to_string(rows.front().ranks)},
                              {"network model", s.network.model == config::NetworkModelKind::flow     ? "flow"
                                                : s.network.model == config::NetworkModelKind::packet ? "packet"
                                                                                                       : "analytical"},
                              {"largest size busbw", fmt::format("{:.1f} GB/s", rows.back().busbw_gbytes)}});
  page.section("Bus bandwidth",
               report::SvgPlot(what + " busbw", "size (bytes)", "busbw (GB/s)").log_x().line("predicted", busbw).svg());
  page.section("Time", report::SvgPlot(what + " time", "size (bytes)", "time (us)")
                           .log_x()
                           .log_y()
                           .line("predicted", time_us)
                           .svg());
  std::ostringstream table;
  report::write_sweep(rows, report::SweepFormat::table, table);
  page.section("Table", "<pre>" + report::xml_escape(table.str()) + "</pre>");
  page.scenario(config::dump_scenario(s));
  auto out = open_output(output_dir(s, options), s.name + ".html");
  out << page.render();
}

}  // namespace

std::vector<workloads::SweepRow> time_collective_sweep(const config::Scenario& s,
                                                       const collectives::ModelParameters& params,
                                                       int threads) {
  require_supported_model(s);
  return run_sweep(s, params, {.threads = threads}).rows;
}

workloads::JobsResult run_jobs(const config::Scenario& s, int threads) {
  require_supported_model(s);
  return run_jobs_online(s, {.threads = threads}).result;
}

Headline evaluate_scenario(const config::Scenario& s) {
  require_supported_model(s);
  Headline h;
  if (!s.jobs.empty()) {
    // One thread: `sweep` already evaluates its points in parallel.
    for (const workloads::JobTime& j : run_jobs_online(s, {.threads = 1}).result.jobs) {
      h.metrics.emplace_back(j.name + "_together_s", j.together_s);
      h.metrics.emplace_back(j.name + "_alone_s", j.alone_s);
      h.metrics.emplace_back(j.name + "_slowdown", j.slowdown());
    }
    return h;
  }
  if (s.workload.kind == workloads::WorkloadKind::collective_sweep) {
    // One thread: `sweep` already evaluates its points in parallel.
    const auto rows = run_sweep(s, model_parameters(s), {.threads = 1}).rows;
    if (rows.empty()) return h;
    const auto& last = rows.back();
    h.metrics = {{"size_bytes", static_cast<double>(last.bytes.count())},
                 {"time_us", last.time.us()},
                 {"busbw_GBps", last.busbw_gbytes}};
    return h;
  }
  const auto r = run_training_workload(s, {.threads = 1}).result;  // as above
  h.metrics = {{"iteration_time_s", r.iteration_time_s},
               {"tflops_per_gpu", r.tflops_per_gpu},
               {"mfu", r.mfu},
               {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu}};
  if (r.memory) {
    h.metrics.emplace_back("memory_gib", r.memory->total() / (1024.0 * 1024.0 * 1024.0));
    h.metrics.emplace_back("memory_fits", r.memory->fits() ? 1 : 0);
  }
  // Where the time goes, per GPU (the parts sum to the iteration time).
  const auto& b = r.breakdown;
  h.metrics.emplace_back("compute_s", b.compute.seconds());
  h.metrics.emplace_back("exposed_comm_s", b.exposed_total().seconds());
  h.metrics.emplace_back("host_wait_s", b.host.seconds());
  h.metrics.emplace_back("bubble_s", b.bubble.seconds());
  return h;
}

// The --stats line: what the run did, its peak memory, the page faults that brought it in, and its
// wall time.
void print_stats(const RunStats& st, std::chrono::steady_clock::time_point started) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // PFC's counters, or the lossy mode's, on a run with flow_control: pfc or lossy only (an ingress
  // queue held something).
  const std::string pfc =
      st.net.peak_ingress.count() > 0
          ? fmt::format(", {} PFC pauses, {:.3f} us paused over all ports, {} packets dropped, {} sent again, "
                        "peak ingress queue {} bytes",
                        st.net.pause_frames, st.net.paused.us(), st.net.drops, st.net.retransmitted,
                        st.net.peak_ingress.count())
          : std::string();
  // ECN's counters, on a run that marked (DCQCN or DCTCP); window cuts are DCTCP's.
  const std::string ecn = st.net.ecn_marks > 0 ? fmt::format(", {} ECN marks, {} window cuts", st.net.ecn_marks,
                                                             st.net.window_cuts)
                                               : std::string();
  std::cerr << fmt::format("simulate: stats: {} engine events, {} transfers, {} max-min solves of {} flows, {} "
                           "packet hops{}{}; peak memory {:.0f} MiB, {} page faults; wall {:.3f} s{}\n",
                           st.events, st.net.transfers, st.net.solves, st.net.flows, st.net.packets, pfc, ecn,
                           static_cast<double>(usage.ru_maxrss) / 1024.0, usage.ru_minflt + usage.ru_majflt, wall,
                           wall > 0 && st.events > 0 ? fmt::format(" ({:.3g} events/s)", static_cast<double>(st.events) / wall)
                                                     : std::string());
}

namespace {

// --max-wall stopped an online run (`what`): one line on stderr on how far it got, and the status.
int stopped(const workloads::ExecutionStopped& e, double max_wall_s, std::string_view what, std::string_view lost) {
  std::cerr << fmt::format("simulate: stopped at --max-wall {:g} s: {} had reached {:.6g} s simulated with {} of {} "
                           "ops done; no {}\n",
                           max_wall_s, what, e.reached().seconds(), e.done(), e.total(), lost);
  return kExitStopped;
}

}  // namespace

namespace {

// Refuses, in one line, a --partitions run that is not a collective sweep or an online training or
// trace run on the packet model.
void check_partitions(const config::Scenario& s) {
  const auto refuse = [&](const std::string& why) { throw InputError(where(s), "--partitions", why); };
  const char* what = "cuts a collective sweep's runs and an online training iteration on the packet model; ";
  if (s.network.model != config::NetworkModelKind::packet) refuse(std::string(what) + "this scenario runs on another model (--model packet)");
  if (!s.jobs.empty()) refuse(std::string(what) + "this scenario runs several jobs");
  if (s.workload.kind == workloads::WorkloadKind::collective_sweep) return;
  if (!runs_online(s)) refuse(std::string(what) + "this scenario's collectives are priced, not run online");
}

}  // namespace

int run_scenario(const config::Scenario& s, const RunOptions& options, std::ostream& out) {
  const auto started = std::chrono::steady_clock::now();
  sim::WallDeadline deadline = options.max_wall_s > 0 ? sim::WallDeadline(options.max_wall_s) : sim::WallDeadline();
  const RunControl control{.threads = options.threads,
                           .partitions = options.partitions,
                           .quiet = options.quiet,
                           .deadline = &deadline,
                           .max_memory_bytes = options.max_memory.as_double()};
  if (!options.quiet) {
    for (const std::string& note : s.notes) std::cerr << "simulate: warning: " << note << "\n";
  }
  if (options.describe) {
    describe_cluster(s, options.format, out);
    return 0;
  }
  if (options.format == OutputFormat::dot) {
    throw InputError(SourceLocation{}, "--format", "dot is only for --describe; expected table, csv or json");
  }
  require_supported_model(s);
  if (options.partitions > 1) check_partitions(s);
  const config::PacketSpec& packet = s.network.packet;
  const bool tcp_runs_it = s.cluster.nic.kind == topology::NicKind::tcp && packet.cc == "dctcp";
  const bool roce_runs_it = s.cluster.nic.kind == topology::NicKind::roce && packet.cc != "dctcp";
  // Warned where the scenario asked for ECN or a congestion control its NICs do not run, and on
  // TCP NICs without DCTCP, whose default (credits, no congestion control) is no TCP stack.
  const bool tcp_without_cc = s.cluster.nic.kind == topology::NicKind::tcp && packet.cc != "dctcp";
  if (s.network.model == config::NetworkModelKind::packet && (packet.ecn || packet.cc != "none") &&
      !tcp_runs_it && !roce_runs_it && (packet.cc_stated || tcp_without_cc) && !options.quiet) {
    std::cerr << "simulate: warning: network.packet: ECN marking and cc: " << packet.cc << " are "
              << (packet.cc == "dctcp" ? "TCP's" : "RoCE's") << "; on " << topology::name(s.cluster.nic.kind)
              << " NICs the packet model runs credit flow control without congestion control\n";
  }
  if (s.network.model == config::NetworkModelKind::packet && s.cluster.gpus_per_node > 1 &&
      s.cluster.scale_up.kind == topology::ScaleUpKind::none && !options.quiet) {
    std::cerr << "simulate: warning: cluster.scale_up.kind: none stages GPU-to-GPU copies through host memory, "
                 "which the packet model moves at PCIe line rate; it is optimistic here (up to 20x at large "
                 "sizes), use flow or analytical\n";
  }
  if (!s.jobs.empty()) {
    JobsRun run;
    try {
      run = run_jobs_online(s, control);
    } catch (const workloads::ExecutionStopped& e) {
      return stopped(e, options.max_wall_s, "a run", "job times");
    }
    const workloads::JobsResult& jobs = run.result;
    report::write_jobs(jobs, format_name(options.format), out);
    write_files(s, options,
                [&](OutputFormat f, std::ostream& file) { report::write_jobs(jobs, format_name(f), file); });
    if (options.fingerprint) out << fmt::format("fingerprint {:016x}\n", jobs.fingerprint);
    if (options.stats) print_stats(run.stats, started);  // the run together
    return 0;
  }
  if (s.workload.kind == workloads::WorkloadKind::collective_sweep) {
    // Refused before the sweep runs, not after its table is printed.
    if (wants(s, "trace")) {
      throw InputError(where(s), "output.formats",
                       "trace is written for training and trace workloads; a collective sweep "
                       "writes table, csv, json or html");
    }
    // The flow and packet models route every transfer, so their csv and json files come with
    // the per-link table; the analytical model routes nothing.
    const bool link_table =
        s.network.model != config::NetworkModelKind::analytical && (wants(s, "csv") || wants(s, "json"));
    std::vector<report::SweepLinkLoad> links;
    const SweepRun run = run_sweep(s, model_parameters(s), control, link_table ? &links : nullptr);
    const std::vector<workloads::SweepRow>& rows = run.rows;
    report::write_sweep(rows, sweep_format(options.format), out);
    write_files(s, options, [&](OutputFormat f, std::ostream& file) {
      report::write_sweep(rows, sweep_format(f), file);
    });
    if (link_table) {
      for (const OutputFormat f : {OutputFormat::csv, OutputFormat::json}) {
        if (!wants(s, format_name(f))) continue;
        auto file = open_output(output_dir(s, options), s.name + ".links." + std::string(format_name(f)));
        report::write_sweep_links(rows, links, sweep_format(f), file);
      }
    }
    write_sweep_views(s, options, rows);
    if (options.fingerprint) out << fmt::format("fingerprint {:016x}\n", run.fingerprint);
    if (run.stats.unpartitioned_rows > 0 && !options.quiet) {
      std::cerr << fmt::format("simulate: warning: --partitions: {} of {} sizes ran on one thread: their "
                               "schedule has senders wait on their own sends landing on another node, "
                               "which no cut between nodes can carry (results are the same)\n",
                               run.stats.unpartitioned_rows, rows.size());
    }
    if (options.stats) print_stats(run.stats, started);
    if (!run.stopped.empty()) {
      out.flush();
      std::cerr << "simulate: " << run.stopped << "\n";
      return kExitStopped;
    }
    return 0;
  }
  const bool views = wants(s, "trace") || wants(s, "html") || wants(s, "csv") || wants(s, "json");
  workloads::TrainingTrace trace;
  TrainingRun run;
  try {
    run = run_training_workload(s, control, views ? &trace : nullptr);
  } catch (const collectives::PricingStopped& e) {
    std::cerr << fmt::format("simulate: stopped at --max-wall {:g} s: {} of {} distinct collectives priced on flows; "
                             "no iteration time\n",
                             options.max_wall_s, e.priced(), e.total());
    return kExitStopped;
  } catch (const workloads::ExecutionStopped& e) {
    return stopped(e, options.max_wall_s, "the iteration", "iteration time");
  }
  const workloads::TrainingResult& result = run.result;
  if (views) write_training_views(s, options, run, trace);
  if (s.workload.kind == workloads::WorkloadKind::training && !options.quiet) {
    for (const std::string& line : workloads::training_advice(s.workload.training, s.cluster, result))
      std::cerr << "simulate: warning: " << line << "\n";
  }
  report::write_training(result, format_name(options.format), out);
  write_files(s, options, [&](OutputFormat f, std::ostream& file) {
    report::write_training(result, format_name(f), file);
  });
  if (options.fingerprint) out << fmt::format("fingerprint {:016x}\n", result.fingerprint);
  if (options.stats) {
    // The executor's events; on flows, each distinct collective is one max-min solve of its flows.
    RunStats st = run.stats;
    st.events = result.events;
    if (const auto* flows = dynamic_cast<const collectives::FlowCollectiveModel*>(run.model.get())) {
      st.net.solves = flows->solves();
      st.net.flows = flows->flows();
    }
    print_stats(st, started);
  }
  return 0;
}

}  // namespace dtsim::runner
