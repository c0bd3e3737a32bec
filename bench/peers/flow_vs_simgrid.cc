// flow_vs_simgrid: dtsim's flow model and SimGrid side by side on one fabric and one flow list
// (peer_case.h): N one-GPU hosts with a 100 Gb/s NIC each on a non-blocking 2-tier fat-tree, an
// all-to-all, a random permutation or a ring shift, every flow started at t = 0 on the ECMP route
// dtsim gives it. Prints one table row: hosts, pattern, flows, each simulator's wall and CPU time,
// the speedup (SimGrid's wall time over dtsim's), each makespan, the per-flow completion times'
// largest and mean relative difference, and how many max-min solves dtsim ran. Exits 1 when any
// flow's completion time or the makespan differ by more than --tolerance, 2 on bad flags.
//   flow_vs_simgrid --hosts 128 --pattern all-to-all --bytes 1000000 --sim both
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <optional>
#include <string>

#include "bench/peers/peer_case.h"
#include "bench/peers/peer_report.h"
#include "bench/peers/peer_run.h"
#include "bench/peers/simgrid_run.h"
#include "topology/cluster.h"

namespace dtsim::bench::peers {
namespace {

int run(int argc, char** argv) {
  CLI::App app{
      "Runs dtsim's flow model and SimGrid on the same fabric and flows and compares them.",
      "flow_vs_simgrid"};
  PeerCaseSpec spec;
  CaseFlags flags;
  std::string latency = "after-drain";
  double efficiency = 1;
  add_case_flags(app, spec, flags, "simgrid");
  app.add_option(
         "--simgrid-latency", latency,
         "after-drain: SimGrid's links without latency, each flow's route latency added to its "
         "completion (dtsim's semantics); links: on SimGrid's links, which CM02 weights sharing by")
      ->check(CLI::IsMember({"after-drain", "links"}));
  app.add_option("--link-efficiency", efficiency,
                 "share of line rate every link carries, in both simulators")
      ->check(CLI::Range(1e-3, 1.0));
  FlowBatching batching;
  int64_t window_ps = batching.completion_window.ps();
  std::string times_file;
  app.add_option("--completion-window-ps", window_ps,
                 "dtsim's flow model: starts and drains within this many picoseconds share a solve")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000}));
  app.add_option("--completion-precision", batching.completion_precision,
                 "dtsim's flow model: drains within this share of their flow's run share a solve "
                 "(network.flow.completion_precision)")
      ->check(CLI::Range(0.0, 0.01));
  app.add_option("--times", times_file,
                 "write dtsim's completion time of every flow, seconds, one a line in flow order");
  if (const int status = parse_case_flags(app, argc, argv, spec, flags)) return status;
  spec.efficiency = {.nvlink = efficiency, .pcie = efficiency, .network = efficiency};

  const std::vector<network::Transfer> flows = peer_flows(spec);
  std::optional<PeerRun> dtsim_run;
  std::optional<PeerRun> simgrid_run;
  batching.completion_window = Time::ps(window_ps);
  if (flags.sim != "simgrid") {
    dtsim_run = run_dtsim(spec, flows, batching);
    fmt::print(stderr, "dtsim: {} solves covering {} flows ({:.0f} a solve)\n", dtsim_run->solves,
               dtsim_run->flows_solved,
               static_cast<double>(dtsim_run->flows_solved) /
                   static_cast<double>(std::max<uint64_t>(dtsim_run->solves, 1)));
    if (!times_file.empty()) {
      std::FILE* out = std::fopen(times_file.c_str(), "w");
      if (out == nullptr) throw std::runtime_error("cannot write " + times_file);
      for (double t : dtsim_run->completion_s) fmt::print(out, "{:.17g}\n", t);
      std::fclose(out);
    }
  }
  if (flags.sim != "dtsim") {
    const auto cluster = peer_cluster(spec);
    simgrid_run = run_simgrid(*cluster, flows, spec.efficiency, *parse_simgrid_latency(latency));
  }

  if (flags.header) {
    fmt::print(
        "| hosts | pattern | flows | dtsim wall s | dtsim CPU s | SimGrid wall s | SimGrid CPU s | "
        "speedup (wall) | dtsim makespan ms | SimGrid makespan ms | max rel diff | mean rel diff | "
        "dtsim solves |\n");
    fmt::print(
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "|\n");
  }
  const ComparisonCells c = compare_runs(dtsim_run, simgrid_run, flags.tolerance, "{:.1f}x");
  const auto wall = [](const PeerRun& r) { return r.wall_s; };
  const auto cpu = [](const PeerRun& r) { return r.cpu_s; };
  const auto solves = [](const PeerRun& r) { return static_cast<double>(r.solves); };
  const auto makespan_ms = [](const PeerRun& r) { return 1e3 * makespan(r); };
  fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", spec.hosts,
             flags.pattern, flows.size(), cell(dtsim_run, wall, "{:.4g}"),
             cell(dtsim_run, cpu, "{:.4g}"), cell(simgrid_run, wall, "{:.4g}"),
             cell(simgrid_run, cpu, "{:.4g}"), c.speedup_wall, cell(dtsim_run, makespan_ms, "{:.4f}"),
             cell(simgrid_run, makespan_ms, "{:.4f}"), c.max_rel, c.mean_rel,
             cell(dtsim_run, solves, "{:.0f}"));
  return agreement_status("flow_vs_simgrid", c.agree, flags.tolerance);
}

}  // namespace
}  // namespace dtsim::bench::peers

int main(int argc, char** argv) {
  return dtsim::bench::peers::guarded_main("flow_vs_simgrid", dtsim::bench::peers::run, argc, argv);
}
