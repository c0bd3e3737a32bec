// Published training runs (tests/workloads/data/training_runs_dev.csv and the CSVs beside it
// tests/workloads/data, which add MoE and attention-shape columns) turned into the scenarios
// dtsim would be given for them: a TrainingSpec and a ClusterSpec per row, with the published
// iteration time to compare against. Framework features follow the row's framework column.
#pragma once

#include <string>
#include <vector>

#include "topology/cluster_spec.h"
#include "workloads/workload_spec.h"

namespace dtsim::workloads::testing {

struct PublishedRun {
  std::string id;
  std::string framework;
  TrainingSpec spec;
  topology::ClusterSpec cluster;
  double iteration_time_s = 0;
  double tflops_per_gpu = 0;
  double peak_memory_gib = 0;  // published peak HBM per GPU (column peak_memory_gib; 0: not published)
  bool moe = false;
  std::string unsupported;  // why dtsim cannot describe this run (its GPU has no preset); empty when it can
};

// The dev set's path: $DTSIM_TRAINING_RUNS, else tests/workloads/data/training_runs_dev.csv.
std::string training_runs_csv();
std::vector<PublishedRun> read_published_runs(const std::string& path);

}  // namespace dtsim::workloads::testing
