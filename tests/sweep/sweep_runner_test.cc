#include "report/sweep_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <sstream>

#include "config/sweep.h"
#include "report/sweep_table.h"
#include "stand_in.h"

namespace dtsim::report {
namespace {

using dtsim::testing::CountingEvaluator;
using dtsim::testing::stand_in_load;

const char* kSweep =
    "base: base.yaml\n"
    "vary:\n"
    "  cluster.fabric.oversubscription: [1, 2, 4]\n"
    "  cluster.nodes: [4, 8, 16, 32]\n"
    "  workload.parallel.tp: [4, 8]\n";

SweepRunOptions with_jobs(int jobs) {
  SweepRunOptions opt;
  opt.jobs = jobs;
  return opt;
}

struct Fixture {
  config::Sweep sweep = config::read_sweep_text(kSweep, "sweeps/test.yaml");
  std::vector<config::SweepPoint> points = config::expand_sweep(sweep, stand_in_load);

  SweepTable table(std::vector<SweepRow> rows, std::optional<std::string> shard = {}) const {
    SweepTable t;
    t.sweep_file = sweep.file;
    t.base_file = sweep.base;
    t.base_scenario = "name: base\ncluster: {nodes: 4}\n";
    t.varied_keys = sweep.varied_keys();
    t.shard = std::move(shard);
    t.rows = std::move(rows);
    if (!t.shard) mark_pareto(t);
    return t;
  }
  static std::string csv(const SweepTable& t) {
    std::ostringstream os;
    write_sweep_csv(t, os);
    return os.str();
  }
  std::string run_csv(SweepRunOptions opt, const std::vector<SweepRow>& previous = {}) const {
    CountingEvaluator eval;
    return csv(table(run_sweep(sweep, points, stand_in_load, eval.fn(), previous, opt)));
  }
};

TEST(SweepRunner, OutputIsTheSameOnOneThreadAndOnMany) {
  Fixture f;
  EXPECT_EQ(f.run_csv(with_jobs(1)), f.run_csv(with_jobs(4)));
}

// `--jobs` above the cores runs that many points at once: TBB alone would cap the arena at the
// cores and say so on stderr (sim::for_each_row raises its limit for the loop).
TEST(SweepRunner, MoreJobsThanCoresRunThatManyPointsAtOnce) {
  const Fixture f;
  const int jobs = static_cast<int>(std::thread::hardware_concurrency()) + 2;
  std::atomic<int> running{0}, most{0};
  const Evaluator slow = [&](const config::Scenario&) {
    const int now = ++running;
    for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    --running;
    return Metrics{{"iteration_time_s", 1.0}};
  };
  const auto rows = run_sweep(f.sweep, f.points, stand_in_load, slow, {}, with_jobs(jobs));
  EXPECT_EQ(rows.size(), f.points.size());
  EXPECT_EQ(most.load(), jobs);
}

TEST(SweepRunner, RowsAreInPointIndexOrder) {
  Fixture f;
  CountingEvaluator eval;
  const auto rows = run_sweep(f.sweep, f.points, stand_in_load, eval.fn(), {}, with_jobs(3));
  ASSERT_EQ(rows.size(), f.points.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].index, i);
    EXPECT_EQ(rows[i].values, f.points[i].values);
  }
}

TEST(SweepRunner, ShardRunsOnlyPointsWhoseIndexModNIsI) {
  Fixture f;
  CountingEvaluator eval;
  SweepRunOptions opt;
  opt.shard = Shard::parse("1/3");
  const auto rows = run_sweep(f.sweep, f.points, stand_in_load, eval.fn(), {}, opt);
  EXPECT_EQ(rows.size(), 8u);
  EXPECT_EQ(eval.calls.load(), 8);
  for (const SweepRow& r : rows) EXPECT_EQ(r.index % 3, 1u);
}

TEST(SweepRunner, MergedShardsEqualTheUnshardedTableByteForByte) {
  Fixture f;
  const std::string whole = f.run_csv(with_jobs(2));
  std::vector<SweepTable> parts;
  for (std::size_t i = 0; i < 3; ++i) {
    CountingEvaluator eval;
    SweepRunOptions opt = with_jobs(2);
    opt.shard = {i, 3};
    SweepTable part = f.table(run_sweep(f.sweep, f.points, stand_in_load, eval.fn(), {}, opt),
                              opt.shard.to_string());
    // Through text and back, as shard files travel.
    std::istringstream in(Fixture::csv(part));
    parts.push_back(read_sweep_csv(in, "shard"));
  }
  EXPECT_EQ(Fixture::csv(f.table(rows_for_points(parts, f.sweep.varied_keys(), f.points))), whole);
}

TEST(SweepRunner, ResumeSkipsPointsAlreadyInTheTable) {
  Fixture f;
  CountingEvaluator first;
  auto rows = run_sweep(f.sweep, f.points, stand_in_load, first.fn(), {}, {});
  rows.erase(rows.begin() + 5, rows.end());  // as if interrupted after five points
  CountingEvaluator second;
  const auto resumed = run_sweep(f.sweep, f.points, stand_in_load, second.fn(), rows, {});
  EXPECT_EQ(second.calls.load(), static_cast<int>(f.points.size()) - 5);
  EXPECT_EQ(Fixture::csv(f.table(resumed)), f.run_csv({}));
}

TEST(SweepRunner, ResumedRowsAreMatchedByValuesNotByIndex) {
  Fixture f;
  CountingEvaluator eval;
  auto rows = run_sweep(f.sweep, f.points, stand_in_load, eval.fn(), {}, {});
  SweepRow moved = rows[7];
  moved.index = 999;  // an older sweep numbered it differently
  CountingEvaluator second;
  const auto resumed = run_sweep(f.sweep, f.points, stand_in_load, second.fn(), {moved}, {});
  EXPECT_EQ(second.calls.load(), static_cast<int>(f.points.size()) - 1);
  EXPECT_EQ(resumed[7].index, 7u);
}

TEST(SweepRunner, PointThatFailsToLoadGetsARowWithTheError) {
  const config::Sweep sw = config::read_sweep_text(
      "base: b.yaml\nvary: {cluster.nodes: [4], bogus.key: [1]}\n", "sweeps/t.yaml");
  const auto points = config::expand_sweep(sw, stand_in_load);
  CountingEvaluator eval;
  const auto rows = run_sweep(sw, points, stand_in_load, eval.fn(), {}, {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NE(rows[0].error.find("bogus.key"), std::string::npos);
  EXPECT_TRUE(rows[0].metrics.empty());
  EXPECT_EQ(eval.calls.load(), 0);
}

TEST(SweepRunner, CheckpointsCarryFinishedRowsInIndexOrder) {
  Fixture f;
  CountingEvaluator eval;
  std::size_t checkpoints = 0;
  SweepRunOptions opt = with_jobs(2);
  opt.checkpoint_every = std::chrono::milliseconds(0);
  opt.on_checkpoint = [&](const std::vector<SweepRow>& rows) {
    ++checkpoints;
    EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end(), [](const SweepRow& a, const SweepRow& b) {
      return a.index < b.index;
    }));
  };
  run_sweep(f.sweep, f.points, stand_in_load, eval.fn(), {}, opt);
  EXPECT_EQ(checkpoints, f.points.size());
}

TEST(SweepRunner, ProgressCountsUpToTheRunsTotal) {
  Fixture f;
  CountingEvaluator eval;
  std::size_t last_done = 0;
  std::size_t last_total = 0;
  SweepRunOptions opt = with_jobs(2);
  opt.on_progress = [&](std::size_t done, std::size_t total) {
    last_done = std::max(last_done, done);
    last_total = total;
  };
  run_sweep(f.sweep, f.points, stand_in_load, eval.fn(), {}, opt);
  EXPECT_EQ(last_done, f.points.size());
  EXPECT_EQ(last_total, f.points.size());
}

TEST(SweepRunner, EveryRowCarriesCapexAndPower) {
  Fixture f;
  CountingEvaluator eval;
  for (const SweepRow& r : run_sweep(f.sweep, f.points, stand_in_load, eval.fn(), {}, {})) {
    EXPECT_GT(r.capex_usd, 0);
    EXPECT_GT(r.power_w, 0);
  }
}

TEST(Shard, ParsesIndexOverCount) {
  const Shard s = Shard::parse("2/5");
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 5u);
  EXPECT_TRUE(s.owns(7));
  EXPECT_FALSE(s.owns(8));
}

TEST(Shard, IndexOutOfRangeIsAnError) {
  EXPECT_THROW(Shard::parse("5/5"), InputError);
  EXPECT_THROW(Shard::parse("1/0"), InputError);
  EXPECT_THROW(Shard::parse("-1/4"), InputError);
  EXPECT_THROW(Shard::parse("1"), InputError);
  EXPECT_THROW(Shard::parse("1/4x"), InputError);
}

}  // namespace
}  // namespace dtsim::report
