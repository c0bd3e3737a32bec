// packet_vs_ns3: dtsim's packet model and ns-3 side by side on one fabric and one flow list
// (peer_case.h): N hosts with a 100 Gb/s port each on a non-blocking 2-tier fat-tree (32 hosts a
// leaf) whose links all have 1 us of latency, a ring shift, an all-to-all or a random
// permutation, every flow started at t = 0 and sprayed packet by packet over the equal-cost
// routes (dtsim: adaptive routing, packet j on route j mod K; ns-3: random ECMP per packet). A
// dtsim host is bare (no PCIe or NIC latency, peer_case.h), links run at line rate, and every
// packet is --mtu bytes on the wire in both (ns-3's carry the UDP, IPv4 and PPP headers inside
// them, ns3_run.h). Prints one table row: hosts, pattern, flows, packets, each simulator's wall
// and CPU time, events and events per wall second, the speedups, each makespan and the
// completion times' differences. Exits 1 when any flow's completion time or the makespan differ
// by more than --tolerance, 2 on bad flags.
//   packet_vs_ns3 --hosts 128 --pattern ring --bytes 4000000 --header
// --times also prints dtsim's engine fingerprint and each flow's completion time, to check that a
// change to the packet model moves nothing. --dtsim-runs N runs dtsim N times and reports the run
// of median CPU time (one line on stderr gives the range), after checking that every run gave the
// same answer: a sub-second run on a shared machine is as noisy as the machine.
//   packet_vs_ns3 --hosts 128 --pattern all-to-all --bytes 262144 --tolerance 1 --sim both --dtsim-runs 15
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "bench/peers/ns3_run.h"
#include "bench/peers/peer_case.h"
#include "bench/peers/peer_report.h"
#include "bench/peers/peer_run.h"
#include "network/packet/packet_model.h"
#include "topology/cluster.h"

namespace dtsim::bench::peers {
namespace {

int run(int argc, char** argv) {
  CLI::App app{"Runs dtsim's packet model and ns-3 on the same fabric and flows and compares them.",
               "packet_vs_ns3"};
  PeerCaseSpec spec;
  spec.routing = topology::Routing::adaptive;
  spec.bare_hosts = true;
  CaseFlags flags{.pattern = "ring"};
  int64_t mtu = 4096;
  double latency_us = 1;
  bool times = false;
  int dtsim_runs = 1;
  add_case_flags(app, spec, flags, "ns3");
  app.add_option("--mtu", mtu, "bytes of every packet on the wire but a flow's last")
      ->check(CLI::Range(int64_t{kNs3HeaderBytes + 1}, int64_t{65'535}));
  app.add_option("--latency-us", latency_us, "latency of every link, in microseconds")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--times", times,
               "after the table, dtsim's engine fingerprint and every flow's completion time in ps");
  app.add_option("--dtsim-runs", dtsim_runs,
                 "run dtsim this many times and report the run of median CPU time (every run must "
                 "give the same fingerprint and times)")
      ->check(CLI::Range(1, 101));
  if (const int status = parse_case_flags(app, argc, argv, spec, flags)) return status;
  spec.link_latency = Time::us(latency_us);

  const std::vector<network::Transfer> flows = peer_flows(spec);
  std::optional<PeerRun> dtsim_run;
  std::optional<PeerRun> ns3_run;
  if (flags.sim != "ns3") {
    const RepeatedRun r = repeat_run(dtsim_runs, [&] { return run_dtsim_packets(spec, flows, Bytes(mtu)); });
    dtsim_run = r.median;
    if (r.runs > 1) {
      fmt::print(stderr, "packet_vs_ns3: dtsim over {} runs, one fingerprint: CPU {:.4g}-{:.4g} s, median {:.4g} s\n",
                 r.runs, r.min_cpu_s, r.max_cpu_s, r.median.cpu_s);
    }
  }
  if (flags.sim != "dtsim") {
    const auto cluster = peer_cluster(spec);
    ns3_run = run_ns3(*cluster, flows, spec.efficiency, {.mtu = Bytes(mtu), .seed = spec.seed});
  }

  if (flags.header) {
    fmt::print(
        "| hosts | pattern | flows | packets | dtsim wall s | dtsim CPU s | dtsim events | dtsim "
        "events/s | ns-3 wall s | ns-3 CPU s | ns-3 events | ns-3 events/s | speedup (wall) | "
        "speedup (CPU) | dtsim makespan us | ns-3 makespan us | makespan diff | max rel diff | "
        "mean rel diff |\n");
    fmt::print(
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: | ---: | ---: | ---: | ---: | ---: |\n");
  }
  const ComparisonCells c = compare_runs(dtsim_run, ns3_run, flags.tolerance, "{:.0f}x");
  uint64_t packets = 0;
  for (const network::Transfer& t : flows) {
    packets += network::PacketNetworkModel::packet_hops(t.bytes, 1, Bytes(mtu));
  }
  const auto wall = [](const PeerRun& r) { return r.wall_s; };
  const auto cpu = [](const PeerRun& r) { return r.cpu_s; };
  const auto events = [](const PeerRun& r) { return static_cast<double>(r.events); };
  const auto rate = [](const PeerRun& r) { return static_cast<double>(r.events) / r.wall_s; };
  const auto makespan_us = [](const PeerRun& r) { return 1e6 * makespan(r); };
  fmt::print(
      "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} "
      "| {} | {} |\n",
      spec.hosts, flags.pattern, flows.size(), packets, cell(dtsim_run, wall, "{:.4g}"),
      cell(dtsim_run, cpu, "{:.4g}"), cell(dtsim_run, events, "{:.4g}"),
      cell(dtsim_run, rate, "{:.3g}"), cell(ns3_run, wall, "{:.4g}"), cell(ns3_run, cpu, "{:.4g}"),
      cell(ns3_run, events, "{:.4g}"), cell(ns3_run, rate, "{:.3g}"), c.speedup_wall,
      c.speedup_cpu, cell(dtsim_run, makespan_us, "{:.3f}"), cell(ns3_run, makespan_us, "{:.3f}"),
      c.makespan_rel, c.max_rel, c.mean_rel);
  if (times && dtsim_run) {
    fmt::print("dtsim fingerprint {:016x}\n", dtsim_run->fingerprint);
    for (size_t i = 0; i < flows.size(); ++i) {
      fmt::print("flow {} {} -> {}: {:.0f} ps\n", i, flows[i].src_gpu, flows[i].dst_gpu,
                 dtsim_run->completion_s[i] * 1e12);
    }
  }
  return agreement_status("packet_vs_ns3", c.agree, flags.tolerance);
}

}  // namespace
}  // namespace dtsim::bench::peers

int main(int argc, char** argv) {
  return dtsim::bench::peers::guarded_main("packet_vs_ns3", dtsim::bench::peers::run, argc, argv);
}
