#include "validation/training_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "collectives/analytical_model.h"
#include "sim/error.h"
#include "sim/parallel_rows.h"
#include "validation/measurement_reader.h"
#include "validation/text_fields.h"
#include "workloads/megatron_generator.h"
#include "workloads/training.h"

namespace dtsim::validation {
namespace {

constexpr const char* kGenerations[] = {"ampere", "hopper", "blackwell"};

// The generation whose parameters a GPU takes, as for_gpu groups compute capabilities; empty for
// one outside the three (no parameter applies to it).
std::string generation_of(const topology::GpuSpec& gpu) {
  const int cc = gpu.compute_capability;
  return cc >= 100 ? "blackwell" : cc >= 90 ? "hopper" : cc < 86 ? "ampere" : "";
}

int capability_of(std::string_view generation) {
  return generation == "blackwell" ? 100 : generation == "hopper" ? 90 : 80;
}

// One row, ready to re-price: its graphs, its collective model, and its prediction at every
// value of the parameters it depends on that it was priced at. A fit comes back to the same
// values often (each Jacobian column moves one parameter from the current point; every fit of a
// cross-validation starts at the hand-set values), and a price is a few doubles where a re-run is
// an execution of the graphs.
struct Row {
  PublishedRun run;
  workloads::TrainingSpec resolved;
  workloads::Workload workload;
  std::unique_ptr<collectives::AnalyticalCollectiveModel> comm;
  std::vector<size_t> depends_on;                    // indices into the parameter vector
  std::map<std::vector<double>, double> predicted_us;  // their values -> the row's time
};

// The values of the parameters the row depends on, in `values`.
std::vector<double> key_of(const Row& row, std::span<const double> values) {
  std::vector<double> key;
  key.reserve(row.depends_on.size());
  for (size_t j : row.depends_on) key.push_back(values[j]);
  return key;
}

// What run_training computes for the row, from the graphs generated once.
workloads::TrainingResult evaluate(const Row& row, std::span<const FitParameter> parameters,
                                   std::span<const double> values) {
  const workloads::ComputeModel compute(
      row.run.cluster.gpu, training_compute_params(row.run.cluster.gpu, row.resolved.attention, parameters, values));
  return workloads::evaluate_workload(row.workload, row.run.cluster, *row.comm, row.resolved.precision, compute);
}

}  // namespace

TrainingTable read_training_table(const std::string& csv, bool moe, std::string name) {
  TrainingTable t{std::move(name), {}};
  for (PublishedRun& r : read_published_runs(csv)) {
    if (r.moe != moe || !r.unsupported.empty() || (r.iteration_time_s <= 0 && r.tflops_per_gpu <= 0)) continue;
    t.runs.push_back(std::move(r));
  }
  return t;
}

std::vector<TrainingTable> read_training_tables(const std::string& list_path) {
  std::vector<TrainingTable> tables;
  const std::string text = read_text_file(list_path);
  int line_no = 0;
  for (std::string_view raw : detail::split_lines(text)) {
    ++line_no;
    std::string_view line = detail::trim(raw);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string_view> f = detail::split_whitespace(line);
    SourceLocation where{list_path, line_no, 1};
    if (f.size() != 2 || (f[1] != "dense" && f[1] != "moe"))
      throw InputError(where, "training table", "expected CSV dense|moe");
    const std::string csv(f[0]);
    if (!std::filesystem::exists(csv)) throw InputError(where, "training table", "no file " + csv);
    tables.push_back(read_training_table(csv, f[1] == "moe", std::filesystem::path(csv).stem().string()));
  }
  if (tables.empty()) throw InputError(SourceLocation{list_path, 0, 0}, "training table", "the file lists no tables");
  return tables;
}

std::vector<FitParameter> training_fit_parameters(std::span<const std::string> names) {
  std::vector<FitParameter> all;
  for (const char* g : kGenerations) {
    topology::GpuSpec gpu;
    gpu.compute_capability = capability_of(g);
    const workloads::ComputeModelParams p = workloads::ComputeModelParams::for_gpu(gpu);
    all.push_back({fmt::format("{}.gemm_efficiency", g), p.gemm_efficiency, 0.3, 0.95});
    all.push_back({fmt::format("{}.attention_scale", g), 1.0, 0.5, 2.0});
  }
  if (names.empty()) {
    std::erase_if(all, [](const FitParameter& p) { return !p.name.ends_with(".gemm_efficiency"); });
    return all;
  }
  std::vector<FitParameter> picked;
  for (const std::string& n : names) {
    auto it = std::find_if(all.begin(), all.end(), [&](const FitParameter& p) { return p.name == n; });
    if (it == all.end())
      throw InputError(SourceLocation{}, "--parameters", fmt::format("no training parameter named \"{}\"", n));
    picked.push_back(*it);
  }
  return picked;
}

workloads::ComputeModelParams training_compute_params(const topology::GpuSpec& gpu, workloads::Attention attention,
                                                      std::span<const FitParameter> parameters,
                                                      std::span<const double> values) {
  workloads::ComputeModelParams p = workloads::ComputeModelParams::for_gpu(gpu, attention);
  const std::string prefix = generation_of(gpu) + ".";
  for (size_t j = 0; j < parameters.size() && j < values.size(); ++j) {
    const std::string& name = parameters[j].name;
    if (!name.starts_with(prefix)) continue;
    const std::string_view what = std::string_view(name).substr(prefix.size());
    if (what == "gemm_efficiency") {
      p.gemm_efficiency = values[j];
    } else if (what == "attention_scale") {
      p.attention_fwd_efficiency *= values[j];
      p.attention_bwd_efficiency *= values[j];
    }
  }
  return p;
}

FitDataset make_training_dataset(const TrainingTable& table, std::span<const FitParameter> parameters,
                                 int threads) {
  auto rows = std::make_shared<std::vector<std::unique_ptr<Row>>>();
  FitDataset d;
  d.name = table.name;
  std::vector<double> initial;
  for (const FitParameter& p : parameters) initial.push_back(p.initial);
  for (const PublishedRun& run : table.runs) {
    auto row = std::make_unique<Row>();
    double model_flops = 0;  // TFLOP per GPU per iteration
    row->run = run;
    const std::string prefix = generation_of(run.cluster.gpu) + ".";
    for (size_t j = 0; j < parameters.size(); ++j)
      if (parameters[j].name.starts_with(prefix)) row->depends_on.push_back(j);
    try {
      row->resolved = workloads::resolve_training(run.spec, run.cluster);
      row->workload = workloads::generate_megatron(row->resolved, run.cluster, {});
      row->comm = std::make_unique<collectives::AnalyticalCollectiveModel>(
          row->run.cluster, collectives::CollectiveOptions{}, collectives::ModelParameters{});
      const workloads::TrainingResult r = evaluate(*row, parameters, initial);
      row->predicted_us.emplace(key_of(*row, initial), r.iteration_time_s * 1e6);
      model_flops = r.tflops_per_gpu * r.iteration_time_s;
    } catch (const std::exception&) {
      continue;  // the accuracy tests report it; a fit cannot use it
    }
    FitPoint point;
    // Published TFLOP/s only: the model's FLOPs per iteration (its TFLOP/s x its time, fixed by
    // the graphs) over the published rate.
    point.measured_us = run.iteration_time_s > 0 ? run.iteration_time_s * 1e6 : model_flops / run.tflops_per_gpu * 1e6;
    d.points.push_back(point);
    rows->push_back(std::move(row));
  }
  std::vector<FitParameter> ps(parameters.begin(), parameters.end());
  d.predict_us = [rows, ps, threads](std::span<const double> values) {
    // The rows not yet priced at these values run side by side, each its own graphs and model.
    std::vector<Row*> unpriced;
    for (const std::unique_ptr<Row>& row : *rows)
      if (!row->predicted_us.contains(key_of(*row, values))) unpriced.push_back(row.get());
    std::vector<double> priced(unpriced.size());
    sim::for_each_row(unpriced.size(), threads, [&](size_t i) {
      priced[i] = evaluate(*unpriced[i], ps, values).iteration_time_s * 1e6;
    });
    for (size_t i = 0; i < unpriced.size(); ++i) unpriced[i]->predicted_us.emplace(key_of(*unpriced[i], values), priced[i]);
    std::vector<double> out;
    out.reserve(rows->size());
    for (const std::unique_ptr<Row>& row : *rows) out.push_back(row->predicted_us.at(key_of(*row, values)));
    return out;
  };
  return d;
}

}  // namespace dtsim::validation
