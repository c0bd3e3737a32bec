// Sample inputs for the HTML and trace tests: a small sweep's results table and a timeline of
// two pipeline stages with their communication and link utilisation. The numbers come from a
// closed-form toy, not the models: these tests check the pages, not the predictions.
#pragma once

#include <cmath>
#include <string>

#include "report/cluster_bill.h"
#include "report/html_report.h"
#include "report/sweep_table.h"
#include "report/timeline.h"

namespace dtsim::testing {

inline report::SweepTable sample_sweep_table() {
  report::SweepTable t;
  t.sweep_file = "scenarios/sweeps/llama3-70b-fabric.yaml";
  t.base_file = "scenarios/llama3-70b-1024gpu.yaml";
  t.base_scenario = "name: llama3-70b-1024gpu\ncluster:\n  node: hgx-h100\n  nodes: 128\n";
  t.varied_keys = {"cluster.fabric.kind", "cluster.fabric.oversubscription", "cluster.nodes"};
  std::size_t index = 0;
  for (const char* kind : {"fat-tree", "rail-optimized"}) {
    for (const double o : {1.0, 2.0, 4.0}) {
      for (const int nodes : {32, 64, 128, 256}) {
        topology::ClusterSpec c;
        c.nodes = nodes;
        c.fabric.oversubscription = o;
        c.fabric.kind = std::string(kind) == "fat-tree" ? topology::FabricKind::fat_tree
                                                        : topology::FabricKind::rail_optimized;
        const report::PointCost cost = report::price(report::count_cluster(c), config::CostModel{});
        const double gpus = nodes * 8.0;
        const double compute = 2400.0 / gpus;
        const double comm = (0.9 + 0.35 * std::log2(o)) *
                            (std::string(kind) == "fat-tree" ? 1.0 : 0.8) *
                            (0.6 + 0.1 * std::log2(gpus / 256));
        const double bubble = 0.08 * compute;
        const double time = compute + comm + bubble;
        t.rows.push_back({index++,
                          {kind,
                           o == 1   ? "1"
                           : o == 2 ? "2"
                                    : "4",
                           std::to_string(nodes)},
                          {{"iteration_time_s", time},
                           {"mfu", 0.52 * compute / time},
                           {"compute_share", compute / time},
                           {"exposed_comm_share", comm / time},
                           {"bubble_share", bubble / time}},
                          cost.capex_usd,
                          cost.power_w,
                          false,
                          ""});
      }
    }
  }
  report::mark_pareto(t);
  return t;
}

inline report::Timeline sample_timeline() {
  using dtsim::Time;
  report::Timeline t;
  const char* phases[] = {"fwd", "fwd", "fwd", "fwd", "bwd", "bwd", "bwd", "bwd"};
  for (int stage = 0; stage < 2; ++stage) {
    const std::string gpu = "node" + std::to_string(stage) + "/gpu0";
    const auto compute = t.track(gpu, "compute");
    const auto tp = t.track(gpu, "tp-comm");
    const auto pp = t.track(gpu, "pp-comm");
    const auto dp = t.track(gpu, "dp-comm");
    double at = stage * 130.0;
    for (int m = 0; m < 8; ++m) {
      const double len = phases[m][0] == 'f' ? 110 : 220;
      t.span(compute, std::string(phases[m]) + " mb" + std::to_string(m % 4), Time::us(at),
             Time::us(at + len), "compute");
      t.span(tp, "all_reduce", Time::us(at + 0.4 * len), Time::us(at + 0.55 * len), "tp");
      t.span(pp, "send_recv", Time::us(at + len), Time::us(at + len + 18), "pp");
      at += len + 22;
    }
    t.span(dp, "reduce_scatter", Time::us(at - 500), Time::us(at + 160), "dp");
    t.span(compute, "optimizer", Time::us(at + 160), Time::us(at + 230), "compute");
  }
  for (int l = 0; l < 8; ++l) {
    const auto link =
        t.track("links", "leaf" + std::to_string(l / 2) + "->spine" + std::to_string(l % 4));
    for (int k = 0; k <= 40; ++k) {
      const double v =
          std::clamp(0.5 + 0.5 * std::sin(0.35 * k + l) * (l % 3 == 0 ? 1.0 : 0.6), 0.0, 1.0);
      t.counter(link, "utilisation", Time::us(45.0 * k), v);
    }
  }
  return t;
}

inline report::RunReport sample_run_report(const report::Timeline& timeline) {
  report::RunReport r;
  r.name = "llama3-70b on 16 GPUs (sample)";
  r.scenario = "name: sample\ncluster:\n  node: hgx-h100\n  nodes: 2\n";
  r.summary = {{"iteration time", "1.83 s"},
               {"TFLOP/s per GPU", "512"},
               {"MFU", "51.8%"},
               {"tokens/s per GPU", "2240"}};
  r.breakdown = {{"iteration",
                  {{"compute", 1.41}, {"exposed communication", 0.27}, {"pipeline bubble", 0.15}}}};
  r.timeline = &timeline;
  return r;
}

}  // namespace dtsim::testing
