// The validation datasets: each real measurement file in validation/measured, the
// scenario under scenarios/validation that describes its hardware, and the measured rows
// (in- and out-of-place times of one size averaged). Shared by the accuracy test and the
// `validation_table` program that writes docs/validation-errors.md.
#pragma once

#include <string>
#include <vector>

#include "collectives/analytical_model.h"
#include "collectives/cost_model.h"
#include "topology/cluster_spec.h"

namespace dtsim::collectives::validation {

struct Case {
  std::string scenario;  // file under scenarios/validation
  std::string measured;  // file under validation/measured
  std::string label;     // the value of the collective column of the rows this case checks
};

struct MeasuredRow {
  double bytes = 0;
  double time_us = 0;  // mean of the in- and out-of-place rows of this size
};

struct LoadedScenario {
  topology::ClusterSpec cluster;
  CollectiveOptions options;
  CollectiveKind collective = CollectiveKind::all_reduce;
  int gpus_per_thread = 1;  // nccl-tests -g, as the source ran it (workload.gpus_per_thread)
};

const std::vector<Case>& cases();

// ${DTSIM_SOURCE_DIR}/validation/measured; throws std::runtime_error when absent, so a tree
// without the measurements fails instead of passing vacuously.
std::string measured_dir(const std::string& source_dir);
std::vector<MeasuredRow> read_measured(const std::string& path, const std::string& label);
// Loads a scenario with config::load_scenario (presets, units, the schema's checks).
LoadedScenario load_case_scenario(const std::string& path);

struct CaseError {
  double mape_all = 0;    // mean absolute percentage error of time_us over every size
  double mape_large = 0;  // over sizes >= 64 MiB (0 when there are none)
  int sizes = 0;
  int large_sizes = 0;
  std::string algorithms;  // the algorithm/protocol choices, in size order, deduplicated
};

// A case with its scenario and measured rows read, so a fit can evaluate it many times.
struct Dataset {
  Case source;
  LoadedScenario scenario;
  std::vector<MeasuredRow> rows;
};
std::vector<Dataset> load_datasets(const std::string& source_dir);

CaseError evaluate(const Dataset& d, const ModelParameters& params,
                   std::vector<std::string>* detail = nullptr);

}  // namespace dtsim::collectives::validation
