// calibrate: fits the cost model's named physical parameters (collectives::ModelParameters) to
// measured collective benchmarks by robust least squares on log time, writes calibration.yaml,
// and reports each dataset's error in-sample and when left out of the fit.
//   calibrate --scenario S.yaml MEASURED... -o calibration.yaml
//   calibrate --pair S1.yaml:M1.csv --pair S2.yaml:M2.csv#LABEL ... -o calibration.yaml
//   calibrate --pairs validation/datasets.txt -o calibration.yaml --markdown docs/validation.md
//   calibrate --training validation/training_tables.txt --markdown docs/validation-errors.md
// The last fits the training compute model's efficiencies to published training tables instead
// (validation/training_fit.h) and prints the fitted values; nothing loads them.
// Exit status: 0 done, 2 bad input, 1 internal error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <iostream>

#include "apps/cli_options.h"
#include "apps/command_main.h"
#include "sim/error.h"
#include "validation/calibration_fit.h"
#include "validation/calibration_report.h"
#include "validation/measurement_reader.h"
#include "validation/scenario_predictor.h"
#include "validation/text_fields.h"
#include "validation/training_fit.h"

namespace {

using namespace dtsim;
using namespace dtsim::validation;

struct Pair {
  std::string scenario;
  std::string measured;
  std::optional<std::string> label;
};

Pair parse_pair(std::string_view text, const SourceLocation& where) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size())
    throw InputError(where, "--pair", fmt::format("expected SCENARIO:MEASURED[#LABEL], got \"{}\"", text));
  Pair p{std::string(text.substr(0, colon)), std::string(text.substr(colon + 1)), std::nullopt};
  if (auto hash = p.measured.find('#'); hash != std::string::npos) {
    p.label = p.measured.substr(hash + 1);
    p.measured.resize(hash);
  }
  return p;
}

// A pairs file: one "SCENARIO MEASURED[#LABEL]" per line; '#' starts a comment line.
std::vector<Pair> read_pairs_file(const std::string& path) {
  std::vector<Pair> pairs;
  int line_no = 0;
  // The text outlives the loop: split_lines returns views into it (a temporary in the range
  // expression would be destroyed before the first iteration).
  const std::string text = read_text_file(path);
  for (std::string_view raw : validation::detail::split_lines(text)) {
    ++line_no;
    std::string_view line = validation::detail::trim(raw);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string_view> f = validation::detail::split_whitespace(line);
    SourceLocation where{path, line_no, 1};
    if (f.size() != 2) throw InputError(where, "pair", "expected SCENARIO MEASURED[#LABEL]");
    pairs.push_back(parse_pair(fmt::format("{}:{}", f[0], f[1]), where));
  }
  if (pairs.empty()) throw InputError(SourceLocation{path, 0, 0}, "pair", "the file lists no pairs");
  return pairs;
}

// The collective datasets the command line names: --scenario with measured files, --pair, --pairs.
std::vector<FitDataset> collective_datasets(const std::optional<std::string>& scenario,
                                            const std::vector<std::string>& measured,
                                            const std::vector<std::string>& pair_args,
                                            const std::optional<std::string>& pairs_file,
                                            const collectives::ModelParameters& base,
                                            const std::vector<FitParameter>& fitted) {
  std::vector<Pair> pairs;
  if (scenario)
    for (const std::string& m : measured) pairs.push_back(Pair{*scenario, m, std::nullopt});
  else if (!measured.empty())
    throw InputError(SourceLocation{}, "--scenario", "measured files need --scenario (or use --pair)");
  for (const std::string& p : pair_args) pairs.push_back(parse_pair(p, SourceLocation{}));
  if (pairs_file)
    for (Pair& p : read_pairs_file(*pairs_file)) pairs.push_back(std::move(p));
  if (pairs.empty()) throw InputError("calibrate: give --scenario with measured files, --pair or --pairs");

  std::vector<FitDataset> datasets;
  for (const Pair& p : pairs) {
    config::Scenario s = config::load_scenario(p.scenario);
    if (s.network.model != config::NetworkModelKind::analytical)
      std::cerr << fmt::format(
          "calibrate: note: {}: network.model is not analytical; the fit prices every size in "
          "closed form (check the result on that model with validate --calibration)\n",
          p.scenario);
    size_t added = 0;
    for (const MeasurementSet& set : read_measurements(p.measured, scenario_parse_options(s))) {
      // Without a label only unlabelled rows belong to the scenario: labelled blocks are other
      // hardware sharing the file.
      if (set.label != p.label.value_or("")) continue;
      datasets.push_back(make_fit_dataset(s.name, set, s, base, fitted));
      ++added;
    }
    if (added == 0)
      throw InputError(SourceLocation{p.measured, 0, 0}, "pair",
                       p.label ? fmt::format("no block labelled \"{}\"", *p.label)
                               : "no unlabelled rows: name the block as MEASURED#LABEL");
  }

  return datasets;
}

int run(int argc, char** argv) {
  CLI::App app{"Fit the collective cost model's physical parameters to measurements, or the training "
               "compute model's efficiencies to published training tables"};
  std::optional<std::string> scenario;
  std::vector<std::string> measured, pair_args, names;
  std::optional<std::string> pairs_file, markdown, start, training;
  std::string output;
  FitOptions options;
  bool no_cv = false;
  app.add_option("--scenario", scenario, "scenario for the MEASURED files");
  app.add_option("measured", measured, "measured files for --scenario");
  apps::add_repeatable(app, "--pair", pair_args, "repeatable; one fit spans all", "SCENARIO:MEASURED[#LABEL]");
  app.add_option("--pairs", pairs_file, "file of 'SCENARIO MEASURED[#LABEL]' lines");
  app.add_option("--training", training,
                 "file of 'CSV dense|moe' training tables: fit the training compute model instead");
  app.add_option("-o,--output", output, "calibration.yaml to write (collective fits)");
  app.add_option("--parameters", names, "fit only these parameters (default: all)")->delimiter(',');
  app.add_option("--start", start, "calibration.yaml to start from (default: built-in values)");
  app.add_option("--huber", options.huber_delta, "Huber delta on ln(pred/meas)");
  app.add_option("--prior", options.prior_weight, "pull towards the starting values");
  app.add_option("--iterations", options.max_iterations, "Levenberg-Marquardt iterations at most");
  app.add_option("--tolerance", options.tolerance, "a step that lowers the cost by less than this fraction ends the fit");
  app.add_option("--step-tolerance", options.step_tolerance,
                 "a step that moves no parameter by more than this (ln units where positive) ends the fit");
  int jobs = 0;
  app.add_option("--jobs,-j", jobs, "threads that re-price training rows (default: all cores)");
  app.add_flag("--no-cross-validation", no_cv, "skip the leave-one-dataset-out fits");
  app.add_option("--markdown", markdown, "rewrite the table between calibration-table markers in this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  const bool collective = !training;
  if (training && (scenario || !measured.empty() || !pair_args.empty() || pairs_file || start || !output.empty()))
    throw InputError(SourceLocation{}, "--training",
                     "fits training tables alone: --scenario, --pair, --pairs, --start and -o are for collective fits");
  if (collective && output.empty()) throw InputError(SourceLocation{}, "-o", "a collective fit needs -o calibration.yaml");

  collectives::ModelParameters base = start ? collectives::load_calibration(*start) : collectives::ModelParameters{};
  std::vector<FitParameter> fitted;
  std::vector<FitDataset> datasets;
  if (training) {
    fitted = training_fit_parameters(names);
    for (const TrainingTable& t : read_training_tables(*training))
      datasets.push_back(make_training_dataset(t, fitted, jobs));
  } else {
    fitted = fit_parameters_of(base, names);
    datasets = collective_datasets(scenario, measured, pair_args, pairs_file, base, fitted);
  }

  auto t0 = std::chrono::steady_clock::now();
  CrossValidation cv;
  if (no_cv) {
    cv.all = fit_parameters(fitted, datasets, options);
    for (const FitDataset& d : datasets) {
      std::vector<double> initial;
      for (const FitParameter& f : fitted) initial.push_back(f.initial);
      CrossValidationRow row;
      row.dataset = d.name;
      row.points = d.points.size();
      row.initial_pct = mean_abs_error_pct(d, initial);
      row.in_sample_pct = mean_abs_error_pct(d, cv.all.values);
      cv.rows.push_back(std::move(row));
    }
  } else {
    cv = cross_validate(fitted, datasets, options);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::cout << fmt::format("{:<44} {:>6} {:>10} {:>10} {:>14}\n", "dataset", collective ? "sizes" : "rows", "default",
                           "in-sample", no_cv ? "" : "leave-one-out");
  for (const CrossValidationRow& r : cv.rows)
    std::cout << fmt::format("{:<44} {:>6} {:>9.1f}% {:>9.1f}% {:>13}\n", r.dataset, r.points,
                             r.initial_pct, r.in_sample_pct,
                             no_cv ? "" : fmt::format("{:.1f}%", r.leave_one_out_pct));
  std::cout << fmt::format("# {} parameters, {} datasets, cost {:.4g} -> {:.4g} in {} iterations ({}), "
                           "{:.1f} s\n# {}\n",
                           fitted.size(), datasets.size(), cv.all.initial_cost, cv.all.final_cost,
                           cv.all.iterations, how_it_ended(cv.all, options), secs, iterations_note(cv, options));

  if (!collective) {
    const std::string fits = fits_table(cv, fitted, options);
    std::cout << "\n" << fits;
    if (markdown)
      replace_marked_section(*markdown, markdown_table(cv, options, fitted.size(), "rows") + "\n" + fits,
                             "training-fit-table");
    return 0;
  }
  collectives::ModelParameters result = with_values(base, fitted, cv.all.values);
  std::ofstream out(output);
  if (!out) throw InputError(SourceLocation{output, 0, 0}, "-o", "cannot write the file");
  out << "# Written by dtsim calibrate from " << datasets.size() << " datasets.\n";
  collectives::write_calibration(result, out);
  if (markdown) replace_marked_section(*markdown, markdown_table(cv, options, fitted.size()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return dtsim::apps::command_main("calibrate", [&] { return run(argc, argv); });
}
