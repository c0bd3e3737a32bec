// The spellings scenario files use for every enum, canonical first (what dump_scenario writes),
// then accepted aliases. SCENARIO.md fixes the canonical ones: nvlink-bridge, fat-tree,
// all_reduce, ll128, collective-sweep, ...
#pragma once

#include "collectives/collective.h"
#include "config/map_reader.h"
#include "config/scenario.h"
#include "topology/cluster_spec.h"
#include "workloads/workload_spec.h"

namespace dtsim::config {

EnumNames<topology::ScaleUpKind> scale_up_kind_names();
EnumNames<topology::NicKind> nic_kind_names();
EnumNames<topology::FabricKind> fabric_kind_names();
// ecmp | adaptive | auto (cluster.fabric.routing).
EnumNames<topology::Routing> routing_names();
// Training precision: fp32 | tf32 | bf16 | fp16 | fp8 | fp4 (also float32, bfloat16, ...).
EnumNames<topology::Dtype> precision_names();
// none | selective | full; YAML's false and true read as none and full.
EnumNames<workloads::Recompute> recompute_names();
// flash3 | flash2 | flash1 | unfused (also cudnn = flash3, sdpa = flash2, triton = flash1).
EnumNames<workloads::Attention> attention_names();
EnumNames<workloads::MoeDispatch> moe_dispatch_names();
// A collective sweep's element type, in nccl-tests' words first: float32, bfloat16, ...
EnumNames<topology::Dtype> sweep_dtype_names();
EnumNames<collectives::CollectiveKind> collective_kind_names();
EnumNames<collectives::Algorithm> algorithm_names();
EnumNames<collectives::Protocol> protocol_names();
EnumNames<workloads::WorkloadKind> workload_kind_names();
EnumNames<NetworkModelKind> network_model_names();
EnumNames<Background> background_names();
EnumNames<Execution> execution_names();
// network.packet.flow_control: credits | pfc | lossy.
EnumNames<network::FlowControl> flow_control_names();
// network.packet.switch_buffer: dedicated | shared.
EnumNames<network::SwitchBuffer> switch_buffer_names();
// jobs[].placement (packed, spread) and jobs[].traffic.collective (the collectives every GPU of a
// traffic job runs among them all).
EnumNames<workloads::PlacementPolicy> placement_names();
EnumNames<collectives::CollectiveKind> traffic_collective_names();

}  // namespace dtsim::config
