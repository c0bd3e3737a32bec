// Scenario: one fully resolved, typed scenario file: defaults, then catalog presets, then the
// user's keys, then --set overrides. Every layer below reads its own part of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/collective.h"
#include "network/flow/flow_model.h"
#include "network/packet/dcqcn.h"
#include "network/packet/dctcp.h"
#include "network/packet/pfc.h"
#include "sim/units.h"
#include "topology/cluster_spec.h"
#include "workloads/jobs.h"
#include "workloads/workload_spec.h"

namespace dtsim::config {

enum class NetworkModelKind { analytical, flow, packet };

// SCENARIO.md's packet settings. The packet model does not model ECN marking or DCQCN yet: it
// runs lossless without congestion control and says so on stderr (docs/packet-model.md).
struct PacketSpec {
  Bytes mtu{4096};
  Bytes buffer_per_port = Bytes::mib(32);
  bool pfc = true;
  // How the packet model keeps a link lossless: its receive buffer's credits, or PFC's pause
  // frames (network/packet/pfc.h).
  network::FlowControl flow_control = network::FlowControl::credits;
  // flow_control: lossy: how long a sender waits after its last packet before going back.
  Time retransmit_timeout = Time::us(100);
  // Network switches' receive buffers: buffer_per_port per link, or one pool of shared_buffer
  // bytes per switch under the dynamic threshold dt_alpha (network/packet/pfc.h, SwitchBuffer).
  network::SwitchBuffer switch_buffer = network::SwitchBuffer::dedicated;
  Bytes shared_buffer = Bytes::mib(32);
  double dt_alpha = 1;
  // Every port's queue sampled at this interval into the trace (0: off), and its pauses kept.
  Time sample_interval = Time::zero();
  bool ecn = true;
  std::string cc = "dcqcn";
  // Whether the scenario wrote ecn or cc itself: defaults that do not apply to its NICs (DCQCN on
  // InfiniBand, whose links are credit-based) are not worth a warning, written ones are.
  bool cc_stated = false;
  // DCQCN's settings (network.packet.dcqcn); `enabled` and `seed` are not read: DCQCN runs on RoCE
  // NICs with ecn and cc: dcqcn, and draws from the scenario's seed.
  network::DcqcnOptions dcqcn;
  // DCTCP's settings (network.packet.dctcp); `enabled` is not read: DCTCP runs on TCP NICs with
  // ecn and cc: dctcp.
  network::DctcpOptions dctcp;
};

// What the GPUs a job leaves free do (`network.background`): nothing, or run copies of the job
// whose collectives run at the same moments as its own, so that their traffic shares the fabric
// (flow and packet models; training and collective-sweep workloads; docs/flow-model.md).
enum class Background { none, replicas };

// How a training, trace or dlrm workload meets a flow or packet network (`network.execution`):
// online, every rank's op graph runs on the engine the network model runs on, so that every
// collective and send in flight at an instant shares the links (workloads/online_network.h);
// per_collective (flows only), each distinct collective is priced alone once (with its sibling
// groups) and the workload runs on those prices, as on the analytical model.
enum class Execution { online, per_collective };

// network.flow: the flow model's event batching (network::FlowModelOptions::completion_window
// and completion_precision).
struct FlowSpec {
  Time completion_window = network::kDefaultCompletionWindow;
  double completion_precision = network::kDefaultCompletionPrecision;
};

struct NetworkSpec {
  NetworkModelKind model = NetworkModelKind::analytical;
  Background background = Background::none;
  Execution execution = Execution::online;
  FlowSpec flow;
  PacketSpec packet;
};

struct OutputSpec {
  std::string dir;                   // default: out/<name>
  std::vector<std::string> formats{"table"};  // table | csv | json | trace | html
};

// One of several jobs on the cluster (`jobs:`): a workload (training, dlrm or trace) or background
// traffic, on the nodes its request resolves to (workloads/jobs.h). All run together, online, on
// the flow or packet model, and each alone on the same nodes.
struct JobSpec {
  std::string name;
  bool is_traffic = false;
  workloads::WorkloadSpec workload;  // its training spec resolved for the job's own GPUs
  workloads::TrafficSpec traffic;
  int iterations = 1;                // run back to back; times are per iteration
  workloads::NodeRequest request;
  std::vector<int> nodes;            // the cluster nodes it runs on, ascending
};

struct Scenario {
  std::string name;                  // default: the file's stem
  std::string source_file;           // the file it was read from
  uint64_t seed = 1;
  topology::ClusterSpec cluster;
  NetworkSpec network;
  collectives::CollectiveOptions collectives;
  std::optional<std::string> calibration;
  workloads::WorkloadSpec workload;
  std::vector<JobSpec> jobs;         // several jobs on one fabric; then `workload` is not read
  OutputSpec output;
  // Input that is valid but likely not what was meant, one line each (simulate and sweep print
  // them on stderr): a preset chosen by --set under keys the file sets, which still win.
  std::vector<std::string> notes;
};

}  // namespace dtsim::config
