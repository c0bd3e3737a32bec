#include "workloads/advice.h"

#include <fmt/format.h>

#include <functional>
#include <optional>

#include "workloads/megatron_generator.h"
#include "workloads/memory_model.h"

namespace dtsim::workloads {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// One change to try: the keys it sets, as a user writes them, and the change itself.
struct Change {
  std::string keys;
  std::function<void(TrainingSpec&)> apply;
};

// The memory estimate with `change` applied to `spec`; none when the changed job does not
// resolve (a size that no longer divides the cluster, the model or the batch).
std::optional<MemoryEstimate> memory_with(const TrainingSpec& spec, const topology::ClusterSpec& cluster,
                                          const Change& change) {
  TrainingSpec changed = spec;
  change.apply(changed);
  try {
    return estimate_memory(resolve_training(changed, cluster), cluster);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

std::string memory_advice(const TrainingSpec& spec, const TrainingSpec& resolved,
                          const topology::ClusterSpec& cluster, const MemoryEstimate& now) {
  const ParallelSpec& p = resolved.parallel;
  std::vector<Change> changes;
  for (int z = p.zero + 1; z <= 3; ++z) {
    changes.push_back({fmt::format("workload.parallel.zero: {}", z), [z](TrainingSpec& t) { t.parallel.zero = z; }});
  }
  for (const Recompute r : {Recompute::selective, Recompute::full}) {
    if (static_cast<int>(r) <= static_cast<int>(now.recompute)) continue;
    changes.push_back({fmt::format("workload.activation_recompute: {}", name(r)),
                       [r](TrainingSpec& t) { t.activation_recompute = r; }});
  }
  // Twice the model parallelism on half the replicas keeps the GPU count.
  if (p.dp % 2 == 0) {
    changes.push_back({fmt::format("workload.parallel.pp: {} (dp {})", 2 * p.pp, p.dp / 2), [&p](TrainingSpec& t) {
                         t.parallel.pp = 2 * p.pp;
                         t.parallel.dp = p.dp / 2;
                       }});
    if (2 * p.tp <= cluster.gpus_per_node) {
      changes.push_back({fmt::format("workload.parallel.tp: {} (dp {})", 2 * p.tp, p.dp / 2), [&p](TrainingSpec& t) {
                           t.parallel.tp = 2 * p.tp;
                           t.parallel.dp = p.dp / 2;
                         }});
    }
  }
  std::vector<std::string> fits;
  std::string closest;
  double closest_total = now.total();
  for (const Change& c : changes) {
    const auto m = memory_with(spec, cluster, c);
    if (!m) continue;
    if (m->fits()) {
      fits.push_back(fmt::format("{} ({:.1f} GiB)", c.keys, m->total() / kGiB));
    } else if (m->total() < closest_total) {
      closest_total = m->total();
      closest = fmt::format("{} ({:.1f} GiB)", c.keys, m->total() / kGiB);
    }
  }
  std::string line = fmt::format(
      "workload needs {:.1f} GiB per GPU (pipeline stage {}), more than the {:.1f} GiB of HBM; the time assumes it fits",
      now.total() / kGiB, now.stage, now.capacity / kGiB);
  if (!fits.empty()) {
    line += "; it would fit with";
    for (size_t i = 0; i < fits.size(); ++i) line += (i == 0 ? " " : ", or ") + fits[i];
  } else if (!closest.empty()) {
    line += "; no one key makes it fit, the closest is " + closest;
  }
  return line;
}

std::string bubble_advice(const TrainingSpec& spec, const TrainingSpec& resolved,
                          const topology::ClusterSpec& cluster, double share) {
  const ParallelSpec& p = resolved.parallel;
  const int m = resolved.batch.global / (resolved.batch.micro * p.dp);
  std::string line = fmt::format(
      "the pipeline bubble is {:.0f}% of the iteration ({} stages, vp {}, {} microbatches a replica; closed form "
      "(pp - 1) / (vp x m + pp - 1) = {:.0f}%)",
      100 * share, p.pp, p.vp, m, 100 * pipeline_bubble_share(p.pp, p.vp, m));
  std::vector<std::string> options;
  for (int vp = 2 * p.vp; vp <= 8 * p.vp && options.size() < 2; vp *= 2) {
    // Interleaving holds more microbatch chunks in flight: say when that would not fit.
    const auto memory = memory_with(spec, cluster, {"", [vp](TrainingSpec& t) { t.parallel.vp = vp; }});
    if (!memory) continue;  // the layers do not split into that many chunks
    options.push_back(fmt::format("workload.parallel.vp: {} about {:.0f}%{}", vp, 100 * pipeline_bubble_share(p.pp, vp, m),
                                  memory->fits() ? "" : fmt::format(" (but {:.1f} GiB per GPU)", memory->total() / kGiB)));
  }
  if (resolved.batch.micro > 1) {
    options.push_back(fmt::format("workload.batch.micro: {} about {:.0f}%", resolved.batch.micro / 2,
                                  100 * pipeline_bubble_share(p.pp, p.vp, 2 * m)));
  }
  options.push_back(fmt::format("workload.batch.global: {} about {:.0f}% (twice the batch)", 2 * resolved.batch.global,
                                100 * pipeline_bubble_share(p.pp, p.vp, 2 * m)));
  line += "; it would be";
  for (size_t i = 0; i < options.size(); ++i) line += (i == 0 ? " with " : ", with ") + options[i];
  return line;
}

}  // namespace

double pipeline_bubble_share(int pp, int vp, int microbatches) {
  const double idle = pp - 1;
  return idle / (static_cast<double>(vp) * microbatches + idle);
}

std::vector<std::string> training_advice(const TrainingSpec& spec, const topology::ClusterSpec& cluster,
                                         const TrainingResult& result) {
  std::vector<std::string> out;
  const bool misfit = result.memory && !result.memory->fits();
  const double share = result.iteration_time_s > 0 ? result.breakdown.bubble.seconds() / result.iteration_time_s : 0;
  if (!misfit && share <= kBubbleAdviceShare) return out;
  TrainingSpec resolved;
  try {
    resolved = resolve_training(spec, cluster);
  } catch (const std::invalid_argument&) {
    return out;  // a job that ran resolves; nothing to advise otherwise
  }
  if (misfit) out.push_back(memory_advice(spec, resolved, cluster, *result.memory));
  if (resolved.parallel.pp > 1 && share > kBubbleAdviceShare) {
    out.push_back(bubble_advice(spec, resolved, cluster, share));
  }
  return out;
}

}  // namespace dtsim::workloads
