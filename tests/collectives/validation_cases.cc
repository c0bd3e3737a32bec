#include "tests/collectives/validation_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "config/loader.h"
#include "workloads/collective_sweep.h"

namespace dtsim::collectives::validation {

const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      {"azure_nd_h100_v5_8gpu_allreduce.yaml", "azure_nd_h100_v5_8gpu_allreduce.csv", "all_reduce"},
      {"azure_nd_a100_v4_8gpu_allreduce.yaml", "azure_nd_a100_v4_8gpu_allreduce.csv", "all_reduce"},
      {"a40_2gpu_nvlink_bridge_allreduce.yaml", "a40_and_dgxa100_small_configs_allreduce.csv",
       "all_reduce:A40_2gpu_NVLinkBridge"},
      {"a40_4gpu_sys_p2p_disabled_allreduce.yaml", "a40_and_dgxa100_small_configs_allreduce.csv",
       "all_reduce:A40_4gpu_SYS_P2Pdisabled"},
      {"a40_2gpu_node_p2p_disabled_allreduce.yaml", "a40_and_dgxa100_small_configs_allreduce.csv",
       "all_reduce:A40_2gpu_NODE_P2Pdisabled"},
      {"dgxa100_4gpu_nvswitch_allreduce.yaml", "a40_and_dgxa100_small_configs_allreduce.csv",
       "all_reduce:DGXA100_4gpu_NVSwitch"},
      {"dgxa100_4gpu_p2p_disabled_allreduce.yaml", "a40_and_dgxa100_small_configs_allreduce.csv",
       "all_reduce:DGXA100_4gpu_P2Pdisabled"},
      {"a100_8gpu_sendrecv.yaml", "a100_8gpu_sendrecv.csv", "sendrecv"},
      {"aws_p4de_2node_efa_allreduce.yaml", "aws_p4de_2node_efa_allreduce.csv", "all_reduce"},
      {"oci_a100_2node_roce_allreduce.yaml", "oci_a100_2node_roce_allreduce.csv", "all_reduce"},
      {"gcp_a3mega_2node_tcpxo_allgather.yaml", "gcp_a3mega_2node_tcpxo_allgather.csv",
       "all_gather"},
      {"coreweave_gb200_nvl72_allreduce.yaml", "coreweave_gb200_nvl72_1rack_allreduce.csv",
       "all_reduce"},
      {"l40s_2node_tcp_socket_allreduce.yaml", "l40s_2node_tcp_socket_allreduce_1gpn.csv",
       "all_reduce"},
  };
  return kCases;
}

std::string measured_dir(const std::string& source_dir) {
  const auto dir = std::filesystem::path(source_dir) / "validation" / "measured";
  if (!std::filesystem::is_directory(dir)) {
    throw std::runtime_error("measured data not found at " + dir.string());
  }
  return dir.lexically_normal().string();
}

std::vector<MeasuredRow> read_measured(const std::string& path, const std::string& label) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::map<double, std::pair<double, int>> by_size;
  std::string line;
  bool header = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      header = true;  // collective,size_bytes,time_us,algbw_GBps,busbw_GBps,placement
      continue;
    }
    std::stringstream ss(line);
    std::string coll, size, time;
    std::getline(ss, coll, ',');
    std::getline(ss, size, ',');
    std::getline(ss, time, ',');
    if (coll != label) continue;
    auto& acc = by_size[std::stod(size)];
    acc.first += std::stod(time);
    acc.second += 1;
  }
  std::vector<MeasuredRow> rows;
  for (const auto& [bytes, acc] : by_size) rows.push_back({bytes, acc.first / acc.second});
  if (rows.empty()) throw std::runtime_error("no rows labelled " + label + " in " + path);
  return rows;
}

LoadedScenario load_case_scenario(const std::string& path) {
  const config::Scenario sc = config::load_scenario(path);
  if (sc.workload.kind != workloads::WorkloadKind::collective_sweep) {
    throw std::runtime_error(path + ": a validation scenario must be a collective-sweep");
  }
  return {sc.cluster, sc.collectives, sc.workload.sweep.collective,
          sc.workload.sweep.gpus_per_thread};
}

std::vector<Dataset> load_datasets(const std::string& source_dir) {
  std::vector<Dataset> out;
  const std::string measured = measured_dir(source_dir);
  for (const auto& c : cases()) {
    out.push_back({c, load_case_scenario(source_dir + "/scenarios/validation/" + c.scenario),
                   read_measured(measured + "/" + c.measured, c.label)});
  }
  return out;
}

CaseError evaluate(const Dataset& d, const ModelParameters& params,
                   std::vector<std::string>* detail) {
  const auto& sc = d.scenario;
  const auto& rows = d.rows;
  const AnalyticalCollectiveModel model(sc.cluster, sc.options, params);
  const Communicator world = model.world();
  const Time floor = workloads::host_launch_floor(sc.gpus_per_thread, params, sc.cluster.gpu);
  CaseError e;
  double sum_all = 0;
  double sum_large = 0;
  std::string last;
  for (const auto& r : rows) {
    auto est = model.estimate(sc.collective, Bytes(static_cast<int64_t>(r.bytes)), world);
    est.time = std::max(est.time, floor);
    const double err = std::abs(est.time.us() - r.time_us) / r.time_us;
    sum_all += err;
    ++e.sizes;
    if (r.bytes >= 64.0 * 1024 * 1024) {
      sum_large += err;
      ++e.large_sizes;
    }
    const std::string choice =
        std::string(name(est.algorithm)) + "/" + std::string(name(est.protocol));
    if (choice != last) e.algorithms += (e.algorithms.empty() ? "" : " ") + choice;
    last = choice;
    if (detail != nullptr) {
      char line[160];
      std::snprintf(
          line, sizeof line, "%12.0f B  measured %11.2f us  predicted %11.2f us  %+6.1f%%  %s",
          r.bytes, r.time_us, est.time.us(), (est.time.us() / r.time_us - 1) * 100, choice.c_str());
      detail->push_back(line);
    }
  }
  e.mape_all = sum_all / e.sizes;
  e.mape_large = e.large_sizes > 0 ? sum_large / e.large_sizes : 0;
  return e;
}

}  // namespace dtsim::collectives::validation
