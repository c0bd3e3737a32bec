// Sweep: a SWEEP.yaml file read into the list of points a planner wants evaluated. A sweep names
// a base scenario, the keys to vary (cartesian product, first key outermost), groups of keys that
// advance together (`zip:`), conditions that drop invalid combinations (`where:`), and prices and
// power draws for costing each point. Each point is a list of overrides for load_scenario().
//   config::Sweep sw = config::read_sweep("scenarios/sweeps/oversub.yaml");
//   for (const auto& p : config::expand_sweep(sw, config::load_scenario))
//     config::Scenario s = config::load_scenario(sw.base, p.overrides);
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/loader.h"
#include "config/scenario.h"
#include "sim/error.h"

namespace dtsim::config {

// A value inside a `where:` expression: a number, or a string compared with == and != only.
using SweepValue = std::variant<double, std::string>;

// One `where:` condition, parsed once and evaluated per point. The language: numbers, strings in
// double quotes, names (`tp`, `cluster.nodes`, `gpus`), + - * / %, unary -, comparisons
// == != < <= > >=, ! && || and parentheses, with C precedence. A condition holds when it is a
// non-zero number. Parse errors throw std::invalid_argument naming the column.
class SweepCondition {
 public:
  struct Node;
  using Lookup = std::function<std::optional<SweepValue>(std::string_view name)>;

  static SweepCondition parse(std::string_view text);

  // Throws std::invalid_argument for a name `lookup` does not know or a type mismatch.
  SweepValue evaluate(const Lookup& lookup) const;
  bool holds(const Lookup& lookup) const;
  const std::string& text() const { return text_; }

 private:
  std::shared_ptr<const Node> root_;
  std::string text_;
};

// Prices in USD and power draws in watts. `link` is the cable per network link; `optics` is per
// transceiver (two per network link). Defaults are list-price estimates documented in
// docs/sweep.md, so a sweep without a `cost:` block still ranks points.
struct CostModel {
  double gpu_usd = 30000;
  double switch_usd = 40000;
  double nic_usd = 1500;
  double link_usd = 600;
  double optics_usd = 0;
  double gpu_w = 700;
  double switch_w = 1500;
  double nic_w = 25;
  double optics_w = 0;
};

// One axis of the product: a single `vary:` key, or a `zip:` group whose keys advance together.
struct SweepAxis {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;  // values[i][k]: the i-th step's value for keys[k]
};

struct Sweep {
  std::string file;             // the sweep file, as given
  std::string name;             // defaults to the file's stem
  std::string base;             // base scenario path, resolved against the sweep file's folder
  std::vector<SweepAxis> axes;  // `vary:` keys in file order, then `zip:` groups in file order
  std::vector<std::pair<SweepCondition, SourceLocation>> where;
  CostModel cost;

  // Every varied key in column order: the axes' keys, flattened.
  std::vector<std::string> varied_keys() const;
};

// One combination that passed every `where:` condition. `index` counts surviving points in
// product order; it identifies a point for --shard and orders every output.
struct SweepPoint {
  std::size_t index = 0;
  std::vector<std::string> values;  // one per Sweep::varied_keys(), as written in the file
  std::vector<Override> overrides;  // key=value for load_scenario
};

// Reads and checks a sweep file; every mistake throws InputError naming file, line and key.
Sweep read_sweep(const std::string& path);
Sweep read_sweep_text(std::string_view yaml, const std::string& source_name);

using ScenarioLoader =
    std::function<Scenario(const std::string& path, const std::vector<Override>& overrides)>;

// The points of the product that satisfy `where:`. Conditions see each varied key by its dotted
// name and by its last segment when that is unambiguous, the base file's own keys by dotted name,
// and derived names (gpus, nodes, gpus_per_node, tp, pp, dp, ep, cp, vp, layers, micro_batch,
// global_batch) taken from the point's values where varied, else from the base scenario, which is
// loaded once through `load`.
std::vector<SweepPoint> expand_sweep(const Sweep& sweep, const ScenarioLoader& load);

}  // namespace dtsim::config
