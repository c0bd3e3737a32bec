#include "validation/scenario_predictor.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>

#include "collectives/analytical_model.h"
#include "sim/error.h"
#include "workloads/collective_sweep.h"

namespace dtsim::validation {

collectives::Communicator placement_of(const topology::ClusterSpec& cluster, int ranks, int nodes) {
  collectives::Communicator c;
  const int per_node = nodes > 0 && ranks % nodes == 0 ? ranks / nodes : 0;
  if (per_node > 0 && nodes <= cluster.nodes && per_node <= cluster.gpus_per_node) {
    for (int n = 0; n < nodes; ++n)
      for (int g = 0; g < per_node; ++g) c.ranks.push_back(n * cluster.gpus_per_node + g);
    return c;
  }
  c.ranks.resize(static_cast<size_t>(ranks));
  std::iota(c.ranks.begin(), c.ranks.end(), 0);
  return c;
}

ScenarioModel load_scenario_model(const std::string& path,
                                  const std::vector<config::Override>& overrides,
                                  const std::optional<std::string>& calibration) {
  ScenarioModel m{config::load_scenario(path, overrides), {}};
  std::optional<std::string> file = calibration ? calibration : m.scenario.calibration;
  if (file) {
    std::string p = *file;
    if (!calibration && !std::filesystem::exists(p)) {
      auto beside = std::filesystem::path(path).parent_path() / p;
      if (std::filesystem::exists(beside)) p = beside.string();
    }
    m.parameters = collectives::load_calibration(p);
  }
  return m;
}

void require_ranks_fit(const topology::ClusterSpec& cluster, int ranks) {
  if (ranks < 1 || ranks > cluster.total_gpus())
    throw InputError(SourceLocation{}, "ranks",
                     fmt::format("the measurement ran on {} ranks but the scenario's cluster has "
                                 "{} GPUs",
                                 ranks, cluster.total_gpus()));
}

Predictor make_predictor(const config::Scenario& scenario,
                         const collectives::ModelParameters& parameters, int nodes,
                         int gpus_per_thread) {
  auto model = std::make_shared<collectives::AnalyticalCollectiveModel>(
      scenario.cluster, scenario.collectives, parameters);
  const Time floor = workloads::host_launch_floor(
      gpus_per_thread > 0 ? gpus_per_thread : scenario.workload.sweep.gpus_per_thread, parameters,
      scenario.cluster.gpu);
  return [model, nodes, floor, cluster = scenario.cluster](collectives::CollectiveKind kind,
                                                           int64_t bytes, int ranks) {
    require_ranks_fit(cluster, ranks);
    collectives::CollectiveEstimate e =
        model->estimate(kind, Bytes(bytes), placement_of(cluster, ranks, nodes));
    return Prediction{std::max(e.time, floor).us(), std::string(collectives::name(e.algorithm)),
                      std::string(collectives::name(e.protocol)), e.channels};
  };
}

namespace {

std::string squashed(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '_' && c != '-' && c != ' ')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// NCCL_ALGO / NCCL_PROTO for one collective: the value itself, or of "func:list;func:list" the
// collective's part; nullopt when the value names other functions only.
std::optional<std::string> list_for(const std::string& value, collectives::CollectiveKind kind) {
  if (value.find(':') == std::string::npos) return value;
  for (size_t at = 0; at <= value.size();) {
    const size_t end = std::min(value.find(';', at), value.size());
    const std::string part = value.substr(at, end - at);
    if (const size_t colon = part.find(':');
        colon != std::string::npos &&
        squashed(part.substr(0, colon)) == squashed(collectives::name(kind)))
      return part.substr(colon + 1);
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace

std::vector<config::Override> nccl_env_overrides(const MeasurementSet& set,
                                                 const config::Scenario& scenario) {
  std::vector<config::Override> out;
  const auto& co = scenario.collectives;
  auto env = [&](const char* name) -> std::optional<std::string> {
    const auto it = set.nccl_env.find(name);
    return it == set.nccl_env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  if (!co.algorithm && co.algorithms.empty()) {
    if (const auto algo = env("NCCL_ALGO")) {
      if (const auto list = list_for(*algo, set.collective))
        out.push_back({"collectives.algorithm", "\"" + *list + "\""});
    } else if (const auto nvls = env("NCCL_NVLS_ENABLE"); nvls && *nvls == "0") {
      out.push_back({"collectives.algorithm", "\"^nvls,nvls_tree\""});
    }
  }
  if (!co.protocol && co.protocols.empty()) {
    if (const auto proto = env("NCCL_PROTO")) {
      if (const auto list = list_for(*proto, set.collective))
        out.push_back({"collectives.protocol", "\"" + *list + "\""});
    }
  }
  return out;
}

int scenario_ranks(const config::Scenario& scenario) {
  int r = scenario.workload.sweep.ranks;
  return r > 0 ? r : scenario.cluster.total_gpus();
}

int ranks_for(const MeasurementSet& set, const config::Scenario& scenario) {
  int ranks = set.ranks > 0 ? set.ranks : scenario_ranks(scenario);
  if (ranks > scenario.cluster.total_gpus())
    throw InputError(SourceLocation{set.source, 0, 0}, "ranks",
                     fmt::format("the measurement ran on {} ranks but scenario {} has only {} GPUs",
                                 ranks, scenario.source_file, scenario.cluster.total_gpus()));
  return ranks;
}

NcclTestsParseOptions scenario_parse_options(const config::Scenario& scenario) {
  NcclTestsParseOptions o;
  if (scenario.workload.kind == workloads::WorkloadKind::collective_sweep) {
    o.collective = scenario.workload.sweep.collective;
    o.collective_from = "the scenario's workload.collective";
  }
  return o;
}

std::vector<FitParameter> fit_parameters_of(const collectives::ModelParameters& start,
                                            const std::vector<std::string>& names) {
  std::vector<FitParameter> out;
  for (const auto& d : collectives::ModelParameters::descriptors()) {
    bool wanted = names.empty() || std::find(names.begin(), names.end(), d.name) != names.end();
    if (wanted) out.push_back({std::string(d.name), start.*(d.field), d.lower, d.upper});
  }
  for (const std::string& n : names) {
    bool known = false;
    for (const FitParameter& p : out) known |= p.name == n;
    if (!known) start.get(n);  // throws InputError listing the valid names
  }
  return out;
}

collectives::ModelParameters with_values(collectives::ModelParameters base,
                                         const std::vector<FitParameter>& fitted,
                                         std::span<const double> values) {
  for (size_t i = 0; i < fitted.size() && i < values.size(); ++i) base.set(fitted[i].name, values[i]);
  return base;
}

FitDataset make_fit_dataset(const std::string& name, const MeasurementSet& set,
                            const config::Scenario& scenario,
                            const collectives::ModelParameters& base,
                            const std::vector<FitParameter>& fitted) {
  const int ranks = ranks_for(set, scenario);
  struct Acc {
    double time = 0;
    int n = 0;
    bool wrong = false;
  };
  std::map<int64_t, Acc> by_size;
  for (const MeasuredPoint& p : set.points) {
    Acc& a = by_size[p.size_bytes];
    if (p.wrong && *p.wrong != 0) a.wrong = true;
    if (p.time_us <= 0) continue;
    a.time += p.time_us;
    ++a.n;
  }
  FitDataset d;
  d.name = name;
  for (const auto& [size, a] : by_size)
    if (a.n > 0 && !a.wrong) d.points.push_back({set.collective, size, ranks, a.time / a.n});
  d.predict_us = [points = d.points, cluster = scenario.cluster, options = scenario.collectives,
                  base, fitted, nodes = set.nodes,
                  gpus_per_thread = set.gpus_per_thread > 0
                                        ? set.gpus_per_thread
                                        : scenario.workload.sweep.gpus_per_thread](
                     std::span<const double> values) {
    const collectives::ModelParameters params = with_values(base, fitted, values);
    collectives::AnalyticalCollectiveModel model(cluster, options, params);
    const Time floor = workloads::host_launch_floor(gpus_per_thread, params, cluster.gpu);
    std::vector<double> out;
    out.reserve(points.size());
    collectives::Communicator comm =
        placement_of(cluster, points.empty() ? 1 : points.front().ranks, nodes);
    for (const FitPoint& p : points)
      out.push_back(std::max(model.estimate(p.collective, Bytes(p.bytes), comm).time, floor).us());
    return out;
  };
  return d;
}

}  // namespace dtsim::validation
