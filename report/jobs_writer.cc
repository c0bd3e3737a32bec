#include "report/jobs_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "report/csv_field.h"
#include "report/time_unit.h"

namespace dtsim::report {
namespace {

void write_table(const workloads::JobsResult& r, std::ostream& out) {
  // The shortest job's time picks the unit, so that every row keeps its digits.
  double shortest = 0;
  for (const workloads::JobTime& j : r.jobs) {
    if (shortest == 0 || (j.alone_s > 0 && j.alone_s < shortest)) shortest = j.alone_s;
  }
  const TimeUnit u = time_unit(shortest);
  int nodes = 0;
  size_t name_width = 4, node_width = 5;
  for (const workloads::JobTime& j : r.jobs) {
    nodes += static_cast<int>(j.nodes.size());
    name_width = std::max(name_width, j.name.size());
    node_width = std::max(node_width, workloads::node_list(j.nodes).size());
  }
  out << fmt::format(
      "jobs on one fabric  {} jobs on {} of {} nodes, {} model; times per iteration; alone: each on "
      "its nodes with the rest of the cluster idle\n",
      r.jobs.size(), nodes, r.cluster_nodes, r.model);
  out << fmt::format("{:<{}}  {:<8}  {:<{}}  {:>5}  {:>10}  {:>12}  {:>12}  {:>8}\n", "job",
                     name_width, "workload", "nodes", node_width, "GPUs", "iterations",
                     fmt::format("alone ({})", u.name), fmt::format("together ({})", u.name),
                     "slowdown");
  for (const workloads::JobTime& j : r.jobs) {
    out << fmt::format("{:<{}}  {:<8}  {:<{}}  {:>5}  {:>10}  {:>12.4f}  {:>12.4f}  {:>8.4f}\n",
                       j.name, name_width, j.workload, workloads::node_list(j.nodes), node_width,
                       j.gpus, j.iterations, j.alone_s * u.per_second, j.together_s * u.per_second,
                       j.slowdown());
  }
}

}  // namespace

void write_jobs(const workloads::JobsResult& r, std::string_view format, std::ostream& out) {
  if (format == "table") {
    write_table(r, out);
  } else if (format == "json") {
    nlohmann::json jobs = nlohmann::json::array();
    for (const workloads::JobTime& j : r.jobs) {
      jobs.push_back({{"name", j.name},
                      {"workload", j.workload},
                      {"nodes", j.nodes},
                      {"gpus", j.gpus},
                      {"iterations", j.iterations},
                      {"alone_s", j.alone_s},
                      {"together_s", j.together_s},
                      {"slowdown", j.slowdown()}});
    }
    const nlohmann::json doc = {{"schema_version", kJobsSchemaVersion},
                                {"model", r.model},
                                {"cluster_nodes", r.cluster_nodes},
                                {"jobs", jobs}};
    out << doc.dump(2) << '\n';
  } else if (format == "csv") {
    out << "job,workload,nodes,gpus,iterations,alone_s,together_s,slowdown\n";
    for (const workloads::JobTime& j : r.jobs) {
      out << fmt::format("{},{},{},{},{},{:.9f},{:.9f},{:.6f}\n", csv_field(j.name), j.workload,
                         csv_field(workloads::node_list(j.nodes)), j.gpus, j.iterations, j.alone_s,
                         j.together_s, j.slowdown());
    }
  } else {
    throw std::invalid_argument("jobs output format must be table, json or csv, got '" +
                                std::string(format) + "'");
  }
}

}  // namespace dtsim::report
