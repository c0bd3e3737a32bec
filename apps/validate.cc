// validate: compares measured collective benchmarks (the measured CSV, raw nccl-tests output or
// its -J JSON) with the scenario's prediction for the same collective, sizes and rank count.
//   validate --scenario S.yaml MEASURED... [--max-error PCT] [--html FILE]
//            [--format table|csv|json] [--nccl-log FILE] [--label NAME] [--collective NAME]
// Exit status: 0 done (whatever the error), 3 when --max-error is given and the mean error of
// any measurement set exceeds it, 2 bad input, 1 internal error.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "apps/cli_options.h"
#include "apps/command_main.h"
#include "runner/scenario_runner.h"
#include "config/enum_names.h"
#include "sim/error.h"
#include "validation/comparison_report.h"
#include "validation/html_report.h"
#include "validation/measurement_reader.h"
#include "validation/nccl_debug_log.h"
#include "validation/scenario_predictor.h"

namespace {

using namespace dtsim;
using namespace dtsim::validation;

constexpr int kExitErrorTooLarge = 3;

// The scenario's own network model predicts: the closed form, or (network.model: flow or packet)
// each measured size run as a one-size sweep on that model, as `simulate` would run it. Flows and
// packets run a sweep's ranks on the first GPUs of the cluster, so a measurement spread over other
// GPUs (4 ranks on each of 2 nodes) is refused there rather than compared on the wrong ones.
// `gpus_per_thread` > 0 is the measurement's nGpus (nccl-tests -g), which replaces the scenario's
// workload.gpus_per_thread.
Predictor scenario_predictor(const ScenarioModel& m, int nodes, int gpus_per_thread = 0) {
  if (m.scenario.network.model == config::NetworkModelKind::analytical)
    return make_predictor(m.scenario, m.parameters, nodes, gpus_per_thread);
  return [m, nodes, gpus_per_thread](collectives::CollectiveKind kind, int64_t bytes, int ranks) {
    require_ranks_fit(m.scenario.cluster, ranks);
    const collectives::Communicator placed = placement_of(m.scenario.cluster, ranks, nodes);
    for (int r = 0; r < ranks; ++r) {
      if (placed.ranks[static_cast<size_t>(r)] != r)
        throw InputError(
            SourceLocation{m.scenario.source_file, 0, 0}, "network.model",
            fmt::format(
                "the measurement spreads {} ranks over {} nodes, {} a node, and the {} model runs "
                "a sweep's ranks on the first GPUs: give the scenario gpus_per_node: {}, or "
                "validate on the analytical model",
                ranks, nodes, ranks / std::max(1, nodes),
                config::enum_name(m.scenario.network.model, config::network_model_names()),
                ranks / std::max(1, nodes)));
    }
    config::Scenario one = m.scenario;
    one.workload.kind =
        workloads::WorkloadKind::collective_sweep;  // whatever the scenario's own workload
    one.workload.sweep.collective = kind;
    one.workload.sweep.min_bytes = one.workload.sweep.max_bytes = Bytes(bytes);
    one.workload.sweep.ranks = ranks;
    if (gpus_per_thread > 0) one.workload.sweep.gpus_per_thread = gpus_per_thread;
    std::vector<workloads::SweepRow> rows;
    try {
      rows = runner::time_collective_sweep(one, m.parameters, /*threads=*/1);
    } catch (const InputError& e) {
      // The packet model's size guard speaks of workload.max_bytes; here the sizes are the file's.
      if (e.message().find("packet hops") == std::string::npos) throw;
      throw InputError(
          SourceLocation{m.scenario.source_file, 0, 0}, "network.model",
          fmt::format(
              "the packet model cannot run the measured size of {} bytes in reasonable time "
              "({}); validate the large sizes on flow",
              bytes, e.message()));
    }
    if (rows.empty())
      throw InputError(SourceLocation{}, "size", fmt::format("no sweep row for {} bytes", bytes));
    const workloads::SweepRow& row = rows.front();
    return Prediction{row.time.us(), std::string(collectives::name(row.algorithm)),
                      std::string(collectives::name(row.protocol)), row.channels};
  };
}

void report_nccl_log(const std::string& path, const ScenarioModel& m) {
  const config::Scenario& scenario = m.scenario;
  NcclDebugLog log = parse_nccl_debug_log(read_text_file(path));
  // The log says how many nodes the communicator spans: place the ranks the same way.
  Predictor predict = scenario_predictor(m, log.nodes);
  int ranks = log.ranks > 0 ? log.ranks : scenario_ranks(scenario);
  std::cout << fmt::format("# NCCL log {}: NCCL {}, {} ranks on {} nodes\n", path,
                           log.nccl_version.empty() ? "?" : log.nccl_version, ranks, log.nodes);
  std::string counts;
  for (const auto& [kind, n] : log.channels) counts += fmt::format(" {} {},", kind, n);
  if (!counts.empty()) counts.pop_back();
  std::cout << fmt::format("# channels:{}; {} rings, {} trees\n", counts.empty() ? " ?" : counts,
                           log.rings.size(), log.trees.size());
  for (const NcclGraph& g : log.graphs)
    std::cout << fmt::format("# graph: pattern {}, {} channels, bw {:.1f}/{:.1f} GB/s per channel, "
                             "type {}/{}{}\n",
                             g.pattern, g.channels, g.bw_intra_gbps, g.bw_inter_gbps, g.type_intra,
                             g.type_inter, g.cross_nic ? ", cross-NIC" : "");
  TunerAgreement a = compare_tuner(log, ranks, predict);
  std::cout << fmt::format("# tuner: {} sizes compared, {} where dtsim chooses differently\n",
                           a.compared, a.differences.size());
  if (!a.differences.empty()) {
    std::cout << fmt::format("{:>16}  {:>10}  {:>20}  {:>20}\n", "collective", "size", "nccl",
                             "dtsim");
    for (const TunerDifference& d : a.differences)
      std::cout << fmt::format("{:>16}  {:>10}  {:>20}  {:>20}\n", collectives::name(d.nccl.collective),
                               format_size(d.size_bytes), d.nccl.algorithm + "/" + d.nccl.protocol,
                               d.ours.algorithm + "/" + d.ours.protocol);
  }
  std::cout << '\n';
}

int run(int argc, char** argv) {
  CLI::App app{"Compare measured collective benchmarks with a scenario's predictions"};
  std::string scenario_path;
  std::vector<std::string> measured;
  std::vector<std::string> sets;
  std::optional<double> max_error;
  std::optional<std::string> html, nccl_log, label, collective, calibration;
  std::string format = "table";
  app.add_option("--scenario", scenario_path, "scenario describing the measured hardware")->required();
  app.add_option("measured", measured, "measured CSV, nccl-tests output or -J JSON files");
  apps::add_repeatable(app, "--set", sets, "override a scenario key");
  app.add_option("--max-error", max_error, "exit 3 when a set's mean |error| exceeds PCT percent");
  app.add_option("--html", html, "write a self-contained HTML page with the bandwidth curves");
  app.add_option("--format", format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
  app.add_option("--nccl-log", nccl_log, "NCCL_DEBUG=INFO log: compare NCCL's tuner picks with ours");
  app.add_option("--label", label, "only the block with this label of a multi-block CSV");
  app.add_option("--collective", collective, "the collective, for outputs that do not name it");
  app.add_option("--calibration", calibration, "calibration.yaml to use instead of the scenario's");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (measured.empty() && !nccl_log) throw InputError("validate: give at least one measured file or --nccl-log");

  std::vector<config::Override> overrides;
  for (const std::string& s : sets) overrides.push_back(config::parse_override(s));
  ScenarioModel m = load_scenario_model(scenario_path, overrides, calibration);

  NcclTestsParseOptions parse_options = scenario_parse_options(m.scenario);
  if (collective) {
    parse_options.collective = parse_collective_name(*collective);
    parse_options.collective_from = "--collective";
    if (!parse_options.collective)
      throw InputError(SourceLocation{}, "--collective", fmt::format("unknown collective \"{}\"", *collective));
  }
  std::vector<Comparison> comparisons;
  for (const std::string& path : measured) {
    std::vector<MeasurementSet> found = read_measurements(path, parse_options);
    std::vector<MeasurementSet> chosen;
    for (MeasurementSet& s : found)
      if (!label || s.label == *label) chosen.push_back(std::move(s));
    if (chosen.empty())
      throw InputError(SourceLocation{path, 0, 0}, "--label", fmt::format("no block labelled \"{}\"", *label));
    if (chosen.size() > 1 && !chosen.front().label.empty()) {
      std::string labels;
      for (const MeasurementSet& s : chosen) labels += " " + s.label;
      throw InputError(SourceLocation{path, 0, 0}, "--label",
                       "the file holds several hardware configurations; pick one with --label:" + labels);
    }
    for (MeasurementSet& s : chosen) {
      for (const MeasuredPoint* p : s.wrong_points())
        std::cerr << fmt::format("validate: {}:{}: size {} has {} wrong elements; shown, not scored\n",
                                 path, p->line, p->size_bytes, *p->wrong);
      // The run's own NCCL_ALGO / NCCL_PROTO / NCCL_NVLS_ENABLE, where the scenario says auto.
      const std::vector<config::Override> env = nccl_env_overrides(s, m.scenario);
      if (env.empty()) {
        comparisons.push_back(compare(s, ranks_for(s, m.scenario),
                                      scenario_predictor(m, s.nodes, s.gpus_per_thread)));
        continue;
      }
      std::vector<config::Override> with_env = overrides;
      std::string applied;
      for (const config::Override& o : env) {
        with_env.push_back(o);
        applied += fmt::format("{}{}: {}", applied.empty() ? "" : ", ", o.key, o.value);
      }
      s.warnings.push_back("the run's NCCL_DEBUG lines set its NCCL environment; predicted with " +
                           applied);
      const ScenarioModel run_model = load_scenario_model(scenario_path, with_env, calibration);
      comparisons.push_back(compare(s, ranks_for(s, run_model.scenario),
                                    scenario_predictor(run_model, s.nodes, s.gpus_per_thread)));
    }
  }

  if (nccl_log) report_nccl_log(*nccl_log, m);
  if (!comparisons.empty()) {
    ComparisonFormat f = format == "csv" ? ComparisonFormat::csv
                         : format == "json" ? ComparisonFormat::json
                                            : ComparisonFormat::table;
    write_comparison(std::cout, comparisons, f);
  }
  if (html) {
    std::ofstream out(*html);
    if (!out) throw InputError(SourceLocation{*html, 0, 0}, "--html", "cannot write the file");
    write_html_report(out, comparisons, "dtsim validation: " + m.scenario.name);
  }
  if (max_error) {
    for (const Comparison& c : comparisons)
      if (c.summary.mean_abs_pct > *max_error) {
        std::cerr << fmt::format("validate: {}: mean |error| {:.1f}% exceeds --max-error {:.1f}%\n",
                                 c.name, c.summary.mean_abs_pct, *max_error);
        return kExitErrorTooLarge;
      }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return dtsim::apps::command_main("validate", [&] { return run(argc, argv); });
}
