#include "validation/measurement.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace dtsim::validation {

std::string_view name(Placement p) { return p == Placement::in_place ? "in" : "out"; }

std::string one_thread_drove_gpus_note(int gpus) {
  const std::string n = std::to_string(gpus);
  return "one thread drove " + n + " GPUs (nGpus " + n + ", nccl-tests -g " + n +
         "): it launches their kernels one after another, so no iteration takes less than " + n +
         " launches; the prediction holds to that floor (host_launch_per_gpu), which a run with "
         "one "
         "process per GPU (-g 1) does not have";
}

std::vector<const MeasuredPoint*> MeasurementSet::wrong_points() const {
  std::vector<const MeasuredPoint*> out;
  for (const MeasuredPoint& p : points)
    if (p.wrong && *p.wrong != 0) out.push_back(&p);
  return out;
}

std::string MeasurementSet::display_name() const {
  std::string stem = source.empty() ? std::string("measurement")
                                    : std::filesystem::path(source).stem().string();
  return label.empty() ? stem : stem + ":" + label;
}

std::optional<collectives::CollectiveKind> parse_collective_name(std::string_view text) {
  using collectives::CollectiveKind;
  // Compare with case, underscores and the nccl-tests "_perf" suffix removed, so that
  // "AllReduce", "all_reduce" and "all_reduce_perf" are the same name.
  std::string key;
  for (char c : text)
    if (c != '_' && c != '-') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key.size() > 4 && key.ends_with("perf")) key.resize(key.size() - 4);
  if (key == "allreduce") return CollectiveKind::all_reduce;
  if (key == "allgather") return CollectiveKind::all_gather;
  if (key == "reducescatter") return CollectiveKind::reduce_scatter;
  if (key == "broadcast" || key == "bcast") return CollectiveKind::broadcast;
  if (key == "reduce") return CollectiveKind::reduce;
  if (key == "alltoall" || key == "a2a") return CollectiveKind::all_to_all;
  if (key == "sendrecv" || key == "p2p") return CollectiveKind::send_recv;
  if (key == "gather") return CollectiveKind::gather;
  if (key == "scatter") return CollectiveKind::scatter;
  if (key == "hypercube") return CollectiveKind::hypercube;
  return std::nullopt;
}

}  // namespace dtsim::validation
