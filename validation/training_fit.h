// Training fit: the compute model's hand-set efficiencies (ComputeModelParams::for_gpu) fitted to
// published training tables with calibration_fit's optimiser, and scored leave-one-table-out.
// The free parameters are, per GPU generation, the large-GEMM efficiency and a scale on the fused
// attention efficiencies: the two figures that set most of an iteration's compute time and that no
// datasheet gives. Everything else (peaks, HBM bandwidth, SM counts, the network) is catalogued
// hardware; the framework features of a row come from its columns (training_runs.h). By default
// only the three GEMM efficiencies are fitted: the tables' rows mix GEMM and attention time in
// nearly fixed proportions per generation, so the two figures of a generation trade against each
// other, and each extra parameter costs a re-run of its generation's rows per Jacobian column.
//   std::vector<TrainingTable> tables = read_training_tables("validation/training_tables.txt");
//   std::vector<FitParameter> ps = training_fit_parameters({});
//   std::vector<FitDataset> ds;
//   for (const TrainingTable& t : tables) ds.push_back(make_training_dataset(t, ps));
//   CrossValidation cv = cross_validate(ps, ds, options);
#pragma once

#include <span>
#include <string>
#include <vector>

#include "topology/cluster_spec.h"
#include "validation/calibration_fit.h"
#include "validation/training_runs.h"
#include "workloads/compute_model.h"

namespace dtsim::validation {

// One published-runs table: the rows of one kind, dense or mixture-of-experts, as the accuracy
// tests (tests/workloads/accuracy_test.cc) split them.
struct TrainingTable {
  std::string name;
  std::vector<PublishedRun> runs;
};

// Reads a CSV's rows of one kind; rows the model cannot describe (no GPU preset) or that publish
// neither an iteration time nor TFLOP/s per GPU are left out, as the accuracy tests leave them.
TrainingTable read_training_table(const std::string& csv, bool moe, std::string name);

// A tables file: one "CSV dense|moe" per line, '#' starts a comment line; each table is named by
// its file name without the directory and ".csv".
std::vector<TrainingTable> read_training_tables(const std::string& list_path);

// The fittable parameters, "GENERATION.gemm_efficiency" and "GENERATION.attention_scale" for
// ampere, hopper and blackwell, starting at the hand-set values (a scale of 1); `names` picks
// them (empty: the three gemm_efficiency). Throws InputError for an unknown name.
std::vector<FitParameter> training_fit_parameters(std::span<const std::string> names);

// for_gpu's parameters with `values` of `parameters` applied where they name the GPU's generation.
workloads::ComputeModelParams training_compute_params(const topology::GpuSpec& gpu, workloads::Attention attention,
                                                      std::span<const FitParameter> parameters,
                                                      std::span<const double> values);

// A table as a fit dataset. Every row's graphs are generated once; predict_us re-prices them with
// the compute model at the given values, and runs a row only at values of its GPU generation's
// parameters it has not been priced at (it keeps every price; copies of the dataset share them),
// on `threads` threads (0: every core). A row that publishes only TFLOP/s per GPU is compared as
// the time its model FLOPs would take at that rate. A row the model cannot run (it throws) is left
// out.
FitDataset make_training_dataset(const TrainingTable& table, std::span<const FitParameter> parameters,
                                 int threads = 1);

}  // namespace dtsim::validation
