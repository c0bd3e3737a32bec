// The scenario's analytical collective model as a Predictor: what validate compares measurements
// with and what calibrate refits. The model is built once per parameter set; a prediction for
// `ranks` ranks runs on the first `ranks` GPUs of the cluster (node-major), as nccl-tests places
// its ranks.
//   ScenarioModel m = load_scenario_model("scenarios/validation/oci.yaml", {}, std::nullopt);
//   Predictor p = make_predictor(m.scenario, m.parameters);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collectives/cost_model.h"
#include "collectives/model_parameters.h"
#include "config/loader.h"
#include "validation/calibration_fit.h"
#include "validation/comparison.h"
#include "validation/nccl_tests_parser.h"

namespace dtsim::validation {

struct ScenarioModel {
  config::Scenario scenario;
  collectives::ModelParameters parameters;
};

// Loads the scenario and its parameters: `calibration` when given, else the scenario's own
// `calibration:` file (relative to the current directory, then to the scenario's folder), else
// the defaults. Throws InputError for any problem in either file.
ScenarioModel load_scenario_model(const std::string& path,
                                  const std::vector<config::Override>& overrides,
                                  const std::optional<std::string>& calibration);

// `nodes` > 0 (the hosts a measurement ran on) spreads the ranks evenly over that many nodes,
// ranks/nodes GPUs on each, as a multi-host nccl-tests run places them; otherwise ranks fill the
// first GPUs node by node. `gpus_per_thread` > 0 (the measurement's nGpus) holds every
// prediction to that many host launches (workloads::host_launch_floor); 0 takes the scenario's
// workload.gpus_per_thread.
Predictor make_predictor(const config::Scenario& scenario,
                         const collectives::ModelParameters& parameters, int nodes = 0,
                         int gpus_per_thread = 0);

// Throws InputError when `ranks` is not between 1 and the cluster's GPU count.
void require_ranks_fit(const topology::ClusterSpec& cluster, int ranks);

// The GPUs (global indices, node-major) `ranks` ranks on `nodes` nodes run on.
collectives::Communicator placement_of(const topology::ClusterSpec& cluster, int ranks, int nodes);

// How many ranks a measurement without its own rank count ran on: the sweep's `ranks`, else
// every GPU of the cluster.
int scenario_ranks(const config::Scenario& scenario);

// The rank count to compare `set` at: the file's own when it says, else the scenario's. Throws
// InputError when the file ran on more ranks than the scenario's cluster has.
int ranks_for(const MeasurementSet& set, const config::Scenario& scenario);
// How to read outputs that do not name their collective: as the scenario's sweep collective
// (`workload.collective`), before guessing from the columns. Empty for other workloads.
NcclTestsParseOptions scenario_parse_options(const config::Scenario& scenario);

// The scenario overrides a run's own NCCL environment calls for (its NCCL_DEBUG=INFO lines, kept in
// set.nccl_env), where the scenario leaves the choice to the tuner: NCCL_ALGO and NCCL_PROTO as
// collectives.algorithm / protocol (NCCL's list syntax; of a per-function value, "allreduce:tree;
// allgather:ring", the set's collective's part), NCCL_NVLS_ENABLE=0 as "^nvls,nvls_tree". Empty
// when there is nothing to apply.
std::vector<config::Override> nccl_env_overrides(const MeasurementSet& set,
                                                 const config::Scenario& scenario);

// Every ModelParameters entry (or only those named in `names`) as fit parameters starting at
// `start`. Throws InputError naming the valid parameters for an unknown name.
std::vector<FitParameter> fit_parameters_of(const collectives::ModelParameters& start,
                                            const std::vector<std::string>& names);

// A dataset for the fit: `set`'s sizes (placements merged, wrong rows dropped) predicted by the
// scenario's model with `base` where the fitted parameters `fitted` are replaced by the vector.
FitDataset make_fit_dataset(const std::string& name, const MeasurementSet& set,
                            const config::Scenario& scenario,
                            const collectives::ModelParameters& base,
                            const std::vector<FitParameter>& fitted);

// `base` with the fitted values written into it.
collectives::ModelParameters with_values(collectives::ModelParameters base,
                                         const std::vector<FitParameter>& fitted,
                                         std::span<const double> values);

}  // namespace dtsim::validation
