// libFuzzer target for the whole-graph topology YAML reader (topology/topology_yaml.cc): any bytes
// are read into a cluster or refused with an InputError; a cluster that reads routes its first
// GPU to its last.
//   scripts/fuzz.sh 600 topology_yaml
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/finding.h"
#include "topology/catalog.h"
#include "topology/cluster.h"
#include "topology/topology_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace dtsim;
  static const topology::ClusterSpec spec = *topology::find_node_preset("hgx-h100");
  std::unique_ptr<topology::Cluster> cluster;
  if (!fuzz::reads_or_refuses("parse_topology_yaml", [&] { cluster = topology::parse_topology_yaml(spec, text, "fuzz.yaml"); }))
    return 0;
  if (cluster->gpu_count() < 1) fuzz::finding("a cluster without GPUs was read", "");
  (void)cluster->route(0, cluster->gpu_count() - 1);
  return 0;
}
