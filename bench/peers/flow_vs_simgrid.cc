// flow_vs_simgrid: dtsim's flow model and SimGrid side by side on one fabric and one flow list
// (peer_case.h): N one-GPU hosts with a 100 Gb/s NIC each on a non-blocking 2-tier fat-tree, an
// all-to-all or a random permutation, every flow started at t = 0 on the ECMP route dtsim gives
// it. Prints one table row: hosts, pattern, flows, each simulator's wall and CPU time, the speedup
// (SimGrid's wall time over dtsim's), each makespan, the per-flow completion times' largest and
// mean relative difference, and how many max-min solves dtsim ran. Exits 1 when any flow's
// completion time or the makespan differ by more than --tolerance, 2 on bad flags.
//   flow_vs_simgrid --hosts 128 --pattern all-to-all --bytes 1000000 --sim both
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include "bench/peers/peer_case.h"
#include "bench/peers/peer_run.h"
#include "bench/peers/simgrid_run.h"
#include "topology/cluster.h"

namespace dtsim::bench::peers {
namespace {

struct Agreement {
  double max_rel = 0;
  double mean_rel = 0;
  double makespan_rel = 0;
};

double makespan(const PeerRun& r) {
  return r.completion_s.empty() ? 0
                                : *std::max_element(r.completion_s.begin(), r.completion_s.end());
}

// Relative differences taken against SimGrid's figures.
Agreement compare(const PeerRun& dtsim, const PeerRun& simgrid) {
  Agreement a;
  const size_t n = dtsim.completion_s.size();
  for (size_t i = 0; i < n; ++i) {
    const double rel =
        std::abs(dtsim.completion_s[i] - simgrid.completion_s[i]) / simgrid.completion_s[i];
    a.max_rel = std::max(a.max_rel, rel);
    a.mean_rel += rel / static_cast<double>(n);
  }
  a.makespan_rel = std::abs(makespan(dtsim) - makespan(simgrid)) / makespan(simgrid);
  return a;
}

std::string cell(const std::optional<PeerRun>& r, double (*figure)(const PeerRun&),
                 const char* format) {
  return r ? fmt::format(fmt::runtime(format), figure(*r)) : "-";
}

int run(int argc, char** argv) {
  CLI::App app{
      "Runs dtsim's flow model and SimGrid on the same fabric and flows and compares them.",
      "flow_vs_simgrid"};
  PeerCaseSpec spec;
  std::string pattern = "all-to-all";
  std::string sim = "both";
  std::string latency = "after-drain";
  int64_t bytes = spec.bytes.count();
  double efficiency = 1;
  double tolerance = 0.05;
  bool header = false;
  app.add_option("--hosts", spec.hosts, "hosts (one GPU, one NIC each), 2 to 2048")
      ->check(CLI::Range(2, 2048));
  app.add_option("--pattern", pattern, "all-to-all | permutation")
      ->check(CLI::IsMember({"all-to-all", "permutation"}));
  app.add_option("--bytes", bytes, "bytes per flow")->check(CLI::PositiveNumber);
  app.add_option("--seed", spec.seed, "seed of the permutation and the ECMP hashes");
  app.add_option("--sim", sim, "dtsim | simgrid | both")
      ->check(CLI::IsMember({"dtsim", "simgrid", "both"}));
  app.add_option(
         "--simgrid-latency", latency,
         "after-drain: SimGrid's links without latency, each flow's route latency added to its "
         "completion (dtsim's semantics); links: on SimGrid's links, which CM02 weights sharing by")
      ->check(CLI::IsMember({"after-drain", "links"}));
  app.add_option("--link-efficiency", efficiency,
                 "share of line rate every link carries, in both simulators")
      ->check(CLI::Range(1e-3, 1.0));
  app.add_option("--tolerance", tolerance, "largest relative difference that still agrees");
  app.add_flag("--header", header, "print the table's header line first");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  spec.pattern = *parse_pattern(pattern);
  spec.bytes = Bytes(bytes);
  spec.efficiency = {.nvlink = efficiency, .pcie = efficiency, .network = efficiency};

  const std::vector<network::Transfer> flows = peer_flows(spec);
  std::optional<PeerRun> dtsim_run;
  std::optional<PeerRun> simgrid_run;
  if (sim != "simgrid") dtsim_run = run_dtsim(spec, flows);
  if (sim != "dtsim") {
    const auto cluster = topology::build_cluster(peer_cluster_spec(spec));
    simgrid_run = run_simgrid(*cluster, flows, spec.efficiency, *parse_simgrid_latency(latency));
  }

  if (header) {
    fmt::print(
        "| hosts | pattern | flows | dtsim wall s | dtsim CPU s | SimGrid wall s | SimGrid CPU s | "
        "speedup (wall) | dtsim makespan ms | SimGrid makespan ms | max rel diff | mean rel diff | "
        "dtsim solves |\n");
    fmt::print(
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "|\n");
  }
  std::string speedup = "-";
  std::string max_rel = "-";
  std::string mean_rel = "-";
  bool agree = true;
  if (dtsim_run && simgrid_run) {
    const Agreement a = compare(*dtsim_run, *simgrid_run);
    speedup = fmt::format("{:.1f}x", simgrid_run->wall_s / dtsim_run->wall_s);
    max_rel = fmt::format("{:.3f}%", 100 * a.max_rel);
    mean_rel = fmt::format("{:.3f}%", 100 * a.mean_rel);
    agree = a.max_rel <= tolerance && a.makespan_rel <= tolerance;
  }
  const auto wall = [](const PeerRun& r) { return r.wall_s; };
  const auto cpu = [](const PeerRun& r) { return r.cpu_s; };
  const auto solves = [](const PeerRun& r) { return static_cast<double>(r.solves); };
  const auto makespan_ms = [](const PeerRun& r) { return 1e3 * makespan(r); };
  fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", spec.hosts,
             pattern, flows.size(), cell(dtsim_run, wall, "{:.4g}"), cell(dtsim_run, cpu, "{:.4g}"),
             cell(simgrid_run, wall, "{:.4g}"), cell(simgrid_run, cpu, "{:.4g}"), speedup,
             cell(dtsim_run, makespan_ms, "{:.4f}"), cell(simgrid_run, makespan_ms, "{:.4f}"),
             max_rel, mean_rel, cell(dtsim_run, solves, "{:.0f}"));
  if (!agree) {
    fmt::print(stderr, "flow_vs_simgrid: completion times differ by more than {:.1f}%\n",
               100 * tolerance);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace dtsim::bench::peers

int main(int argc, char** argv) {
  try {
    return dtsim::bench::peers::run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "flow_vs_simgrid: {}\n", e.what());
    return 2;
  }
}
