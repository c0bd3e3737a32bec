#include "report/training_writer.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>
#include <utility>

#include "report/csv_field.h"
#include "report/port_columns.h"
#include "report/time_unit.h"

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
          {"host_wait_s", b.host.seconds()},
          {"bubble_s", b.bubble.seconds()}};
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

nlohmann::json memory_json(const workloads::MemoryEstimate& m) {
  return {{"stage", m.stage},
          {"weights_gib", m.weights / kGiB},
          {"gradients_gib", m.gradients / kGiB},
          {"optimizer_gib", m.optimizer / kGiB},
          {"activations_gib", m.activations / kGiB},
          {"offloaded_to_host_gib", m.offloaded / kGiB},
          {"transient_gib", m.transient / kGiB},
          {"runtime_gib", m.runtime / kGiB},
          {"total_gib", m.total() / kGiB},
          {"capacity_gib", m.capacity / kGiB},
          {"microbatches_in_flight", m.microbatches_in_flight},
          {"activation_recompute", std::string(workloads::name(m.recompute))},
          {"fits", m.fits()}};
}

void write_memory_table(const workloads::MemoryEstimate& m, std::ostream& out) {
  out << fmt::format("memory per GPU (pipeline stage {}, the fullest)\n", m.stage);
  auto line = [&](const char* what, double bytes, const std::string& note = {}) {
    out << fmt::format("  {:<17} {:8.2f} GiB{}\n", what, bytes / kGiB, note.empty() ? "" : "  " + note);
  };
  line("weights", m.weights);
  line("gradients", m.gradients);
  line("optimizer states", m.optimizer);
  line("activations", m.activations,
       fmt::format("({} microbatch chunks in flight, recompute {})", m.microbatches_in_flight, workloads::name(m.recompute)));
  line("transient", m.transient);
  line("runtime", m.runtime);
  if (m.offloaded > 0) line("(in host memory)", m.offloaded, "activations of cpu_offload_layers, not in the total");
  out << fmt::format("  total             {:8.2f} GiB  of {:.0f} GiB HBM ({:.0f}%){}\n", m.total() / kGiB,
                     m.capacity / kGiB, 100 * m.total() / m.capacity,
                     m.fits() ? "" : ": DOES NOT FIT");
}

void write_table(const workloads::TrainingResult& r, std::ostream& out) {
  const double it = r.iteration_time_s > 0 ? r.iteration_time_s : 1;
  auto pct = [&](Time t) { return 100 * t.seconds() / it; };
  const TimeUnit u = time_unit(r.iteration_time_s);
  auto in_unit = [&](double seconds) { return seconds * u.per_second; };
  out << fmt::format("workload            {}\n", r.workload);
  out << fmt::format("GPUs                {} ({} simulated rank{}, {} ops)\n", r.gpus, r.simulated_ranks,
                     r.simulated_ranks == 1 ? "" : "s", r.ops);
  if (!r.ranks_basis.empty()) out << fmt::format("simulated           {}\n", r.ranks_basis);
  if (r.neighbour_copies > 0) {
    out << fmt::format("neighbours          {} {} of the job on the GPUs after it, communicating in step\n",
                       r.neighbour_copies, r.neighbour_copies == 1 ? "copy" : "copies");
  }
  out << fmt::format("iteration time      {:.4f} {}\n", in_unit(r.iteration_time_s), u.name);
  if (r.tflops_per_gpu > 0 || r.tokens_per_s_per_gpu > 0) {
    out << fmt::format("TFLOP/s per GPU     {:.1f}\n", r.tflops_per_gpu);
    out << fmt::format("MFU                 {:.1f}%\n", 100 * r.mfu);
    out << fmt::format("tokens/s per GPU    {:.0f}\n", r.tokens_per_s_per_gpu);
  } else {
    out << "TFLOP/s, MFU        n/a: the workload carries no model FLOPs or tokens (a foreign trace)\n";
  }
  out << "where the time goes (per GPU)\n";
  out << fmt::format("  compute           {:8.4f} {:<2} {:5.1f}%\n", in_unit(r.breakdown.compute.seconds()), u.name,
                     pct(r.breakdown.compute));
  for (CommCategory c : kCategories) {
    const Time t = r.breakdown.exposed[static_cast<int>(c)];
    out << fmt::format("  exposed {:<9} {:8.4f} {:<2} {:5.1f}%\n", workloads::name(c), in_unit(t.seconds()), u.name,
                       pct(t));
  }
  if (r.breakdown.host > Time::zero()) {
    out << fmt::format("  waiting on host   {:8.4f} {:<2} {:5.1f}%\n", in_unit(r.breakdown.host.seconds()), u.name,
                       pct(r.breakdown.host));
  }
  out << fmt::format("  pipeline bubble   {:8.4f} {:<2} {:5.1f}%\n", in_unit(r.breakdown.bubble.seconds()), u.name,
                     pct(r.breakdown.bubble));
  if (!r.critical_ops.empty()) {
    out << "critical path, largest contributors\n";
    // Kernel names from traces run long: the column widens to the longest (up to 80).
    size_t width = 28;
    for (const auto& c : r.critical_ops) width = std::max(width, std::min<size_t>(c.label.size(), 80));
    for (const auto& c : r.critical_ops) {
      const std::string label = c.label.size() <= width ? c.label : c.label.substr(0, width - 2) + "..";
      out << fmt::format("  {:<{}} {:<8} {:8.4f} {:<2} x{}\n", label, width, c.what, in_unit(c.time_s), u.name, c.count);
    }
  }
  if (r.memory) write_memory_table(*r.memory, out);
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
                        {"simulated_ranks_basis", r.ranks_basis},
                        {"ops", r.ops},
                        {"neighbour_copies", r.neighbour_copies}};
    if (r.memory) j["memory"] = memory_json(*r.memory);
    out << j.dump(2) << '\n';
  } else if (format == "csv") {
    out << "workload,gpus,iteration_time_s,tflops_per_gpu,mfu,tokens_per_s_per_gpu,compute_s,exposed_tp_s,"
           "exposed_cp_s,exposed_ep_s,exposed_dp_s,exposed_pp_s,bubble_s,memory_gib,memory_fits,host_wait_s\n";
    const auto& b = r.breakdown;
    out << fmt::format("{},{},{:.6f},{:.3f},{:.5f},{:.2f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{:.6f}\n",
                       r.workload, r.gpus, r.iteration_time_s, r.tflops_per_gpu, r.mfu, r.tokens_per_s_per_gpu,
                       b.compute.seconds(), b.exposed[0].seconds(), b.exposed[1].seconds(), b.exposed[2].seconds(),
                       b.exposed[3].seconds(), b.exposed[4].seconds(), b.bubble.seconds(),
                       r.memory ? fmt::format("{:.3f}", r.memory->total() / kGiB) : std::string(),
                       r.memory ? (r.memory->fits() ? "true" : "false") : "", b.host.seconds());
  } else {
    throw std::invalid_argument("training output format must be table, json or csv, got '" + std::string(format) + "'");
  }
}

void write_op_table(const workloads::TrainingResult& r, const std::vector<workloads::OpTotal>& ops,
                    std::string_view format, std::ostream& out) {
  const double iteration = r.iteration_time_s;
  auto share = [&](const workloads::OpTotal& t) { return iteration > 0 ? t.busy_s / iteration : 0.0; };
  auto mean_us = [](const workloads::OpTotal& t) { return t.count > 0 ? t.busy_s / t.count * 1e6 : 0.0; };
  if (format == "csv") {
    out << "stage,stream,activity,op,count,busy_s,mean_us,share,critical_s\n";
    for (const auto& t : ops) {
      out << fmt::format("{},{},{},{},{:.6g},{:.9f},{:.3f},{:.5f},{:.9f}\n", t.stage, t.stream, t.what,
                         csv_field(t.label), t.count, t.busy_s, mean_us(t), share(t), t.critical_s);
    }
  } else if (format == "json") {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& t : ops) {
      rows.push_back({{"stage", t.stage},
                      {"stream", t.stream},
                      {"activity", t.what},
                      {"op", t.label},
                      {"count", t.count},
                      {"busy_s", t.busy_s},
                      {"mean_us", mean_us(t)},
                      {"share", share(t)},
                      {"critical_s", t.critical_s}});
    }
    nlohmann::json j = {{"schema_version", kTrainingSchemaVersion},
                        {"workload", r.workload},
                        {"iteration_time_s", iteration},
                        {"ops", rows}};
    out << j.dump(2) << '\n';
  } else {
    throw std::invalid_argument("op table format must be csv or json, got '" + std::string(format) + "'");
  }
}

std::vector<LinkRow> link_rows(const workloads::TrainingResult& r, const std::vector<workloads::LinkTraffic>& links,
                               const topology::Cluster& cluster) {
  std::vector<LinkRow> rows;
  rows.reserve(links.size());
  for (const auto& t : links) {
    const topology::Link& l = cluster.link(t.link);
    const double bw = l.bandwidth.bytes_per_s();
    rows.push_back({cluster.link_name(t.link), topology::name(l.kind), l.bandwidth.gbytes_per_s(), t.bytes, t.busy_s,
                    t.busy_s > 0 && bw > 0 ? t.bytes / (bw * t.busy_s) : 0.0,
                    r.iteration_time_s > 0 && bw > 0 ? t.bytes / (bw * r.iteration_time_s) : 0.0, t.port});
  }
  return rows;
}

void write_link_table(const workloads::TrainingResult& r, const std::vector<LinkRow>& rows, std::string_view format,
                      std::ostream& out) {
  // The packet model's port columns come with any row that has them; a flow run's table keeps its
  // seven columns.
  const bool ports = std::any_of(rows.begin(), rows.end(), [](const LinkRow& row) { return row.port.has_value(); });
  if (format == "csv") {
    out << "link,kind,bandwidth_GBps,bytes,busy_s,utilisation_busy,utilisation_iteration";
    out << (ports ? kPortCsvHeader : "") << '\n';
    for (const LinkRow& row : rows) {
      out << fmt::format("{},{},{:.3f},{:.0f},{:.9f},{:.5f},{:.5f}", csv_field(row.name), row.kind,
                         row.bandwidth_gbytes, row.bytes, row.busy_s, row.utilisation_busy, row.utilisation_iteration);
      out << port_csv_cells(row.port, ports) << '\n';
    }
  } else if (format == "json") {
    nlohmann::json arr = nlohmann::json::array();
    for (const LinkRow& row : rows) {
      nlohmann::json item = {{"link", row.name},
                             {"kind", std::string(row.kind)},
                             {"bandwidth_GBps", row.bandwidth_gbytes},
                             {"bytes", row.bytes},
                             {"busy_s", row.busy_s},
                             {"utilisation_busy", row.utilisation_busy},
                             {"utilisation_iteration", row.utilisation_iteration}};
      add_port_json(item, row.port);
      arr.push_back(std::move(item));
    }
    out << nlohmann::json{{"schema_version", kTrainingSchemaVersion},
                          {"workload", r.workload},
                          {"iteration_time_s", r.iteration_time_s},
                          {"links", arr}}
               .dump(2)
        << '\n';
  } else {
    throw std::invalid_argument("link table format must be csv or json, got '" + std::string(format) + "'");
  }
}

void add_training_timeline(const workloads::TrainingTrace& trace, Timeline& timeline, int ranks_per_stage) {
  const auto& w = trace.workload;
  const auto& times = trace.execution.op_times;
  std::map<int, int> drawn;  // ranks drawn per stage
  for (size_t r = 0; r < w.ranks.size() && r < times.size(); ++r) {
    const auto& g = w.ranks[r];
    if (ranks_per_stage > 0 && drawn[g.stage]++ >= ranks_per_stage) continue;
    const std::string process = fmt::format("gpu{}/stage{}", g.gpu, g.stage);
    std::array<int64_t, workloads::kStreamCount> track{};
    track.fill(-1);
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const auto& op = g.ops[i];
      if (op.kind == workloads::OpKind::recv) continue;
      const auto [start, end] = times[r][i];
      if (end <= start) continue;
      const int s = static_cast<int>(op.stream);
      if (track[s] < 0) track[s] = timeline.track(process, std::string(workloads::name(op.stream)));
      const std::string category(workloads::activity(op));
      timeline.span(static_cast<uint32_t>(track[s]), op.label < g.labels.size() ? g.labels[op.label] : std::string(),
                    start, end, category);
    }
  }
}

void add_link_timeline(const workloads::TrainingTrace& trace, const std::vector<workloads::LinkUse>& uses,
                       const topology::Cluster& cluster, Timeline& timeline) {
  const auto& ranks = trace.workload.ranks;
  for (size_t first = 0; first < uses.size();) {
    const topology::LinkId link = uses[first].link;
    size_t last = first;
    while (last < uses.size() && uses[last].link == link) ++last;
    const uint32_t track = timeline.track("links", cluster.link_name(link));
    const double capacity = cluster.link(link).bandwidth.bytes_per_s();
    std::vector<std::pair<Time, double>> steps;  // utilisation changes: +u at a start, -u at an end
    for (size_t i = first; i < last; ++i) {
      const workloads::LinkUse& u = uses[i];
      if (u.end <= u.start || u.rank >= ranks.size() || u.op >= ranks[u.rank].ops.size()) continue;
      const auto& g = ranks[u.rank];
      const auto& op = g.ops[u.op];
      timeline.span(track, op.label < g.labels.size() ? g.labels[op.label] : std::string(), u.start, u.end,
                    std::string(workloads::activity(op)));
      const double share = capacity > 0 ? u.bytes / (capacity * (u.end - u.start).seconds()) : 0;
      steps.emplace_back(u.start, share);
      steps.emplace_back(u.end, -share);
    }
    std::stable_sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    double level = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      level += steps[i].second;
      if (i + 1 < steps.size() && steps[i + 1].first == steps[i].first) continue;  // one sample per instant
      timeline.counter(track, "utilisation", steps[i].first, level > 1e-12 ? level : 0.0);
    }
    first = last;
  }
}

void add_port_timeline(const std::vector<network::PortTimeline>& ports, const topology::Cluster& cluster,
                       Timeline& timeline) {
  for (const network::PortTimeline& port : ports) {
    const uint32_t track = timeline.track("ports", cluster.link_name(port.port));
    for (const network::QueueSample& s : port.depth) timeline.counter(track, "queue_bytes", s.at, s.bytes.as_double());
    for (const network::PauseSpan& p : port.paused) timeline.span(track, "paused", p.from, p.to, "pfc");
  }
}

}  // namespace dtsim::report
