#include "bench/peers/peer_report.h"

#include <fmt/core.h>

#include <exception>
#include <vector>

namespace dtsim::bench::peers {

void add_case_flags(CLI::App& app, PeerCaseSpec& spec, CaseFlags& flags, const std::string& peer) {
  app.add_option("--hosts", spec.hosts, "hosts, 2 to 2048")->check(CLI::Range(2, 2048));
  app.add_option("--pattern", flags.pattern, "all-to-all | permutation | ring")
      ->check(CLI::IsMember({"all-to-all", "permutation", "ring"}));
  app.add_option("--bytes", flags.bytes, "bytes per flow")->check(CLI::PositiveNumber);
  app.add_option("--seed", spec.seed, "seed of the permutation and the routes' draws");
  app.add_option("--sim", flags.sim, "dtsim | " + peer + " | both")
      ->check(CLI::IsMember(std::vector<std::string>{"dtsim", peer, "both"}));
  app.add_option("--tolerance", flags.tolerance, "largest relative difference that still agrees");
  app.add_flag("--header", flags.header, "print the table's header line first");
}

int parse_case_flags(CLI::App& app, int argc, char** argv, PeerCaseSpec& spec,
                     const CaseFlags& flags) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  spec.pattern = *parse_pattern(flags.pattern);
  spec.bytes = Bytes(flags.bytes);
  return 0;
}

std::string cell(const std::optional<PeerRun>& r, double (*figure)(const PeerRun&),
                 const char* format) {
  return r ? fmt::format(fmt::runtime(format), figure(*r)) : "-";
}

ComparisonCells compare_runs(const std::optional<PeerRun>& dtsim,
                             const std::optional<PeerRun>& peer, double tolerance,
                             const char* speedup_format) {
  ComparisonCells c;
  if (!dtsim || !peer) return c;
  const Agreement a = compare(*dtsim, *peer);  // against the peer's figures
  c.speedup_wall = fmt::format(fmt::runtime(speedup_format), peer->wall_s / dtsim->wall_s);
  c.speedup_cpu = fmt::format(fmt::runtime(speedup_format), peer->cpu_s / dtsim->cpu_s);
  c.makespan_rel = fmt::format("{:.3f}%", 100 * a.makespan_rel);
  c.max_rel = fmt::format("{:.3f}%", 100 * a.max_rel);
  c.mean_rel = fmt::format("{:.3f}%", 100 * a.mean_rel);
  c.agree = a.max_rel <= tolerance && a.makespan_rel <= tolerance;
  return c;
}

int agreement_status(std::string_view program, bool agree, double tolerance) {
  if (agree) return 0;
  fmt::print(stderr, "{}: completion times differ by more than {:.1f}%\n", program,
             100 * tolerance);
  return 1;
}

int guarded_main(std::string_view program, int (*body)(int, char**), int argc, char** argv) {
  try {
    return body(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: {}\n", program, e.what());
    return 2;
  }
}

}  // namespace dtsim::bench::peers
