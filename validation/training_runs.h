// Published training runs (tests/workloads/data/training_runs_dev.csv and the CSVs beside it in
// tests/workloads/data, which add MoE and attention-shape columns) turned into the scenarios
// dtsim would be given for them: a TrainingSpec and a ClusterSpec per row, with the published
// iteration time to compare against. Framework features follow the row's framework column.
// The accuracy tests (tests/workloads/accuracy_test.cc) and `calibrate --training` read them.
//   for (const PublishedRun& r : read_published_runs(path)) run_training(r.spec, r.cluster, comm);
#pragma once

#include <string>
#include <vector>

#include "topology/cluster_spec.h"
#include "workloads/workload_spec.h"

namespace dtsim::validation {

struct PublishedRun {
  std::string id;
  std::string framework;
  workloads::TrainingSpec spec;
  topology::ClusterSpec cluster;
  double iteration_time_s = 0;
  double tflops_per_gpu = 0;
  double peak_memory_gib = 0;  // published peak HBM per GPU (column peak_memory_gib; 0: not published)
  bool moe = false;
  std::string unsupported;  // why dtsim cannot describe this run (its GPU has no preset); empty when it can
};

std::vector<PublishedRun> read_published_runs(const std::string& path);

}  // namespace dtsim::validation
