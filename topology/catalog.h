// The hardware catalog: GPUs and nodes by the names scenarios use ("h100-sxm", "hgx-h100").
// A node preset is a whole ClusterSpec (GPU, scale-up fabric, NICs) that a scenario's own keys
// then override field by field. Each figure's source is noted beside it in catalog.cc.
//   const topology::ClusterSpec* node = topology::find_node_preset("hgx-h100");
#pragma once

#include <string_view>
#include <vector>

#include "topology/cluster_spec.h"

namespace dtsim::topology {

const GpuSpec* find_gpu_preset(std::string_view name);
const ClusterSpec* find_node_preset(std::string_view name);
std::vector<std::string_view> gpu_preset_names();
std::vector<std::string_view> node_preset_names();

std::string_view name(ScaleUpKind k);
std::string_view name(NicKind k);
std::string_view name(FabricKind k);
std::string_view name(Dtype d);

}  // namespace dtsim::topology
