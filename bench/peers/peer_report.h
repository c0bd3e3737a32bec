// PeerReport: what the comparison programs (flow_vs_simgrid, packet_vs_ns3) share around their
// runs: the case's flags, a table cell per figure, the cells comparing the two runs, the exit
// status of the agreement check, and main's guard.
//   CaseFlags flags{.pattern = "ring"};
//   add_case_flags(app, spec, flags, "ns3");
//   if (const int status = parse_case_flags(app, argc, argv, spec, flags)) return status;
//   fmt::print("| {} |\n", cell(run, [](const PeerRun& r) { return r.wall_s; }, "{:.4g}"));
//   const ComparisonCells c = compare_runs(dtsim_run, ns3_run, flags.tolerance, "{:.0f}x");
//   return agreement_status("packet_vs_ns3", c.agree, flags.tolerance);
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bench/peers/peer_case.h"
#include "bench/peers/peer_run.h"

namespace dtsim::bench::peers {

// The flags both programs take beside the case's hosts and seed, as given.
struct CaseFlags {
  std::string pattern = "all-to-all";
  std::string sim = "both";   // dtsim | the peer | both
  int64_t bytes = 1'000'000;  // per flow
  double tolerance = 0.05;
  bool header = false;
};
// Adds --hosts and --seed (into spec), --pattern, --bytes, --sim (dtsim | `peer` | both),
// --tolerance and --header (into flags).
void add_case_flags(CLI::App& app, PeerCaseSpec& spec, CaseFlags& flags, const std::string& peer);
// Parses the command line and sets spec's pattern and bytes from flags: 0, or 2 after CLI11 has
// printed the help or the error.
int parse_case_flags(CLI::App& app, int argc, char** argv, PeerCaseSpec& spec,
                     const CaseFlags& flags);

// `figure` of the run in fmt's `format`, or "-" where the simulator did not run.
std::string cell(const std::optional<PeerRun>& r, double (*figure)(const PeerRun&),
                 const char* format);

// What the table says of dtsim's run against the peer's, "-" in each cell where either did not run:
// the speed-ups (peer's time over dtsim's) and the relative differences of the makespan and of
// the flows' completion times; `agree` when both differences are within the tolerance (or nothing
// was compared).
struct ComparisonCells {
  std::string speedup_wall = "-";
  std::string speedup_cpu = "-";
  std::string makespan_rel = "-";
  std::string max_rel = "-";
  std::string mean_rel = "-";
  bool agree = true;
};
// `speedup_format` is fmt's, for the speed-ups.
ComparisonCells compare_runs(const std::optional<PeerRun>& dtsim,
                             const std::optional<PeerRun>& peer, double tolerance,
                             const char* speedup_format);

// 0 when the runs agree; else 1, saying on stderr that they differ by more than `tolerance`.
int agreement_status(std::string_view program, bool agree, double tolerance);

// Runs a program's body: its exit status, or 2 with the exception's message on stderr.
int guarded_main(std::string_view program, int (*body)(int, char**), int argc, char** argv);

}  // namespace dtsim::bench::peers
