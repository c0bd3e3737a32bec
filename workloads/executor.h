// Executor: runs a Workload's rank graphs on the sim engine. Compute ops are priced by the
// ComputeModel, collectives and point-to-point transfers by a CollectiveCostModel (analytical,
// or any other backend behind that interface), handed all the distinct ones first (prepare, so a
// flow model can price them side by side). Each stream runs its ops in program order once
// their dependencies are done. Priced, a collective also waits for its communicator's other
// simulated members and a receive completes when its matching send has; online (a
// CommunicationRunner), each rank starts its part of a collective or send on its own and the
// network joins them, and a receive completes when its send's bytes have landed. The result is the iteration time, the
// per-GPU split of that time into compute, exposed communication per parallelism, waiting on
// the host and idle (pipeline bubble), and the critical path.
//   Executor ex(compute_model, cost_model);
//   ExecutionResult r = ex.run(workload);
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "collectives/cost_model.h"
#include "sim/engine.h"
#include "workloads/compute_model.h"
#include "workloads/op_graph.h"

namespace dtsim::workloads {

// Where a GPU's iteration time goes; the parts sum to the iteration time. Communication is
// "exposed" only while the compute stream is idle; idle time with only host work in flight (CPU
// offload copies, a trace's CPU operators) is waiting on the host; idle time with nothing in
// flight is the pipeline bubble (waiting for another stage).
struct TimeBreakdown {
  Time compute;
  std::array<Time, 5> exposed{};  // indexed by CommCategory: tp, cp, ep, dp, pp
  Time host;
  Time bubble;

  Time exposed_total() const;
  Time total() const { return compute + exposed_total() + host + bubble; }
};

struct CriticalStep {
  int rank = 0;
  uint32_t op = 0;
  Time start, end;
};

struct ExecutionResult {
  Time iteration;
  TimeBreakdown breakdown;            // average per GPU (weighted by RankGraph::represents)
  std::vector<TimeBreakdown> per_rank;
  std::vector<Time> rank_end;         // when each rank's last op ended (several jobs: jobs.h)
  std::vector<CriticalStep> critical_path;  // first op to last
  TimeBreakdown critical_split;       // the critical path's time by what each step was
  uint64_t events = 0;
  uint64_t fingerprint = 0;           // the engine's event-trace fingerprint
  // Start and end of every op, by rank, when ExecutorOptions::record_ops is set.
  std::vector<std::vector<std::pair<Time, Time>>> op_times;
};

// Runs a workload's communication on a network model that shares the executor's engine (online
// execution: online_network.h), so that every rank's collectives and sends in flight at an
// instant share the links. Without one the executor prices each operation alone with its
// CollectiveCostModel and waits that long.
class CommunicationRunner {
 public:
  virtual ~CommunicationRunner() = default;
  // The rank on GPU `gpu` reaches `op` at engine.now(): a collective on `comm`, which each member
  // reaches on its own, or a send whose pair communicator is `comm` (sender, receiver), reached by
  // its sender, its receiver's buffer taken as posted. `instance` numbers the op among those its
  // members run on `comm` (every member numbers alike; a send counts its sender's). It runs the
  // op's `repeat` instances back to back and calls done.on_event(engine, payload) once the rank's
  // part of the last has ended; for a send, also done.on_event(engine, delivered) once the last
  // byte of the last has landed at the receiver.
  virtual void start(sim::Engine& engine, const Op& op, const collectives::Communicator& comm, int gpu,
                     uint64_t instance, sim::EventHandler& done, uint64_t payload, uint64_t delivered) = 0;
  // The engine site (sim/event.h) where `gpu`'s rank runs: its events, and the start of its parts.
  virtual sim::Site site_of_gpu(int gpu) const = 0;
};

// How a run is spread over a sim::PartitionedEngine: each site's partition and the lookahead
// (network::ClusterPartition gives both for a cluster's devices).
struct EnginePartitions {
  std::vector<uint32_t> owner;
  Time lookahead;
};

// How far a run has got: ops completed of all, updated by Executor::run as it goes (a progress
// bar's watch reads it on the run's thread).
struct ExecutionProgress {
  std::atomic<uint64_t> done = 0;  // counted from every partition's thread
  uint64_t total = 0;
};

struct ExecutorOptions {
  bool record_ops = false;
  bool critical_path = true;
  // Online execution: collectives and sends on a communicator run on this (it must outlive
  // run()); the cost model is then asked for nothing. Null: each is priced by the cost model.
  CommunicationRunner* network = nullptr;
  // Watches the run's engine (a wall-clock limit, progress); a run it stops throws
  // ExecutionStopped. Null: none.
  sim::EngineWatch* watch = nullptr;
  ExecutionProgress* progress = nullptr;  // kept up to date when set
  // Online execution on a sim::PartitionedEngine cut so (one thread per partition, the serial
  // run's result and fingerprint). Null: a plain sim::Engine.
  const EnginePartitions* partitions = nullptr;
};

// Online execution as the training entry points take it: the network the communication runs on
// (null: each collective priced alone by the cost model), a watch on the engine and the progress
// it reads (null: none), and the job's copies beside it.
struct OnlineExecution {
  CommunicationRunner* network = nullptr;
  sim::EngineWatch* watch = nullptr;
  ExecutionProgress* progress = nullptr;
  const EnginePartitions* partitions = nullptr;  // ExecutorOptions::partitions
  // Copies of the job run beside it, these many GPUs further on (add_copies, op_graph.h): its
  // neighbours on the fabric (network.background: replicas). Empty: none.
  std::vector<int> copies;
};

// What Executor::run throws when its watch stopped the engine before the iteration ended: the
// simulated time reached and the ops done by then, of all.
class ExecutionStopped : public std::runtime_error {
 public:
  ExecutionStopped(Time reached, size_t done, size_t total)
      : std::runtime_error("execution stopped"), reached_(reached), done_(done), total_(total) {}
  Time reached() const { return reached_; }
  size_t done() const { return done_; }
  size_t total() const { return total_; }

 private:
  Time reached_;
  size_t done_;
  size_t total_;
};

class Executor {
 public:
  Executor(const ComputeModel& compute, const collectives::CollectiveCostModel& comm,
           ExecutorOptions options = {});
  ExecutionResult run(const Workload& w) const;

 private:
  const ComputeModel& compute_;
  const collectives::CollectiveCostModel& comm_;
  ExecutorOptions options_;
};

}  // namespace dtsim::workloads
