// Chakra execution traces: MLCommons' per-rank trace format (one file per rank, PREFIX.N.et,
// each a varint-length-delimited GlobalMetadata followed by Node messages; or PREFIX.N.json,
// Chakra's JSON form). write_chakra turns a Workload into such files; read_chakra turns files
// back into a Workload the executor runs: compute nodes (priced by their recorded shape, or their
// measured duration when the trace has one), collectives on their communicators, sends and
// receives, with data dependencies. dtsim's own attributes ("dtsim.*") make the round trip
// exact; traces from other tools run on what they carry (duration_micros, num_ops, comm_type,
// comm_size, ...), as MLCommons' PyTorch converter and ASTRA-sim's generators write them:
//   - nodes may come in any order: each runs after the nodes its data_deps name (a dependency on
//     a node the file lacks, or a cycle, is an error naming it); ctrl_deps are not waited on, as
//     in Chakra's reference feeder;
//   - CPU operators (is_cpu_op true) and metadata nodes run on the host stream, beside the GPU;
//   - a collective's pg_name is its process group, whose members are the ranks whose files issue
//     collectives on it (so trace every rank); one without a group runs on every traced rank;
//   - a send needs comm_dst and a receive comm_src; they pair in order per (sender, receiver,
//     comm_tag), as MPI matches messages (a missing comm_tag is 0).
//   write_chakra(workload, "traces/rank");           // traces/rank.0.et, traces/rank.1.et, ...
//   Workload w = read_chakra("traces/rank");
#pragma once

#include <string>

#include "workloads/op_graph.h"

namespace dtsim::workloads {

// Throws std::runtime_error when a file cannot be written.
void write_chakra(const Workload& w, const std::string& prefix);
// Reads PREFIX.0.et (or .json), PREFIX.1.et, ... until one is missing. Throws std::runtime_error
// naming the file (and the node) on a missing first file, a missing GlobalMetadata, JSON that is
// not Chakra's (a PyTorch execution trace is named as such), a duplicate node id, an unknown
// dependency, a dependency cycle, a dtsim attribute out of range, or sends and receives whose
// counts differ on a (sender, receiver, tag). A truncated last message ends the file. The workload's name is the
// trace's own (dtsim.name), or empty for a trace that carries none.
Workload read_chakra(const std::string& prefix);

}  // namespace dtsim::workloads
