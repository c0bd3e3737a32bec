#include "workloads/jobs.h"

#include <fmt/format.h>

#include <algorithm>

namespace dtsim::workloads {
namespace {

std::string range_text(int first, int count) {
  return count == 1 ? fmt::format("node {}", first)
                    : fmt::format("nodes {}-{}", first, first + count - 1);
}

}  // namespace

std::vector<std::vector<int>> place_jobs(const std::vector<NodeRequest>& requests, int nodes) {
  std::vector<std::vector<int>> placed(requests.size());
  std::vector<int> owner(static_cast<size_t>(std::max(nodes, 0)), -1);
  for (size_t j = 0; j < requests.size(); ++j) {
    const NodeRequest& r = requests[j];
    if (r.count > nodes) {
      throw PlacementError(
          j, -1, fmt::format("the job needs {} nodes but the cluster has {}", r.count, nodes));
    }
    if (r.policy != PlacementPolicy::range) continue;
    if (r.first < 0 || r.first + r.count > nodes) {
      throw PlacementError(j, -1,
                           fmt::format("{} run past the cluster's {} nodes (0-{})",
                                       range_text(r.first, r.count), nodes, nodes - 1));
    }
    for (int n = r.first; n < r.first + r.count; ++n) {
      if (const int other = owner[static_cast<size_t>(n)]; other >= 0) {
        throw PlacementError(j, other,
                             fmt::format("{} overlap {}", range_text(r.first, r.count),
                                         range_text(requests[static_cast<size_t>(other)].first,
                                                    requests[static_cast<size_t>(other)].count)));
      }
      owner[static_cast<size_t>(n)] = static_cast<int>(j);
      placed[j].push_back(n);
    }
  }
  for (size_t j = 0; j < requests.size(); ++j) {
    const NodeRequest& r = requests[j];
    if (r.policy == PlacementPolicy::range) continue;
    std::vector<int> free;
    for (int n = 0; n < nodes; ++n) {
      if (owner[static_cast<size_t>(n)] < 0) free.push_back(n);
    }
    if (static_cast<int>(free.size()) < r.count) {
      throw PlacementError(
          j, -1,
          fmt::format("the job needs {} nodes but {} of the cluster's {} are left by the jobs "
                      "placed before it",
                      r.count, free.size(), nodes));
    }
    if (r.policy == PlacementPolicy::packed) {
      size_t run = 0;
      for (size_t i = 0; i < free.size() && run < static_cast<size_t>(r.count); ++i) {
        run = (i > 0 && free[i] == free[i - 1] + 1) ? run + 1 : 1;
        if (run == static_cast<size_t>(r.count)) {
          for (size_t k = i + 1 - run; k <= i; ++k) placed[j].push_back(free[k]);
        }
      }
      if (placed[j].empty()) {
        throw PlacementError(
            j, -1,
            fmt::format("packed needs {} consecutive free nodes and the jobs placed before it "
                        "leave none; use placement: spread or an explicit range",
                        r.count));
      }
    } else {
      for (int i = 0; i < r.count; ++i) {
        placed[j].push_back(
            free[static_cast<size_t>(int64_t{i} * static_cast<int64_t>(free.size()) / r.count)]);
      }
    }
    for (int n : placed[j]) owner[static_cast<size_t>(n)] = static_cast<int>(j);
  }
  return placed;
}

std::vector<int> job_gpus(const std::vector<int>& nodes, int gpus_per_node) {
  std::vector<int> gpus;
  gpus.reserve(nodes.size() * static_cast<size_t>(gpus_per_node));
  for (int n : nodes) {
    for (int g = 0; g < gpus_per_node; ++g) gpus.push_back(n * gpus_per_node + g);
  }
  return gpus;
}

std::string node_list(const std::vector<int>& nodes) {
  std::string out;
  for (size_t i = 0; i < nodes.size();) {
    size_t k = i;
    while (k + 1 < nodes.size() && nodes[k + 1] == nodes[k] + 1) ++k;
    if (!out.empty()) out += ',';
    out += k == i ? fmt::format("{}", nodes[i]) : fmt::format("{}-{}", nodes[i], nodes[k]);
    i = k + 1;
  }
  return out;
}

Workload generate_traffic(const TrafficSpec& spec, int gpus) {
  Workload w;
  w.name = "traffic";
  w.total_gpus = gpus;
  collectives::Communicator all;
  for (int g = 0; g < gpus; ++g) all.ranks.push_back(g);
  const int comm = w.add_comm(std::move(all));
  for (int g = 0; g < gpus; ++g) {
    RankGraph r;
    r.gpu = g;
    Op op = Op::collective_on(Stream::dp, spec.collective, comm, topology::Dtype::bf16, spec.bytes);
    op.repeat = spec.repeat;
    op.label = r.label(fmt::format("traffic.{}", collectives::name(spec.collective)));
    r.add(op);
    w.ranks.push_back(std::move(r));
  }
  return w;
}

void repeat_iterations(Workload& w, int iterations) {
  std::vector<size_t> ops(w.ranks.size());
  for (size_t r = 0; r < w.ranks.size(); ++r) ops[r] = w.ranks[r].ops.size();
  for (size_t r = 0; r < w.ranks.size(); ++r) {
    RankGraph& g = w.ranks[r];
    const size_t m = g.ops.size(), d = g.deps.size();
    g.ops.reserve(m * static_cast<size_t>(iterations));
    g.deps.reserve(d * static_cast<size_t>(iterations));
    for (size_t k = 1; k < static_cast<size_t>(iterations); ++k) {
      for (size_t i = 0; i < m; ++i) {
        Op op = g.ops[i];
        op.dep_begin += static_cast<uint32_t>(k * d);
        if (op.peer_rank >= 0 && op.peer_op >= 0) {
          op.peer_op += static_cast<int32_t>(k * ops[static_cast<size_t>(op.peer_rank)]);
        }
        g.ops.push_back(op);
      }
      for (size_t j = 0; j < d; ++j) g.deps.push_back(g.deps[j] + static_cast<uint32_t>(k * m));
    }
  }
}

Time job_time(const ExecutionResult& run, size_t first, size_t count) {
  Time t = Time::zero();
  for (size_t r = first; r < first + count && r < run.rank_end.size(); ++r)
    t = std::max(t, run.rank_end[r]);
  return t;
}

}  // namespace dtsim::workloads
