// Jobs on one fabric: several workloads, each on its own nodes of one cluster, run together on one
// engine, so that their traffic shares the links it meets; each runs alone on the same nodes too,
// and the two times say what the others cost it. This file holds the pieces below the runner:
// where each job goes (place_jobs), background traffic as a job (generate_traffic), the GPUs a
// job's nodes hold (job_gpus) and each job's time in a run of all of them (job_time).
//   auto nodes = place_jobs({{.policy = PlacementPolicy::range, .first = 0, .count = 4},
//                            {.policy = PlacementPolicy::spread, .count = 2}}, 8);
//   Workload all;
//   add_job(all, generate_traffic({}, 16), job_gpus(nodes[1], 8));   // op_graph.h
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/collective.h"
#include "sim/units.h"
#include "workloads/executor.h"
#include "workloads/op_graph.h"

namespace dtsim::workloads {

// How a job's nodes are chosen: an explicit range (first, count), the lowest `count` consecutive
// free nodes (packed), or `count` free nodes evenly spaced over the free ones (spread, which on a
// fat-tree, whose leaves fill in node order, puts the job under as many leaves as it can).
enum class PlacementPolicy { range, packed, spread };

struct NodeRequest {
  PlacementPolicy policy = PlacementPolicy::packed;
  int first = 0;  // range only
  int count = 1;
};

// Why request `job` cannot be met; `other` is the earlier job it overlaps (-1: none).
class PlacementError : public std::runtime_error {
 public:
  PlacementError(size_t job, int other, const std::string& what)
      : std::runtime_error(what), job_(job), other_(other) {}
  size_t job() const { return job_; }
  int other() const { return other_; }

 private:
  size_t job_;
  int other_;
};

// The nodes of each request, ascending, for a cluster of `nodes` nodes: ranges as asked (one that
// overlaps an earlier range is refused), then each policy request in list order over the nodes
// still free. Throws PlacementError.
std::vector<std::vector<int>> place_jobs(const std::vector<NodeRequest>& requests, int nodes);

// The cluster GPUs of `nodes`, node by node: job GPU i runs on GPU job_gpus(...)[i].
std::vector<int> job_gpus(const std::vector<int>& nodes, int gpus_per_node);

// Nodes as a user reads them: "0-3,6,8-9".
std::string node_list(const std::vector<int>& nodes);

// Background traffic: every GPU of the job runs one collective among them all, `repeat` times
// back to back, occupying the fabric while the other jobs run.
struct TrafficSpec {
  collectives::CollectiveKind collective = collectives::CollectiveKind::all_to_all;
  Bytes bytes = Bytes::mib(64);  // nccl-tests size: each GPU's buffer
  int repeat = 10;
};

// The traffic job on GPUs 0..gpus-1, one rank each.
Workload generate_traffic(const TrafficSpec& spec, int gpus);

// Runs every rank's program `iterations` times back to back: its ops again after its own, on the
// same streams and communicators (so iteration k + 1 of a stream starts when iteration k's last op
// on it has ended), sends paired with the same iteration's receives. How a job keeps the fabric
// busy for as long as the jobs beside it.
void repeat_iterations(Workload& w, int iterations);

// When the last op of ranks [first, first + count) of a run ended: a job's time among others.
Time job_time(const ExecutionResult& run, size_t first, size_t count);

// One job's times: together with the others, and alone on the same nodes, cluster and model.
struct JobTime {
  std::string name;
  std::string workload;  // training, dlrm, trace or traffic
  std::vector<int> nodes;
  int gpus = 0;
  int iterations = 1;
  double alone_s = 0;  // per iteration: the mean of its iterations run back to back
  double together_s = 0;
  double slowdown() const { return alone_s > 0 ? together_s / alone_s : 0; }
};

struct JobsResult {
  std::string model;  // the network model they ran on: flow or packet
  int cluster_nodes = 0;
  std::vector<JobTime> jobs;
  uint64_t events = 0;  // of the run together
  uint64_t fingerprint = 0;
};

}  // namespace dtsim::workloads
