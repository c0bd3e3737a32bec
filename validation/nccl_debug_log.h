// What NCCL_DEBUG=INFO (with NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING) says about a communicator: its
// rings and trees per channel, channel counts, the topology search's graphs ("Pattern 4, crossNic
// 0, nChannels 16, bw 40.0/40.0, type NVL/PIX") and, per collective call, the algorithm and
// protocol the tuner picked. validate --nccl-log compares those picks with our tuner's.
//   NcclDebugLog log = parse_nccl_debug_log(text, "nccl.log");
//   TunerAgreement a = compare_tuner(log, 16, predictor);
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "validation/comparison.h"

namespace dtsim::validation {

struct NcclGraph {
  int pattern = 0;          // NCCL_TOPO_PATTERN_*: 1 balanced tree, 2 split tree, 3 tree, 4 ring, 5 nvls...
  bool cross_nic = false;
  int channels = 0;
  double bw_intra_gbps = 0; // per channel
  double bw_inter_gbps = 0;
  std::string type_intra;   // NVL, PIX, PXB, PHB, SYS, NET...
  std::string type_inter;
  int line = 0;
};

struct NcclTuningChoice {
  collectives::CollectiveKind collective = collectives::CollectiveKind::all_reduce;
  int64_t nccl_bytes = 0;   // as NCCL prints it: count * type size, per rank for AllGather/ReduceScatter
  std::string algorithm;    // normalised to dtsim's names: ring, tree, nvls, nvls_tree, collnet_direct, ...
  std::string protocol;     // ll, ll128, simple
  int channel_lo = -1, channel_hi = -1;
  int line = 0;

  // The nccl-tests "size" of this call on `ranks` ranks.
  int64_t test_size(int ranks) const;
};

struct NcclDebugLog {
  std::string nccl_version;             // "2.18.5+cuda12.2"
  int ranks = 0, nodes = 0;             // from "comm ... nRanks N nNodes M"
  std::map<std::string, int> channels;  // "coll" -> 32, "nvls" -> 16, "p2p" -> 32, "collnet" -> 0
  std::map<int, std::vector<int>> rings;  // channel -> rank order
  std::map<int, std::string> trees;     // channel -> NCCL's "1/-1/-1->0->-1" text for rank that printed
  std::vector<NcclGraph> graphs;
  std::vector<NcclTuningChoice> choices;  // one per (collective, size), first seen
};

// Reads every line it recognises and skips the rest; never throws for odd lines.
NcclDebugLog parse_nccl_debug_log(std::string_view text);

// dtsim's name for NCCL's algorithm or protocol, given by name ("RING", "NVLSTree") or by the
// number older NCCL printed ("Algo 1 proto 2"). Returns the input lower-cased when unknown.
std::string normalize_nccl_algorithm(std::string_view text);
std::string normalize_nccl_protocol(std::string_view text);

struct TunerDifference {
  NcclTuningChoice nccl;
  int64_t size_bytes = 0;
  Prediction ours;
};

struct TunerAgreement {
  size_t compared = 0;
  std::vector<TunerDifference> differences;
};

// Asks `predict` about every tuning choice in the log and lists where the picks differ.
TunerAgreement compare_tuner(const NcclDebugLog& log, int ranks, const Predictor& predict);

}  // namespace dtsim::validation
