// Runs one resolved scenario and writes its results: the piece `simulate` and `sweep` share.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectives/model_parameters.h"
#include "config/scenario.h"
#include "sim/units.h"
#include "workloads/collective_sweep.h"

namespace dtsim::runner {

enum class OutputFormat { table, csv, json, dot };  // dot: only with describe

struct RunOptions {
  OutputFormat format = OutputFormat::table;
  std::optional<std::string> out_dir;  // overrides scenario.output.dir
  bool quiet = false;                  // no progress, no banners on stderr
  bool fingerprint = false;            // print the engine's event-trace fingerprint after the run
  // Threads for a collective sweep's rows on the flow or packet model, or for pricing a training
  // or trace run's distinct collectives on the flow model (0: all cores); the analytical model
  // uses one. Outputs do not depend on it.
  int threads = 0;
  // Partitions for each size of a collective sweep on the packet model: one run spread over that
  // many threads (sim/partitioned_engine.h); outputs do not depend on it. 1: a plain engine.
  int partitions = 1;
  bool describe = false;               // print what would run (graph sizes, routes), then stop
  bool stats = false;                  // one line on stderr of what the run did (simulate --stats)
  // Seconds of wall time after which a collective sweep on flows or packets stops: the rows done
  // are written, one line on stderr says what was left, and run_scenario returns kExitStopped.
  // A training or trace run on flows stops pricing its collectives the same way, with no result.
  // 0: no limit.
  double max_wall_s = 0;
  // The most memory a collective sweep on flows or packets may hold; one that would hold more is
  // refused before it starts. 0: the machine's available memory.
  Bytes max_memory;
};

// run_scenario's status when --max-wall stopped the run before every row was done.
inline constexpr int kExitStopped = 3;

// The headline results of one run, in a fixed order, for sweep rows: for training
// iteration_time_s, tflops_per_gpu, mfu, tokens_per_s_per_gpu, memory_gib and memory_fits (1 or
// 0) where there is a memory estimate, then compute_s, exposed_comm_s, host_wait_s and bubble_s
// (per GPU, adding up to the iteration time); size_bytes, time_us and busbw_GBps at the largest
// size for a collective sweep.
struct Headline {
  std::vector<std::pair<std::string, double>> metrics;
};

// A collective-sweep scenario's rows timed on its network model (analytical, flow or packet) with
// `params`, as `simulate` prints them; the flow and packet models run the rows on `threads`
// workers (0: all cores). What validate predicts with when the scenario names flow or packet.
std::vector<workloads::SweepRow> time_collective_sweep(const config::Scenario& scenario,
                                                       const collectives::ModelParameters& params,
                                                       int threads);

// A scenario with jobs: each job's iteration time together with the others and alone on the same
// nodes (its oracle), on the scenario's flow or packet model, the runs on `threads` workers (0:
// all cores). The result does not depend on `threads`.
workloads::JobsResult run_jobs(const config::Scenario& scenario, int threads);

// Evaluates a scenario without writing anything: what a sweep calls once per point. With jobs,
// each job's <name>_together_s, <name>_alone_s and <name>_slowdown (the first job's time together
// is then the sweep's time objective).
Headline evaluate_scenario(const config::Scenario& scenario);

// Runs the scenario's workload on its network model, writes results to `out` (stdout for the
// command) in the chosen format. Returns the process exit status (0 on success). Throws
// InputError for problems in the scenario that only show when running it.
int run_scenario(const config::Scenario& scenario, const RunOptions& options, std::ostream& out);

}  // namespace dtsim::runner
