#include "report/training_writer.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace dtsim::report {
namespace {

using workloads::CommCategory;
constexpr CommCategory kCategories[] = {CommCategory::tp, CommCategory::cp, CommCategory::ep,
                                        CommCategory::dp, CommCategory::pp};

nlohmann::json breakdown_json(const workloads::TimeBreakdown& b) {
  nlohmann::json exposed = nlohmann::json::object();
  for (CommCategory c : kCategories) exposed[std::string(workloads::name(c))] = b.exposed[static_cast<int>(c)].seconds();
  return {{"compute_s", b.compute.seconds()},
          {"exposed_comm_s", exposed},
          {"exposed_comm_total_s", b.exposed_total().seconds()},
          {"bubble_s", b.bubble.seconds()}};
}

void write_table(const workloads::TrainingResult& r, std::ostream& out) {
  const double it = r.iteration_time_s > 0 ? r.iteration_time_s : 1;
  auto pct = [&](Time t) { return 100 * t.seconds() / it; };
  out << fmt::format("workload            {}\n", r.workload);
  out << fmt::format("GPUs                {} ({} simulated ranks, {} ops)\n", r.gpus, r.simulated_ranks, r.ops);
  out << fmt::format("iteration time      {:.4f} s\n", r.iteration_time_s);
  out << fmt::format("TFLOP/s per GPU     {:.1f}\n", r.tflops_per_gpu);
  out << fmt::format("MFU                 {:.1f}%\n", 100 * r.mfu);
  out << fmt::format("tokens/s per GPU    {:.0f}\n", r.tokens_per_s_per_gpu);
  out << "where the time goes (per GPU)\n";
  out << fmt::format("  compute           {:8.4f} s  {:5.1f}%\n", r.breakdown.compute.seconds(), pct(r.breakdown.compute));
  for (CommCategory c : kCategories) {
    const Time t = r.breakdown.exposed[static_cast<int>(c)];
    out << fmt::format("  exposed {:<9} {:8.4f} s  {:5.1f}%\n", workloads::name(c), t.seconds(), pct(t));
  }
  out << fmt::format("  pipeline bubble   {:8.4f} s  {:5.1f}%\n", r.breakdown.bubble.seconds(), pct(r.breakdown.bubble));
  if (!r.critical_ops.empty()) {
    out << "critical path, largest contributors\n";
    for (const auto& c : r.critical_ops) {
      out << fmt::format("  {:<28} {:<8} {:8.4f} s  x{}\n", c.label, c.what, c.time_s, c.count);
    }
  }
}

}  // namespace

void write_training(const workloads::TrainingResult& r, std::string_view format, std::ostream& out) {
  if (format == "table") {
    write_table(r, out);
  } else if (format == "json") {
    nlohmann::json crit = nlohmann::json::array();
    for (const auto& c : r.critical_ops) crit.push_back({{"label", c.label}, {"what", c.what}, {"time_s", c.time_s}, {"count", c.count}});
    nlohmann::json j = {{"schema_version", kTrainingSchemaVersion},
                        {"workload", r.workload},
                        {"gpus", r.gpus},
                        {"iteration_time_s", r.iteration_time_s},
                        {"tflops_per_gpu", r.tflops_per_gpu},
                        {"mfu", r.mfu},
                        {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu},
                        {"breakdown", breakdown_json(r.breakdown)},
                        {"critical_path", {{"split", breakdown_json(r.critical_split)}, {"largest", crit}}},
                        {"simulated_ranks", r.simulated_ranks},
                        {"ops", r.ops}};
    out << j.dump(2) << '\n';
  } else if (format == "csv") {
    out << "workload,gpus,iteration_time_s,tflops_per_gpu,mfu,tokens_per_s_per_gpu,compute_s,exposed_tp_s,"
           "exposed_cp_s,exposed_ep_s,exposed_dp_s,exposed_pp_s,bubble_s\n";
    const auto& b = r.breakdown;
    out << fmt::format("{},{},{:.6f},{:.3f},{:.5f},{:.2f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f}\n",
                       r.workload, r.gpus, r.iteration_time_s, r.tflops_per_gpu, r.mfu, r.tokens_per_s_per_gpu,
                       b.compute.seconds(), b.exposed[0].seconds(), b.exposed[1].seconds(), b.exposed[2].seconds(),
                       b.exposed[3].seconds(), b.exposed[4].seconds(), b.bubble.seconds());
  } else {
    throw std::invalid_argument("training output format must be table, json or csv, got '" + std::string(format) + "'");
  }
}

}  // namespace dtsim::report
