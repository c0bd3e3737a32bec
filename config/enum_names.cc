#include "config/enum_names.h"

namespace dtsim::config {

using collectives::Algorithm;
using collectives::CollectiveKind;
using collectives::Protocol;
using topology::Dtype;

EnumNames<topology::ScaleUpKind> scale_up_kind_names() {
  using K = topology::ScaleUpKind;
  return {{"nvswitch", K::nvswitch}, {"nvlink-bridge", K::nvlink_bridge}, {"pcie", K::pcie},
          {"none", K::none}};
}

EnumNames<topology::NicKind> nic_kind_names() {
  using K = topology::NicKind;
  return {{"infiniband", K::infiniband}, {"roce", K::roce}, {"efa", K::efa}, {"tcp", K::tcp}, {"tcpx", K::tcpx},
          {"ib", K::infiniband}};
}

EnumNames<topology::FabricKind> fabric_kind_names() {
  using K = topology::FabricKind;
  return {{"single-switch", K::single_switch}, {"fat-tree", K::fat_tree},
          {"rail-optimized", K::rail_optimized}, {"dragonfly", K::dragonfly}, {"torus", K::torus}};
}

EnumNames<topology::Routing> routing_names() {
  using K = topology::Routing;
  return {{"ecmp", K::ecmp}, {"adaptive", K::adaptive}, {"auto", K::automatic}};
}

EnumNames<Dtype> precision_names() {
  return {{"fp32", Dtype::fp32},     {"tf32", Dtype::tf32},    {"bf16", Dtype::bf16},
          {"fp16", Dtype::fp16},     {"fp8", Dtype::fp8},      {"fp4", Dtype::fp4},
          {"float32", Dtype::fp32},  {"bfloat16", Dtype::bf16}, {"float16", Dtype::fp16},
          {"float8", Dtype::fp8}};
}

EnumNames<workloads::Recompute> recompute_names() {
  using R = workloads::Recompute;
  return {{"none", R::none}, {"selective", R::selective}, {"full", R::full}, {"auto", R::fit}, {"op", R::every_other_matmul},
          {"false", R::none}, {"true", R::full}};
}

EnumNames<workloads::Attention> attention_names() {
  using A = workloads::Attention;
  return {{"flash3", A::flash3}, {"flash2", A::flash2}, {"flash1", A::flash1}, {"unfused", A::unfused},
          {"cudnn", A::flash3},  {"sdpa", A::flash2},   {"triton", A::flash1}};
}

EnumNames<workloads::MoeDispatch> moe_dispatch_names() {
  using D = workloads::MoeDispatch;
  return {{"alltoall", D::alltoall}, {"deduplicated", D::deduplicated}, {"deepep", D::deduplicated}};
}

EnumNames<Dtype> sweep_dtype_names() {
  return {{"float32", Dtype::fp32}, {"tf32", Dtype::tf32},   {"bfloat16", Dtype::bf16},
          {"float16", Dtype::fp16}, {"float8", Dtype::fp8},  {"float4", Dtype::fp4},
          {"fp32", Dtype::fp32},    {"float", Dtype::fp32},  {"bf16", Dtype::bf16},
          {"fp16", Dtype::fp16},    {"half", Dtype::fp16},   {"fp8", Dtype::fp8},
          {"fp4", Dtype::fp4}};
}

EnumNames<CollectiveKind> collective_kind_names() {
  return {{"all_reduce", CollectiveKind::all_reduce},
          {"all_gather", CollectiveKind::all_gather},
          {"reduce_scatter", CollectiveKind::reduce_scatter},
          {"broadcast", CollectiveKind::broadcast},
          {"reduce", CollectiveKind::reduce},
          {"all_to_all", CollectiveKind::all_to_all},
          {"send_recv", CollectiveKind::send_recv},
          {"gather", CollectiveKind::gather},
          {"scatter", CollectiveKind::scatter},
          {"hypercube", CollectiveKind::hypercube},
          {"allreduce", CollectiveKind::all_reduce},
          {"allgather", CollectiveKind::all_gather},
          {"reducescatter", CollectiveKind::reduce_scatter},
          {"alltoall", CollectiveKind::all_to_all},
          {"sendrecv", CollectiveKind::send_recv}};
}

EnumNames<Algorithm> algorithm_names() {
  return {{"ring", Algorithm::ring},
          {"tree", Algorithm::tree},
          {"nvls", Algorithm::nvls},
          {"nvls_tree", Algorithm::nvls_tree},
          {"collnet_direct", Algorithm::collnet_direct},
          {"collnet_chain", Algorithm::collnet_chain},
          {"pat", Algorithm::pat},
          {"halving_doubling", Algorithm::halving_doubling},
          {"hierarchical", Algorithm::hierarchical},
          // NCCL_ALGO's spellings (case does not matter).
          {"nvlstree", Algorithm::nvls_tree},
          {"collnetdirect", Algorithm::collnet_direct},
          {"collnet", Algorithm::collnet_direct},  // before NCCL 2.12
          {"collnetchain", Algorithm::collnet_chain}};
}

EnumNames<Protocol> protocol_names() {
  return {{"ll", Protocol::ll}, {"ll128", Protocol::ll128}, {"simple", Protocol::simple}};
}

EnumNames<workloads::WorkloadKind> workload_kind_names() {
  using K = workloads::WorkloadKind;
  return {{"collective-sweep", K::collective_sweep}, {"training", K::training}, {"trace", K::trace}, {"dlrm", K::dlrm}};
}

EnumNames<NetworkModelKind> network_model_names() {
  using K = NetworkModelKind;
  return {{"analytical", K::analytical}, {"flow", K::flow}, {"packet", K::packet}};
}

EnumNames<Execution> execution_names() {
  return {{"online", Execution::online}, {"per_collective", Execution::per_collective}};
}

EnumNames<network::FlowControl> flow_control_names() {
  return {{"credits", network::FlowControl::credits},
          {"pfc", network::FlowControl::pfc},
          {"lossy", network::FlowControl::lossy}};
}

EnumNames<network::SwitchBuffer> switch_buffer_names() {
  return {{"dedicated", network::SwitchBuffer::dedicated}, {"shared", network::SwitchBuffer::shared}};
}

EnumNames<Background> background_names() {
  return {{"none", Background::none}, {"replicas", Background::replicas}};
}

EnumNames<workloads::PlacementPolicy> placement_names() {
  return {{"packed", workloads::PlacementPolicy::packed}, {"spread", workloads::PlacementPolicy::spread}};
}

EnumNames<CollectiveKind> traffic_collective_names() {
  return {{"all_to_all", CollectiveKind::all_to_all},
          {"all_reduce", CollectiveKind::all_reduce},
          {"all_gather", CollectiveKind::all_gather},
          {"reduce_scatter", CollectiveKind::reduce_scatter},
          {"alltoall", CollectiveKind::all_to_all},
          {"allreduce", CollectiveKind::all_reduce},
          {"allgather", CollectiveKind::all_gather},
          {"reducescatter", CollectiveKind::reduce_scatter}};
}

}  // namespace dtsim::config
