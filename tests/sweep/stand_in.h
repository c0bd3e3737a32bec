// Stand-ins for the scenario loader and the models, so the sweep logic is tested on its own: the
// loader sets the few fields the tests vary, the evaluation is a closed-form toy whose time falls
// with nodes and grows with tp, and both count their calls.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "config/loader.h"
#include "config/scenario.h"
#include "report/sweep_runner.h"
#include "sim/error.h"

namespace dtsim::testing {

inline config::Scenario stand_in_load(const std::string& path,
                                      const std::vector<config::Override>& overrides) {
  config::Scenario s;
  s.source_file = path;
  s.cluster.nodes = 4;
  s.cluster.gpus_per_node = 8;
  s.workload.training.parallel.tp = 8;
  s.workload.training.parallel.dp = 4;
  for (const config::Override& o : overrides) {
    if (o.key == "cluster.nodes") {
      s.cluster.nodes = std::stoi(o.value);
    } else if (o.key == "cluster.fabric.oversubscription") {
      s.cluster.fabric.oversubscription = std::stod(o.value);
    } else if (o.key == "workload.parallel.tp") {
      s.workload.training.parallel.tp = std::stoi(o.value);
    } else if (o.key == "workload.parallel.pp") {
      s.workload.training.parallel.pp = std::stoi(o.value);
    } else if (o.key == "workload.parallel.dp") {
      s.workload.training.parallel.dp = std::stoi(o.value);
    } else {
      throw InputError(SourceLocation{path, 0, 0}, o.key, "unknown key");
    }
  }
  return s;
}

struct CountingEvaluator {
  std::atomic<int> calls{0};

  report::Evaluator fn() {
    return [this](const config::Scenario& s) {
      ++calls;
      const double t = 100.0 / s.cluster.nodes + 0.1 * s.workload.training.parallel.tp +
                       0.5 * s.cluster.fabric.oversubscription;
      return report::Metrics{{"iteration_time_s", t}, {"mfu", 1.0 / t}};
    };
  }
};

}  // namespace dtsim::testing
