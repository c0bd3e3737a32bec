// Measurement: one benchmark run of one collective as nccl-tests (or nccl-replay) reports it: a
// row per (size, placement) with time, algbw, busbw and the #wrong count. Every reader in this
// folder (CSV, nccl-tests text, nccl-tests -J JSON) produces MeasurementSets; validate and
// calibrate consume them.
//   for (const MeasurementSet& set : read_measurements("run.txt")) compare(set, ranks, predictor);
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/collective.h"

namespace dtsim::validation {

enum class Placement { out_of_place, in_place };

std::string_view name(Placement p);  // "out" / "in", as the measured CSVs write it

struct MeasuredPoint {
  int64_t size_bytes = 0;
  int64_t count = 0;        // elements, 0 where the source does not say
  double time_us = 0;
  double algbw_gbps = 0;    // GB/s, 1e9 bytes per second
  double busbw_gbps = 0;
  Placement placement = Placement::out_of_place;
  std::optional<int64_t> wrong;  // nccl-tests #wrong; nullopt when it printed N/A or nothing
  int line = 0;             // where in the source file the row was read
};

struct MeasurementSet {
  std::string source;       // file it was read from
  std::string label;        // sub-block within the file ("A40_2gpu_NVLinkBridge"), may be empty
  collectives::CollectiveKind collective = collectives::CollectiveKind::all_reduce;
  int ranks = 0;            // 0: the file does not say; the scenario decides
  int nodes = 0;            // hosts the ranks ran on (nccl-tests' rank lines); 0: not known
  int gpus_per_thread = 0;  // GPUs one nccl-tests thread launched on (nGpus, -g); 0: not stated
  // NCCL variables the run's NCCL_DEBUG=INFO lines say were set ("NCCL_ALGO" -> "Ring").
  std::map<std::string, std::string> nccl_env;
  std::vector<std::string> header;      // '#' lines: hardware, command, source
  std::vector<MeasuredPoint> points;
  std::optional<double> avg_busbw_gbps; // nccl-tests' "# Avg bus bandwidth" trailer
  std::vector<std::string> warnings;    // things a user should know (e.g. no trailer)

  // Rows whose #wrong is nonzero: results nccl-tests itself flagged as incorrect.
  std::vector<const MeasuredPoint*> wrong_points() const;
  // A display name: the source's stem plus the label when there is one.
  std::string display_name() const;
};

// The note a set gets when one nccl-tests thread drove `gpus` GPUs (nGpus > 1, -g N): that
// thread launches their kernels one after another, a floor under every iteration that the
// prediction then includes (workloads::host_launch_floor).
std::string one_thread_drove_gpus_note(int gpus);

// Accepts the names nccl-tests, NCCL and dtsim use: all_reduce, allreduce, AllReduce,
// all_reduce_perf, alltoall, all_to_all, sendrecv, send_recv, ... Returns nullopt otherwise.
std::optional<collectives::CollectiveKind> parse_collective_name(std::string_view text);

}  // namespace dtsim::validation
