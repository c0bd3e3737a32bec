// simulate: runs one scenario and prints its results.
//   simulate SCENARIO.yaml [--set KEY=VALUE]... [--format table|csv|json] [--out DIR]
//            [--model analytical|flow|packet] [--threads N] [--quiet] [--dry-run] [--describe]
//            [--fingerprint] [--stats] [--max-wall SECONDS] [--max-memory SIZE]
// Exit status: 0 done, 2 bad input (one line on stderr naming file, line, key), 1 internal error,
// 3 stopped by --max-wall (the rows done are written; one line on stderr says what was left).
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "apps/cli_options.h"
#include "apps/command_main.h"
#include "runner/scenario_runner.h"
#include "config/loader.h"
#include "sim/error.h"
#include "sim/units.h"

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 1;

// Messages go to stderr as one line, whatever the input they quote held.
std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

dtsim::runner::OutputFormat format_from(const std::string& name) {
  if (name == "csv") return dtsim::runner::OutputFormat::csv;
  if (name == "json") return dtsim::runner::OutputFormat::json;
  if (name == "dot") return dtsim::runner::OutputFormat::dot;
  return dtsim::runner::OutputFormat::table;
}

// Without --format, the first of the scenario's output.formats that prints to stdout.
dtsim::runner::OutputFormat default_format(const dtsim::config::Scenario& s) {
  for (const auto& f : s.output.formats) {
    if (f == "table" || f == "csv" || f == "json") return format_from(f);
  }
  return dtsim::runner::OutputFormat::table;
}

}  // namespace

int main(int argc, char** argv) {
  dtsim::apps::start_on_huge_page_heap(argv);
  dtsim::apps::keep_large_arrays_for_reuse();
  CLI::App app{"Predicts how fast a distributed training job or collective runs on a cluster.", "simulate"};
  app.set_version_flag("--version", std::string("simulate (dtsim) ") + DTSIM_VERSION);

  std::string scenario_path;
  std::vector<std::string> sets;
  std::string format;
  std::string out_dir;
  std::string model;
  int threads = 0;
  int partitions = 1;
  bool quiet = false;
  bool dry_run = false;
  bool describe = false;
  bool fingerprint = false;
  bool stats = false;
  double max_wall = 0;
  std::string max_memory;

  app.add_option("scenario", scenario_path, "The scenario file (YAML)")->required();
  dtsim::apps::add_repeatable(app, "--set", sets, "Override a key by its dotted path, e.g. --set cluster.nodes=64");
  app.add_option("--format", format, "How results print on stdout (dot: only with --describe)")
      ->check(CLI::IsMember({"table", "csv", "json", "dot"}));
  app.add_option("--out", out_dir, "Directory for output files (default: the scenario's output.dir)");
  app.add_option("--model", model, "Network model; the same as --set network.model=...")
      ->check(CLI::IsMember({"analytical", "flow", "packet"}));
  app.add_option("--threads", threads,
                 "Threads for the sizes of a collective sweep on the flow or packet model, or for "
                 "the distinct collectives of a training or trace run on the flow model (0: all "
                 "cores); other runs use one. Outputs do not depend on it")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--partitions", partitions,
                 "Spread each size of a collective sweep, or a training or trace iteration, on the packet "
                 "model over this many threads, "
                 "the cluster cut into that many blocks of nodes; outputs and --fingerprint do not "
                 "depend on it")
      ->check(CLI::Range(1, 64));
  app.add_flag("--quiet,-q", quiet, "No progress or banners on stderr");
  app.add_flag("--dry-run", dry_run, "Print the fully resolved scenario as YAML and exit");
  app.add_flag("--describe", describe, "Describe what would run (cluster, workload), then stop");
  app.add_flag("--fingerprint", fingerprint, "Print the event-trace fingerprint after the run");
  app.add_flag("--stats", stats,
               "After the run, one line on stderr of what it did: engine events, max-min solves, flows, "
               "packets, peak memory and wall time");

  app.add_option("--max-wall", max_wall,
                 "Stop a collective sweep on the flow or packet model after this many seconds of wall "
                 "time: the sizes done are written, one line on stderr says what was left, exit status 3 "
                 "(a training or trace run on flows stops pricing its collectives, with no result)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-memory", max_memory,
                 "Refuse, before it starts, a collective sweep on the flow or packet model that would hold "
                 "more memory than this, and a training or trace run on flows a collective that would (e.g. "
                 "8GiB; default: what the machine has available)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "simulate: error: " << one_line(e.what()) << " (see simulate --help)\n";
    return kExitBadInput;
  }

  try {
    std::vector<dtsim::config::Override> overrides;
    for (const auto& s : sets) overrides.push_back(dtsim::config::parse_override(s));
    if (!model.empty()) overrides.push_back({"network.model", model});
    dtsim::config::Scenario scenario = dtsim::config::load_scenario(scenario_path, overrides);
    if (!out_dir.empty()) scenario.output.dir = out_dir;
    if (dry_run) {
      std::cout << dtsim::config::dump_scenario(scenario);
      return 0;
    }
    dtsim::runner::RunOptions options;
    options.format = format.empty() ? default_format(scenario) : format_from(format);
    if (!out_dir.empty()) options.out_dir = out_dir;
    options.quiet = quiet;
    options.fingerprint = fingerprint;
    options.stats = stats;
    options.max_wall_s = max_wall;
    if (!max_memory.empty()) {
      try {
        options.max_memory = dtsim::parse_bytes(max_memory);
      } catch (const std::exception& e) {
        throw dtsim::InputError(dtsim::SourceLocation{}, "--max-memory", e.what());
      }
    }
    options.threads = threads;
    options.partitions = partitions;
    options.describe = describe;
    return dtsim::runner::run_scenario(scenario, options, std::cout);
  } catch (const dtsim::InputError& e) {
    std::cout.flush();
    std::cerr << "simulate: error: " << one_line(e.what()) << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "simulate: internal error: " << one_line(e.what()) << "\n";
    return kExitInternal;
  }
}
