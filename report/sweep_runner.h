// Sweep runner: evaluates a sweep's points in parallel (sim::for_each_row) and turns each into a SweepRow
// with its metrics, capex and power. It takes the loader and the evaluation as functions, so the
// `sweep` command passes config::load_scenario and apps::evaluate_scenario while tests pass
// stand-ins, and it skips points whose rows an earlier run already wrote (resume).
//   report::SweepTable t = report::run_sweep(sweep, points, load, evaluate, {}, options);
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/sweep.h"
#include "report/sweep_table.h"

namespace dtsim::report {

using Metrics = std::vector<std::pair<std::string, double>>;
using Evaluator = std::function<Metrics(const config::Scenario&)>;

// This process's share of the points: those with index % count == index. Shards' rows are
// disjoint and together are every point.
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;

  bool owns(std::size_t point) const { return point % count == index; }
  std::string to_string() const { return std::to_string(index) + "/" + std::to_string(count); }
  // "I/N" with 0 <= I < N; throws InputError naming `flag` otherwise.
  static Shard parse(std::string_view text, const std::string& flag = "--shard");
};

struct SweepRunOptions {
  int jobs = 0;  // worker threads; 0: all cores
  Shard shard;
  // Called after each point (from worker threads, one call at a time) with points done so far
  // and this run's total; for a progress bar.
  std::function<void(std::size_t done, std::size_t total)> on_progress;
  // Called at most once per `checkpoint_every`, one call at a time, with the rows finished so far
  // in index order; the command saves them so that an interrupted sweep resumes where it was.
  std::function<void(const std::vector<SweepRow>& rows)> on_checkpoint;
  std::chrono::milliseconds checkpoint_every{2000};
};

// Rows for the shard's points, ascending by index. A point whose varied values match a row of
// `previous` reuses that row (renumbered) instead of running again. A point whose scenario does
// not load or run (InputError) gets a row with the message in `error`; any other exception ends
// the sweep. Pareto flags are not set: they depend on every row (mark_pareto).
std::vector<SweepRow> run_sweep(const config::Sweep& sweep,
                                const std::vector<config::SweepPoint>& points,
                                const config::ScenarioLoader& load, const Evaluator& evaluate,
                                const std::vector<SweepRow>& previous,
                                const SweepRunOptions& options = {});

// The rows of several tables (shards, or a partial run and its rest) as one table for `sweep`'s
// points: rows are matched to points by their varied values and renumbered; rows that match no
// point are dropped. Throws InputError when a table's varied keys are not the sweep's.
std::vector<SweepRow> rows_for_points(const std::vector<SweepTable>& tables,
                                      const std::vector<std::string>& varied_keys,
                                      const std::vector<config::SweepPoint>& points);

}  // namespace dtsim::report
