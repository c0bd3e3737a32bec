// dump_scenario: every key of a resolved scenario, in the schema's order, in units that parse
// back to the same values.
#include <fmt/format.h>

#include <cctype>
#include <filesystem>

#include "config/enum_names.h"
#include "config/loader.h"
#include "topology/catalog.h"

namespace dtsim::config {
namespace {

using topology::Dtype;

// A string as a YAML scalar: plain when it cannot be mistaken for anything else, else quoted.
std::string yaml_string(const std::string& s) {
  static constexpr std::string_view kReserved[] = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"};
  bool plain = !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '/' || s[0] == '_');
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/')) plain = false;
  }
  std::string l;
  for (char c : s) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view r : kReserved) {
    if (l == r) plain = false;
  }
  if (plain) return s;
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string number(double v) { return fmt::format("{}", v); }

// Peak FLOP/s read best in TFLOPS; plain FLOP/s when that would not parse back exactly.
std::string flops(double v) {
  const double t = v / 1e12;
  return t * 1e12 == v ? fmt::format("{}TFLOPS", t) : number(v);
}

// Memory sizes are quoted in decimal GB by vendors; keep that when it is exact.
std::string memory_size(Bytes b) {
  if (b.count() > 0 && b.count() % 1'000'000'000 == 0 && b.count() % (int64_t{1} << 30) != 0) {
    return std::to_string(b.count() / 1'000'000'000) + "GB";
  }
  return to_string(b);
}
// The first spelling that parses back to exactly `bw`: units.h's own (12 significant digits)
// first, then shortest round-trip digits in other units.
std::string bandwidth(Bandwidth bw, bool bits) {
  const double v = bw.bytes_per_s();
  const std::string candidates[] = {
      bits ? to_string_bits(bw) : to_string(bw),
      bits ? to_string(bw) : to_string_bits(bw),
      fmt::format("{}GB/s", v / 1e9),
      fmt::format("{}MB/s", v / 1e6),
      fmt::format("{}TB/s", v / 1e12),
      fmt::format("{}Gbps", v * 8 / 1e9),
      fmt::format("{}Mbps", v * 8 / 1e6),
  };
  for (const auto& c : candidates) {
    try {
      if (parse_bandwidth(c) == bw) return c;
    } catch (const std::exception&) {
      // Not representable in this unit; try the next.
    }
  }
  return candidates[0];
}

std::string boolean(bool b) { return b ? "true" : "false"; }

class Writer {
 public:
  void key(int depth, std::string_view k, const std::string& value) {
    out_ += std::string(static_cast<size_t>(depth) * 2, ' ') + std::string(k) + ": " + value + "\n";
  }
  void section(int depth, std::string_view k) {
    out_ += std::string(static_cast<size_t>(depth) * 2, ' ') + std::string(k) + ":\n";
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// A forced choice, a list of allowed ones ([ring, tree]), or auto.
template <class E>
std::string choice(const std::optional<E>& forced, const std::vector<E>& allowed,
                   const EnumNames<E>& names) {
  if (forced) return std::string(enum_name(*forced, names));
  if (allowed.empty()) return "auto";
  std::string out = "[";
  for (const E& e : allowed) out += (out.size() > 1 ? ", " : "") + std::string(enum_name(e, names));
  return out + "]";
}

// The keys of a workload block, `d` deep.
void write_workload(Writer& w, int d, const workloads::WorkloadSpec& wl) {
  w.key(d, "kind", std::string(enum_name(wl.kind, workload_kind_names())));
  w.key(d, "collective", std::string(enum_name(wl.sweep.collective, collective_kind_names())));
  w.key(d, "min_bytes", to_string(wl.sweep.min_bytes));
  w.key(d, "max_bytes", to_string(wl.sweep.max_bytes));
  w.key(d, "step_factor", std::to_string(wl.sweep.step_factor));
  w.key(d, "dtype", std::string(enum_name(wl.sweep.dtype, sweep_dtype_names())));
  w.key(d, "ranks", std::to_string(wl.sweep.ranks));
  w.key(d, "gpus_per_thread", std::to_string(wl.sweep.gpus_per_thread));
  const auto& m = wl.training.model;
  w.section(d, "model");
  if (!m.preset.empty()) w.key(d + 1, "preset", yaml_string(m.preset));
  // A model without a preset and without a shape is the default of a non-training workload.
  if (m.layers > 0) w.key(d + 1, "layers", std::to_string(m.layers));
  if (m.hidden > 0) w.key(d + 1, "hidden", std::to_string(m.hidden));
  if (m.heads > 0) w.key(d + 1, "heads", std::to_string(m.heads));
  w.key(d + 1, "kv_heads", std::to_string(m.kv_heads));
  w.key(d + 1, "ffn_hidden", std::to_string(m.ffn_hidden));
  w.key(d + 1, "seq_len", std::to_string(m.seq_len));
  w.key(d + 1, "vocab", std::to_string(m.vocab));
  w.key(d + 1, "experts", std::to_string(m.experts));
  w.key(d + 1, "top_k", std::to_string(m.top_k));
  w.key(d + 1, "moe_ffn_hidden", std::to_string(m.moe_ffn_hidden));
  w.key(d + 1, "shared_experts", std::to_string(m.shared_experts));
  w.key(d + 1, "first_dense_layers", std::to_string(m.first_dense_layers));
  w.key(d + 1, "gated_ffn", boolean(m.gated_ffn));
  w.key(d + 1, "head_dim", std::to_string(m.head_dim));
  w.key(d + 1, "v_head_dim", std::to_string(m.v_head_dim));
  w.key(d + 1, "kv_lora_rank", std::to_string(m.kv_lora_rank));
  w.key(d + 1, "q_lora_rank", std::to_string(m.q_lora_rank));
  w.key(d + 1, "qk_rope_head_dim", std::to_string(m.qk_rope_head_dim));
  w.key(d + 1, "mtp_layers", std::to_string(m.mtp_layers));
  const auto& p = wl.training.parallel;
  w.section(d, "parallel");
  w.key(d + 1, "tp", std::to_string(p.tp));
  w.key(d + 1, "pp", std::to_string(p.pp));
  w.key(d + 1, "dp", std::to_string(p.dp));
  w.key(d + 1, "ep", std::to_string(p.ep));
  w.key(d + 1, "cp", std::to_string(p.cp));
  w.key(d + 1, "vp", std::to_string(p.vp));
  w.key(d + 1, "sequence_parallel", boolean(p.sequence_parallel));
  w.key(d + 1, "zero", std::to_string(p.zero));
  w.key(d + 1, "shard_group", std::to_string(p.shard_group));
  w.key(d + 1, "placement", yaml_string(p.placement));
  w.section(d, "batch");
  if (wl.training.batch.global > 0) w.key(d + 1, "global", std::to_string(wl.training.batch.global));
  w.key(d + 1, "micro", std::to_string(wl.training.batch.micro));
  w.key(d, "precision", std::string(enum_name(wl.training.precision, precision_names())));
  w.key(d, "iterations", std::to_string(wl.training.iterations));
  w.key(d, "activation_recompute", std::string(enum_name(wl.training.activation_recompute, recompute_names())));
  w.key(d, "attention", std::string(enum_name(wl.training.attention, attention_names())));
  w.key(d, "fp8_fused_casts", boolean(wl.training.fp8_fused_casts));
  w.key(d, "fused_cross_entropy", boolean(wl.training.fused_cross_entropy));
  w.key(d, "fused_elementwise", boolean(wl.training.fused_elementwise));
  w.key(d, "fp8_tp_all_gather", boolean(wl.training.fp8_tp_all_gather));
  w.key(d, "cp_torch_ring", boolean(wl.training.cp_torch_ring));
  w.key(d, "bf16_layers_at_start", std::to_string(wl.training.bf16_layers_at_start));
  w.key(d, "bf16_layers_at_end", std::to_string(wl.training.bf16_layers_at_end));
  w.key(d, "cpu_offload_layers", std::to_string(wl.training.cpu_offload_layers));
  w.key(d, "overlap_grad_reduce", boolean(wl.training.overlap_grad_reduce));
  w.key(d, "overlap_param_gather", boolean(wl.training.overlap_param_gather));
  w.key(d, "overlap_tp_comm", boolean(wl.training.overlap_tp_comm));
  w.key(d, "fsdp_reshard_after_forward", boolean(wl.training.fsdp_reshard_after_forward));
  w.key(d, "overlap_ep_comm", boolean(wl.training.overlap_ep_comm));
  w.key(d, "moe_dispatch", std::string(enum_name(wl.training.moe_dispatch, moe_dispatch_names())));
  w.key(d, "moe_imbalance", number(wl.training.moe_imbalance));
  w.key(d, "dp_bucket_mparams", std::to_string(wl.training.dp_bucket_params / 1'000'000));
  w.key(d, "layers_per_block", wl.layers_per_block > 0 ? std::to_string(wl.layers_per_block) : "auto");
  const auto widths = [](const std::vector<int>& v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
    return out + "]";
  };
  w.section(d, "dlrm");
  w.key(d + 1, "tables", std::to_string(wl.dlrm.tables));
  w.key(d + 1, "embedding_dim", std::to_string(wl.dlrm.embedding_dim));
  w.key(d + 1, "pooling", std::to_string(wl.dlrm.pooling));
  w.key(d + 1, "batch_per_gpu", std::to_string(wl.dlrm.batch_per_gpu));
  w.key(d + 1, "dense_features", std::to_string(wl.dlrm.dense_features));
  w.key(d + 1, "bottom_mlp", widths(wl.dlrm.bottom_mlp));
  w.key(d + 1, "top_mlp", widths(wl.dlrm.top_mlp));
  w.key(d + 1, "precision", std::string(enum_name(wl.dlrm.precision, precision_names())));
  w.key(d, "format", yaml_string(wl.trace.format));
  if (!wl.trace.path.empty()) w.key(d, "path", yaml_string(wl.trace.path));
}

}  // namespace

std::string dump_scenario(const Scenario& s) {
  Writer w;
  w.key(0, "name", yaml_string(s.name));
  w.key(0, "seed", std::to_string(s.seed));

  const auto& c = s.cluster;
  w.section(0, "cluster");
  w.key(1, "node", yaml_string(c.node_preset));
  w.key(1, "nodes", std::to_string(c.nodes));
  w.section(1, "gpu");
  w.key(2, "preset", yaml_string(c.gpu.name));
  w.key(2, "compute_capability", std::to_string(c.gpu.compute_capability));
  w.section(2, "peak_flops");
  for (const auto& [dtype, value] : c.gpu.peak_flops) w.key(3, topology::name(dtype), flops(value));
  for (Dtype d : {Dtype::fp32, Dtype::tf32, Dtype::bf16, Dtype::fp16, Dtype::fp8, Dtype::fp4}) {
    if (!c.gpu.peak_flops.contains(d)) w.key(3, topology::name(d), "0");
  }
  w.key(2, "hbm_capacity", memory_size(c.gpu.hbm_capacity));
  w.key(2, "hbm_bandwidth", bandwidth(c.gpu.hbm_bandwidth, false));
  w.key(2, "nvlink_generation", std::to_string(c.gpu.nvlink_generation));
  w.key(2, "nvlink_links", std::to_string(c.gpu.nvlink_links));
  w.key(2, "nvlink_bandwidth", bandwidth(c.gpu.nvlink_bandwidth, false));
  w.key(2, "pcie_generation", std::to_string(c.gpu.pcie_generation));
  w.key(1, "gpus_per_node", std::to_string(c.gpus_per_node));
  w.section(1, "scale_up");
  w.key(2, "kind", std::string(enum_name(c.scale_up.kind, scale_up_kind_names())));
  w.key(2, "bandwidth", bandwidth(c.scale_up.bandwidth, false));
  w.key(2, "latency", to_string(c.scale_up.latency));
  w.key(2, "domain_gpus", std::to_string(c.scale_up.domain_gpus));
  w.section(1, "nic");
  w.key(2, "kind", std::string(enum_name(c.nic.kind, nic_kind_names())));
  w.key(2, "count", std::to_string(c.nic.count));
  w.key(2, "bandwidth", bandwidth(c.nic.bandwidth, true));
  w.key(2, "latency", to_string(c.nic.latency));
  w.key(2, "message_overhead", to_string(c.nic.message_overhead));
  w.section(1, "fabric");
  w.key(2, "kind", std::string(enum_name(c.fabric.kind, fabric_kind_names())));
  w.key(2, "tiers", std::to_string(c.fabric.tiers));
  w.key(2, "radix", std::to_string(c.fabric.radix));
  w.key(2, "oversubscription", number(c.fabric.oversubscription));
  w.section(2, "link");
  w.key(3, "bandwidth", bandwidth(c.fabric.link.bandwidth, true));
  w.key(3, "latency", to_string(c.fabric.link.latency));
  w.key(2, "sharp", boolean(c.fabric.sharp));
  w.key(2, "dragonfly_groups", std::to_string(c.fabric.dragonfly_groups));
  w.key(2, "torus_dims", std::to_string(c.fabric.torus_dims));
  w.key(2, "routing", std::string(enum_name(c.fabric.routing, routing_names())));
  // Absolute, so that the dump loads to the same file from wherever it is saved (a relative path
  // resolves beside the scenario file).
  w.key(1, "topology_file", !c.topology_file ? "null"
                            : c.uses_topology_file()
                                ? yaml_string(std::filesystem::absolute(*c.topology_file).lexically_normal().string())
                                : yaml_string(*c.topology_file));

  const auto& n = s.network;
  w.section(0, "network");
  w.key(1, "model", std::string(enum_name(n.model, network_model_names())));
  w.key(1, "background", std::string(enum_name(n.background, background_names())));
  w.key(1, "execution", std::string(enum_name(n.execution, execution_names())));
  w.section(1, "flow");
  w.key(2, "completion_window", to_string(n.flow.completion_window));
  w.key(2, "completion_precision", number(n.flow.completion_precision));
  w.section(1, "packet");
  w.key(2, "mtu", to_string(n.packet.mtu));
  w.key(2, "buffer_per_port", to_string(n.packet.buffer_per_port));
  w.key(2, "pfc", boolean(n.packet.pfc));
  w.key(2, "flow_control", std::string(enum_name(n.packet.flow_control, flow_control_names())));
  // Only when shared, so that a dedicated run's resolved scenario reads as before these keys.
  if (n.packet.switch_buffer == network::SwitchBuffer::shared) {
    w.key(2, "switch_buffer", std::string(enum_name(n.packet.switch_buffer, switch_buffer_names())));
    w.key(2, "shared_buffer", to_string(n.packet.shared_buffer));
    w.key(2, "dt_alpha", fmt::format("{}", n.packet.dt_alpha));
  }
  w.key(2, "retransmit_timeout", to_string(n.packet.retransmit_timeout));
  w.key(2, "sample_interval", to_string(n.packet.sample_interval));
  w.key(2, "ecn", boolean(n.packet.ecn));
  w.key(2, "cc", yaml_string(n.packet.cc));
  const network::DcqcnOptions& d = n.packet.dcqcn;
  w.section(2, "dcqcn");
  w.key(3, "kmin", to_string(d.kmin));
  w.key(3, "kmax", to_string(d.kmax));
  w.key(3, "pmax", fmt::format("{}", d.pmax));
  w.key(3, "g", fmt::format("{}", d.g));
  w.key(3, "cnp_interval", to_string(d.cnp_interval));
  w.key(3, "alpha_period", to_string(d.alpha_period));
  w.key(3, "increase_period", to_string(d.increase_period));
  w.key(3, "byte_counter", to_string(d.byte_counter));
  w.key(3, "fast_recovery", std::to_string(d.fast_recovery));
  w.key(3, "additive_increase", bandwidth(d.additive_increase, true));
  w.key(3, "hyper_increase", bandwidth(d.hyper_increase, true));
  w.key(3, "min_rate", bandwidth(d.min_rate, true));
  const network::DctcpOptions& t = n.packet.dctcp;
  w.section(2, "dctcp");
  w.key(3, "k", to_string(t.k));
  w.key(3, "g", fmt::format("{}", t.g));
  w.key(3, "initial_window", to_string(t.initial_window));
  w.key(3, "slow_start", boolean(t.slow_start));

  const auto& co = s.collectives;
  w.section(0, "collectives");
  w.key(1, "algorithm", choice(co.algorithm, co.algorithms, algorithm_names()));
  w.key(1, "protocol", choice(co.protocol, co.protocols, protocol_names()));
  w.key(1, "channels", co.channels > 0 ? std::to_string(co.channels) : "auto");
  w.key(1, "collnet", boolean(co.collnet));

  w.key(0, "calibration", s.calibration ? yaml_string(*s.calibration) : "null");

  if (s.jobs.empty()) {
    w.section(0, "workload");
    write_workload(w, 1, s.workload);
  } else {
    w.section(0, "jobs");
    for (const JobSpec& job : s.jobs) {
      w.key(1, "- name", yaml_string(job.name));
      w.key(2, "iterations", std::to_string(job.iterations));
      w.key(2, "nodes", std::to_string(job.request.count));
      if (job.request.policy == workloads::PlacementPolicy::range) {
        w.key(2, "first_node", std::to_string(job.request.first));
      } else {
        w.key(2, "placement", std::string(enum_name(job.request.policy, placement_names())));
      }
      if (job.is_traffic) {
        w.section(2, "traffic");
        w.key(3, "collective", std::string(enum_name(job.traffic.collective, traffic_collective_names())));
        w.key(3, "bytes", to_string(job.traffic.bytes));
        w.key(3, "repeat", std::to_string(job.traffic.repeat));
      } else {
        w.section(2, "workload");
        write_workload(w, 3, job.workload);
      }
    }
  }

  w.section(0, "output");
  w.key(1, "dir", yaml_string(s.output.dir));
  std::string formats = "[";
  for (size_t i = 0; i < s.output.formats.size(); ++i) {
    formats += (i ? ", " : "") + yaml_string(s.output.formats[i]);
  }
  w.key(1, "formats", formats + "]");
  return w.take();
}

}  // namespace dtsim::config
