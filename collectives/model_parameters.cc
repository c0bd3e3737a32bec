#include "collectives/model_parameters.h"

#include <yaml-cpp/yaml.h>

#include <array>
#include <cmath>
#include <fstream>
#include <ostream>
#include <sstream>

#include "sim/error.h"
#include "sim/units.h"
#include "sim/yaml_text.h"

namespace dtsim::collectives {
namespace {

using P = ModelParameters;
using U = ParamUnit;

// Bounds keep a fit physical: an efficiency stays a fraction, a latency stays positive and below
// what any real stack shows, a slice stays within NCCL's buffer sizes.
constexpr P::Descriptor kDescriptors[] = {
    {"nvlink_efficiency", U::fraction, &P::nvlink_efficiency, 0.5, 1.0,
     "fraction of NVLink line rate a ring reaches"},
    {"pcie_efficiency", U::fraction, &P::pcie_efficiency, 0.3, 1.0,
     "fraction of PCIe line rate a peer copy reaches"},
    {"p2p_efficiency", U::fraction, &P::p2p_efficiency, 0.3, 1.0,
     "send/recv copy rate relative to the ring's link rate"},
    {"all_to_all_efficiency", U::fraction, &P::all_to_all_efficiency, 0.3, 1.25,
     "all_to_all copy rate inside a node relative to the ring's link rate"},
    {"nvls_efficiency_sm90", U::fraction, &P::nvls_efficiency_sm90, 0.3, 1.0,
     "NVLS all_reduce algbw per unit of NVLink bandwidth x n/(n+1), Hopper"},
    {"nvls_efficiency_sm100", U::fraction, &P::nvls_efficiency_sm100, 0.3, 1.0,
     "NVLS all_reduce algbw per unit of NVLink bandwidth x n/(n+1), Blackwell"},
    {"nvls_rack_efficiency", U::fraction, &P::nvls_rack_efficiency, 0.5, 1.0,
     "NVLS in a rack-scale NVLink domain (> 8 GPUs, e.g. NVL72): share of a node's NVLS rate"},
    {"nvls_tree_efficiency", U::fraction, &P::nvls_tree_efficiency, 0.5, 1.0,
     "NVLS-tree across nodes: share of the slower of its NVLS and network rates it reaches"},
    {"net_efficiency_infiniband", U::fraction, &P::net_efficiency_infiniband, 0.5, 1.0,
     "fraction of NIC line rate, InfiniBand"},
    {"net_efficiency_roce", U::fraction, &P::net_efficiency_roce, 0.5, 1.0,
     "fraction of NIC line rate, RoCE"},
    {"net_efficiency_efa", U::fraction, &P::net_efficiency_efa, 0.5, 1.0,
     "fraction of NIC line rate, EFA"},
    {"net_efficiency_tcp", U::fraction, &P::net_efficiency_tcp, 0.3, 1.0,
     "fraction of NIC line rate, GPUDirect TCP"},
    {"host_inflight_bytes", U::bytes, &P::host_inflight_bytes, 1024, 1048576,
     "bytes in flight per channel on host-memory paths"},
    {"socket_bandwidth", U::gbytes_per_s, &P::socket_bandwidth, 1, 50,
     "host-staged TCP socket rate per GPU"},
    {"ll_bandwidth_fraction", U::fraction, &P::ll_bandwidth_fraction, 0.2, 0.5,
     "LL payload fraction (8 of 16 bytes)"},
    {"ll128_bandwidth_fraction", U::fraction, &P::ll128_bandwidth_fraction, 0.5, 0.9375,
     "LL128 payload fraction (120 of 128 bytes)"},
    {"ll_channel_bandwidth", U::gbytes_per_s, &P::ll_channel_bandwidth, 1, 40,
     "rate of one LL channel inside a node, before Hopper"},
    {"ll_channel_bandwidth_sm90", U::gbytes_per_s, &P::ll_channel_bandwidth_sm90, 1, 40,
     "rate of one LL channel inside a node, Hopper and newer"},
    {"ll_net_channel_bandwidth", U::gbytes_per_s, &P::ll_net_channel_bandwidth, 1, 40,
     "rate of one LL channel whose path crosses the network"},
    {"base_latency_ll", U::microseconds, &P::base_latency_ll, 0.5, 50, "launch and setup, LL"},
    {"base_latency_ll128", U::microseconds, &P::base_latency_ll128, 0.5, 50,
     "launch and setup, LL128"},
    {"base_latency_simple", U::microseconds, &P::base_latency_simple, 0.5, 50,
     "launch and setup, Simple"},
    {"step_latency_nvlink_ll", U::microseconds, &P::step_latency_nvlink_ll, 0.05, 20,
     "per step over NVLink, LL"},
    {"step_latency_nvlink_ll128", U::microseconds, &P::step_latency_nvlink_ll128, 0.05, 20,
     "per step over NVLink, LL128"},
    {"step_latency_nvlink_simple", U::microseconds, &P::step_latency_nvlink_simple, 0.05, 20,
     "per step over NVLink, Simple"},
    {"step_latency_pcie_ll", U::microseconds, &P::step_latency_pcie_ll, 0.05, 20,
     "per step over PCIe, LL"},
    {"step_latency_pcie_ll128", U::microseconds, &P::step_latency_pcie_ll128, 0.05, 20,
     "per step over PCIe, LL128"},
    {"step_latency_pcie_simple", U::microseconds, &P::step_latency_pcie_simple, 0.05, 20,
     "per step over PCIe, Simple"},
    {"step_latency_net_ll", U::microseconds, &P::step_latency_net_ll, 0.1, 50,
     "per inter-node step, LL"},
    {"step_latency_net_ll128", U::microseconds, &P::step_latency_net_ll128, 0.1, 50,
     "per inter-node step, LL128"},
    {"step_latency_net_simple", U::microseconds, &P::step_latency_net_simple, 0.1, 80,
     "per inter-node step, Simple"},
    {"nic_latency_infiniband", U::microseconds, &P::nic_latency_infiniband, 0, 50,
     "stack latency per inter-node step, IB verbs"},
    {"nic_latency_roce", U::microseconds, &P::nic_latency_roce, 0, 50,
     "stack latency per inter-node step, RoCE"},
    {"nic_latency_efa", U::microseconds, &P::nic_latency_efa, 0, 150,
     "stack latency per inter-node step, EFA (libfabric SRD)"},
    {"nic_latency_efa_v2", U::microseconds, &P::nic_latency_efa_v2, 0, 150,
     "stack latency per inter-node step, EFA v2 and later (Hopper-era instances and newer)"},
    {"nic_latency_tcp", U::microseconds, &P::nic_latency_tcp, 0, 150,
     "stack latency per inter-node step, TCP"},
    {"nic_latency_tcpx", U::microseconds, &P::nic_latency_tcpx, 0, 2000,
     "stack latency per inter-node step, GPUDirect-TCPX"},
    {"tcpx_send_completion", U::microseconds, &P::tcpx_send_completion, 0, 2000,
     "FIFO slot held past its step until a zero-copy send completes, GPUDirect-TCPX"},
    {"nvls_latency", U::microseconds, &P::nvls_latency, 1, 80, "NVLS multicast round"},
    {"collnet_latency", U::microseconds, &P::collnet_latency, 1, 80,
     "SHARP aggregation round trip"},
    {"pat_rank_latency", U::microseconds, &P::pat_rank_latency, 0.1, 10, "PAT per-rank cost"},
    {"p2p_latency", U::microseconds, &P::p2p_latency, 0.5, 50, "send/recv launch and handshake"},
    {"host_launch_per_gpu", U::microseconds, &P::host_launch_per_gpu, 0.5, 50,
     "host launch per GPU when one thread drives several (nccl-tests -g)"},
    {"host_launch_per_gpu_sm90", U::microseconds, &P::host_launch_per_gpu_sm90, 0.5, 50,
     "host launch per GPU when one thread drives several, Hopper and newer"},
    {"slice_bytes_simple", U::bytes, &P::slice_bytes_simple, 16384, 4194304,
     "pipeline slice, Simple"},
    {"slice_bytes_ll128", U::bytes, &P::slice_bytes_ll128, 4096, 4194304, "pipeline slice, LL128"},
    {"slice_bytes_ll", U::bytes, &P::slice_bytes_ll, 1024, 1048576, "pipeline slice, LL"},
    {"nvls_pipeline_bytes", U::bytes, &P::nvls_pipeline_bytes, 65536, 67108864,
     "NVLS pipeline depth in bytes"},
    {"p2p_pipeline_bytes", U::bytes, &P::p2p_pipeline_bytes, 65536, 67108864,
     "send/recv fill inside a node"},
    {"p2p_net_chunk_bytes", U::bytes, &P::p2p_net_chunk_bytes, 16384, 4194304,
     "send/recv fill across nodes: one FIFO slot"},
    {"pipeline_max_hops", U::count, &P::pipeline_max_hops, 1, 1024,
     "most hops a pipeline fill is charged for"},
    {"channel_bandwidth", U::gbytes_per_s, &P::channel_bandwidth, 5, 100,
     "rate one channel can move"},
    {"tree_channel_bandwidth", U::gbytes_per_s, &P::tree_channel_bandwidth, 2, 100,
     "algbw one tree channel reaches"},
    {"tree_net_channel_bandwidth", U::gbytes_per_s, &P::tree_net_channel_bandwidth, 2, 100,
     "algbw one tree channel reaches when the tree spans nodes"},
};

const P::Descriptor* find(std::string_view name) {
  for (const auto& d : kDescriptors) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::string known_names() {
  std::string out;
  for (const auto& d : kDescriptors) out.append(out.empty() ? "" : ", ").append(d.name);
  return out;
}

const P::Descriptor& require(std::string_view name) {
  const auto* d = find(name);
  if (d == nullptr) {
    throw InputError({}, std::string(name),
                     "unknown model parameter; expected one of: " + known_names());
  }
  return *d;
}

// Formats a value with its unit so that parse_value() reads it back exactly.
std::string format_value(const P::Descriptor& d, double v) {
  std::ostringstream os;
  os.precision(10);
  switch (d.unit) {
    case U::fraction:
      os << v;
      break;
    case U::microseconds:
      os << v << "us";
      break;
    case U::bytes:
      os << static_cast<long long>(std::llround(v)) << "B";
      break;
    case U::gbytes_per_s:
      os << v << "GB/s";
      break;
    case U::count:
      os << v;
      break;
  }
  return os.str();
}

double parse_value(const P::Descriptor& d, const std::string& text) {
  switch (d.unit) {
    case U::count:
    case U::fraction: {
      size_t used = 0;
      const double v = std::stod(text, &used);
      if (used != text.size()) throw std::invalid_argument("expected a plain number (a fraction)");
      return v;
    }
    case U::microseconds:
      return parse_time(text).us();
    case U::bytes:
      return parse_bytes(text).as_double();
    case U::gbytes_per_s:
      return parse_bandwidth(text).gbytes_per_s();
  }
  return 0;
}

}  // namespace

std::span<const P::Descriptor> ModelParameters::descriptors() {
  return kDescriptors;
}

std::vector<double> ModelParameters::to_vector() const {
  std::vector<double> out;
  out.reserve(std::size(kDescriptors));
  for (const auto& d : kDescriptors) out.push_back(this->*d.field);
  return out;
}

void ModelParameters::from_vector(std::span<const double> values) {
  if (values.size() != std::size(kDescriptors)) {
    throw InputError("model parameters: expected " + std::to_string(std::size(kDescriptors)) +
                     " values, got " + std::to_string(values.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) this->*kDescriptors[i].field = values[i];
}

double ModelParameters::get(std::string_view name) const {
  return this->*require(name).field;
}

void ModelParameters::set(std::string_view name, double value) {
  this->*require(name).field = value;
}

double ModelParameters::net_efficiency(topology::NicKind k) const {
  switch (k) {
    case topology::NicKind::infiniband:
      return net_efficiency_infiniband;
    case topology::NicKind::roce:
      return net_efficiency_roce;
    case topology::NicKind::efa:
      return net_efficiency_efa;
    case topology::NicKind::tcp:
    case topology::NicKind::tcpx:
      return net_efficiency_tcp;
  }
  return net_efficiency_infiniband;
}

double ModelParameters::nic_latency_us(topology::NicKind k, int compute_capability) const {
  switch (k) {
    case topology::NicKind::infiniband:
      return nic_latency_infiniband;
    case topology::NicKind::roce:
      return nic_latency_roce;
    case topology::NicKind::efa:
      return compute_capability >= 90 ? nic_latency_efa_v2 : nic_latency_efa;
    case topology::NicKind::tcp:
      return nic_latency_tcp;
    case topology::NicKind::tcpx:
      return nic_latency_tcpx;
  }
  return nic_latency_infiniband;
}

double ModelParameters::send_completion_us(topology::NicKind k) const {
  return k == topology::NicKind::tcpx ? tcpx_send_completion : 0.0;
}

double ModelParameters::nvls_efficiency(int compute_capability) const {
  if (compute_capability >= 100) return nvls_efficiency_sm100;
  if (compute_capability >= 90) return nvls_efficiency_sm90;
  return 0;
}

double ModelParameters::base_latency_us(Protocol p) const {
  switch (p) {
    case Protocol::ll:
      return base_latency_ll;
    case Protocol::ll128:
      return base_latency_ll128;
    case Protocol::simple:
      return base_latency_simple;
  }
  return base_latency_simple;
}

double ModelParameters::slice_bytes(Protocol p) const {
  switch (p) {
    case Protocol::ll:
      return slice_bytes_ll;
    case Protocol::ll128:
      return slice_bytes_ll128;
    case Protocol::simple:
      return slice_bytes_simple;
  }
  return slice_bytes_simple;
}

double ModelParameters::bandwidth_fraction(Protocol p) const {
  switch (p) {
    case Protocol::ll:
      return ll_bandwidth_fraction;
    case Protocol::ll128:
      return ll128_bandwidth_fraction;
    case Protocol::simple:
      return 1.0;
  }
  return 1.0;
}

double step_latency_us(const ModelParameters& p, LinkClass link, Protocol proto) {
  static constexpr double ModelParameters::*kTable[3][3] = {
      {&P::step_latency_nvlink_ll, &P::step_latency_nvlink_ll128, &P::step_latency_nvlink_simple},
      {&P::step_latency_pcie_ll, &P::step_latency_pcie_ll128, &P::step_latency_pcie_simple},
      {&P::step_latency_net_ll, &P::step_latency_net_ll128, &P::step_latency_net_simple},
  };
  return p.*kTable[static_cast<int>(link)][static_cast<int>(proto)];
}

std::string_view unit_name(ParamUnit u) {
  switch (u) {
    case U::fraction:
      return "1";
    case U::microseconds:
      return "us";
    case U::bytes:
      return "B";
    case U::gbytes_per_s:
      return "GB/s";
    case U::count:
      return "count";
  }
  return "?";
}

ModelParameters parse_calibration(std::string_view yaml, const std::string& source_name) {
  check_yaml_text(yaml, source_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw InputError({source_name, e.mark.line + 1, e.mark.column + 1}, "", e.msg);
  }
  ModelParameters p;
  if (!root || root.IsNull()) return p;
  auto where = [&](const YAML::Node& n) {
    return SourceLocation{source_name, n.Mark().line + 1, n.Mark().column + 1};
  };
  if (!root.IsMap()) throw InputError(where(root), "", "expected a map with key `parameters`");
  for (const auto& top : root) {
    if (!top.first.IsScalar()) throw InputError(where(top.first), "", "expected a key name");
    const auto key = top.first.as<std::string>();
    if (key == "parameters") continue;
    if (key == "fitted_on" || key == "comment") continue;  // provenance written by `calibrate`
    throw InputError(where(top.first), key,
                     "unknown key; expected parameters, fitted_on or comment");
  }
  const YAML::Node params = root["parameters"];
  if (!params) return p;
  if (!params.IsMap())
    throw InputError(where(params), "parameters", "expected a map of name: value");
  for (const auto& kv : params) {
    if (!kv.first.IsScalar()) throw InputError(where(kv.first), "parameters", "expected a parameter name");
    const auto name = kv.first.as<std::string>();
    const auto* d = find(name);
    const std::string key = "parameters." + name;
    if (d == nullptr)
      throw InputError(where(kv.first), key,
                       "unknown model parameter; expected one of: " + known_names());
    if (!kv.second.IsScalar())
      throw InputError(where(kv.second), key,
                       "expected a value in " + std::string(unit_name(d->unit)));
    double v = 0;
    try {
      v = parse_value(*d, kv.second.as<std::string>());
    } catch (const std::exception& e) {
      throw InputError(where(kv.second), key,
                       "expected a value in " + std::string(unit_name(d->unit)) + ": " + e.what());
    }
    const double slack = 1e-9 * std::max(1.0, std::abs(d->upper));
    if (!(v >= d->lower - slack && v <= d->upper + slack)) {
      std::ostringstream os;
      os << "value " << kv.second.as<std::string>() << " outside [" << format_value(*d, d->lower)
         << ", " << format_value(*d, d->upper) << "]";
      throw InputError(where(kv.second), key, os.str());
    }
    p.*d->field = v;
  }
  return p;
}

ModelParameters load_calibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError({path, 0, 0}, "calibration", "cannot open the calibration file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_calibration(ss.str(), path);
}

void write_calibration(const ModelParameters& p, std::ostream& out) {
  out << "# dtsim collective model parameters; every value carries its unit.\n";
  out << "parameters:\n";
  for (const auto& d : kDescriptors) {
    out << "  " << d.name << ": \"" << format_value(d, p.*d.field) << "\"    # " << d.meaning
        << "\n";
  }
}

}  // namespace dtsim::collectives
