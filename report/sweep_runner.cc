#include "report/sweep_runner.h"

#include <map>
#include <mutex>
#include <optional>

#include "report/cluster_bill.h"
#include "sim/error.h"
#include "sim/parallel_rows.h"

namespace dtsim::report {

Shard Shard::parse(std::string_view text, const std::string& flag) {
  const std::size_t slash = text.find('/');
  auto bad = [&]() {
    return InputError(SourceLocation{}, flag,
                      "expected I/N with 0 <= I < N, e.g. 0/4, got \"" + std::string(text) + "\"");
  };
  if (slash == std::string_view::npos) throw bad();
  Shard s;
  try {
    std::size_t used_i = 0;
    std::size_t used_n = 0;
    const std::string i(text.substr(0, slash));
    const std::string n(text.substr(slash + 1));
    if (i.empty() || n.empty() || i[0] == '-' || n[0] == '-') throw bad();
    s.index = std::stoul(i, &used_i);
    s.count = std::stoul(n, &used_n);
    if (used_i != i.size() || used_n != n.size()) throw bad();
  } catch (const std::logic_error&) {
    throw bad();
  }
  if (s.count == 0 || s.index >= s.count) throw bad();
  return s;
}

std::vector<SweepRow> rows_for_points(const std::vector<SweepTable>& tables,
                                      const std::vector<std::string>& varied_keys,
                                      const std::vector<config::SweepPoint>& points) {
  std::map<std::vector<std::string>, const SweepRow*> by_values;
  for (const SweepTable& t : tables) {
    if (t.varied_keys != varied_keys) {
      std::string want;
      for (const std::string& k : varied_keys) {
        if (!want.empty()) want += ", ";
        want += k;
      }
      throw InputError(SourceLocation{t.sweep_file, 0, 0}, "varied_keys",
                       "this table varies other keys than the sweep (" + want + ")");
    }
    for (const SweepRow& r : t.rows) by_values.emplace(r.values, &r);
  }
  std::vector<SweepRow> rows;
  for (const config::SweepPoint& p : points) {
    if (auto it = by_values.find(p.values); it != by_values.end()) {
      SweepRow r = *it->second;
      r.index = p.index;
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

std::vector<SweepRow> run_sweep(const config::Sweep& sweep,
                                const std::vector<config::SweepPoint>& points,
                                const config::ScenarioLoader& load, const Evaluator& evaluate,
                                const std::vector<SweepRow>& previous,
                                const SweepRunOptions& options) {
  std::map<std::vector<std::string>, const SweepRow*> done;
  for (const SweepRow& r : previous) done.emplace(r.values, &r);

  std::vector<const config::SweepPoint*> mine;
  for (const config::SweepPoint& p : points) {
    if (options.shard.owns(p.index)) mine.push_back(&p);
  }
  std::vector<std::optional<SweepRow>> rows(mine.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (auto it = done.find(mine[i]->values); it != done.end()) {
      rows[i] = *it->second;
      rows[i]->index = mine[i]->index;
    } else {
      todo.push_back(i);
    }
  }

  std::mutex mu;  // guards the rows' publication, progress and checkpoints
  std::size_t finished = 0;
  auto last_checkpoint = std::chrono::steady_clock::now();
  auto snapshot = [&]() {
    std::vector<SweepRow> out;
    for (const auto& r : rows) {
      if (r) out.push_back(*r);
    }
    return out;
  };

  auto run_one = [&](std::size_t i) {
    const config::SweepPoint& p = *mine[i];
    SweepRow row;
    row.index = p.index;
    row.values = p.values;
    try {
      const config::Scenario s = load(sweep.base, p.overrides);
      const PointCost c = price(count_cluster(s.cluster), sweep.cost);
      row.capex_usd = c.capex_usd;
      row.power_w = c.power_w;
      row.metrics = evaluate(s);
    } catch (const InputError& e) {
      row.metrics.clear();
      row.error = e.what();
    }
    std::lock_guard lock(mu);
    rows[i] = std::move(row);
    ++finished;
    if (options.on_progress) options.on_progress(finished, todo.size());
    const auto now = std::chrono::steady_clock::now();
    if (options.on_checkpoint && now - last_checkpoint >= options.checkpoint_every) {
      last_checkpoint = now;
      options.on_checkpoint(snapshot());
    }
  };

  // More jobs than cores run that many (for_each_row raises TBB's limit, which would otherwise
  // cap them at the cores and say so on stderr).
  sim::for_each_row(todo.size(), options.jobs, [&](std::size_t k) { run_one(todo[k]); });
  return snapshot();
}

}  // namespace dtsim::report
