// Training writer: prints one training evaluation (workloads::TrainingResult) as the table a
// user reads, as one JSON object (with "schema_version"), or as a one-row CSV. `simulate` calls
// it for workload kind `training` and `trace`.
//   report::write_training(result, "json", std::cout);
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "network/network_model.h"
#include "network/packet/port_timeline.h"
#include "report/timeline.h"
#include "topology/cluster.h"
#include "workloads/training.h"

namespace dtsim::report {

inline constexpr int kTrainingSchemaVersion = 1;

// format: "table", "json" or "csv"; throws std::invalid_argument for anything else.
void write_training(const workloads::TrainingResult& result, std::string_view format, std::ostream& out);

// The per-op table of a traced run (workloads::op_totals): "csv" or "json"; throws
// std::invalid_argument for anything else. Columns, per GPU of a pipeline stage:
//   stage,stream,activity,op,count,busy_s,mean_us,share,critical_s
// share is busy_s over the iteration time; critical_s is the op's time on the critical path.
void write_op_table(const workloads::TrainingResult& result, const std::vector<workloads::OpTotal>& ops,
                    std::string_view format, std::ostream& out);

// One row of the per-link table: a link's traffic with its name, kind and utilisations.
struct LinkRow {
  std::string name;            // "node0/nic3->leaf1"
  std::string_view kind;       // nvlink, pcie, network
  double bandwidth_gbytes = 0;
  double bytes = 0;
  double busy_s = 0;
  double utilisation_busy = 0;       // bytes over what the link carries in busy_s
  double utilisation_iteration = 0;  // bytes over what it carries in the iteration
  std::optional<network::PortStats> port;  // online on packets: the model's counters at its port
};
// The rows of `links`, in their order.
std::vector<LinkRow> link_rows(const workloads::TrainingResult& result, const std::vector<workloads::LinkTraffic>& links,
                               const topology::Cluster& cluster);

// The per-link table of a training run on flows (`rows` from link_rows over
// workloads::link_traffic), "csv" or "json"; throws std::invalid_argument for anything else.
// Columns:
//   link,kind,bandwidth_GBps,bytes,busy_s,utilisation_busy,utilisation_iteration
// utilisation_busy: the bytes over what the link could carry while operations using it ran;
// utilisation_iteration: over the whole iteration.
// Online on the packet model six columns follow (network::PortStats at the link's port):
//   peak_egress_bytes,peak_ingress_bytes,pause_frames,paused_us,drops,ecn_marks
// absent on flows; json rows carry the same keys, or none of them.
void write_link_table(const workloads::TrainingResult& result, const std::vector<LinkRow>& rows,
                      std::string_view format, std::ostream& out);

// Appends one track per simulated GPU and stream ("gpu3/stage1", "tp") with a span per op,
// categorised compute / tp / cp / ep / dp / pp, for the Chrome/Perfetto and HTML writers.
// With `ranks_per_stage` > 0, only the first that many ranks of each pipeline stage get tracks: an
// online run of a generated job lists every GPU, and drawn whole its trace runs to hundreds of MB.
void add_training_timeline(const workloads::TrainingTrace& trace, Timeline& timeline, int ranks_per_stage = 0);

// Appends a track per link of `uses` (workloads::link_uses) under the process "links", named as
// the link ("node0/nic3->leaf1"), with a span per operation that used it and a "utilisation"
// counter: the sum, over the operations running at the time, of each one's bytes on the link
// over what the link carries in its duration. Each operation is priced as if alone, so where the
// executor runs two at once over one link the sum can pass 1: contention the price leaves out.
void add_link_timeline(const workloads::TrainingTrace& trace, const std::vector<workloads::LinkUse>& uses,
                       const topology::Cluster& cluster, Timeline& timeline);

// Appends a track per sampled port (network::PortTimeline) under the process "ports", named as
// its link ("leaf0->node1/nic2"), with a "queue_bytes" counter at each sample and a "paused" span
// (category "pfc") per pause.
void add_port_timeline(const std::vector<network::PortTimeline>& ports, const topology::Cluster& cluster,
                       Timeline& timeline);

}  // namespace dtsim::report
