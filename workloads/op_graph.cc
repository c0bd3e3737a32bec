#include "workloads/op_graph.h"

#include <algorithm>
#include <stdexcept>

namespace dtsim::workloads {

uint32_t RankGraph::label(std::string_view text) {
  // Generators reuse a few dozen labels many times; a linear scan from the back finds recent
  // ones first and keeps the graph free of a hash map.
  for (size_t i = labels.size(); i-- > 0;) {
    if (labels[i] == text) return static_cast<uint32_t>(i);
  }
  labels.emplace_back(text);
  return static_cast<uint32_t>(labels.size() - 1);
}

uint32_t RankGraph::add(Op op, std::initializer_list<uint32_t> after) {
  op.dep_begin = static_cast<uint32_t>(deps.size());
  op.dep_count = 0;
  const auto idx = static_cast<uint32_t>(ops.size());
  for (uint32_t d : after) {
    if (d >= idx) throw std::logic_error("op graph: dependency on a later op");
    deps.push_back(d);
    ++op.dep_count;
  }
  ops.push_back(op);
  return idx;
}

uint32_t RankGraph::add(Op op, const std::vector<uint32_t>& after) {
  op.dep_begin = static_cast<uint32_t>(deps.size());
  op.dep_count = 0;
  const auto idx = static_cast<uint32_t>(ops.size());
  for (uint32_t d : after) {
    if (d >= idx) throw std::logic_error("op graph: dependency on a later op");
    deps.push_back(d);
    ++op.dep_count;
  }
  ops.push_back(op);
  return idx;
}

void RankGraph::add_dep(uint32_t op, uint32_t after) {
  if (op + 1 != ops.size() || after >= op) throw std::logic_error("op graph: add_dep out of order");
  deps.push_back(after);
  ++ops[op].dep_count;
}

int Workload::add_comm(collectives::Communicator c) {
  for (size_t i = 0; i < comms.size(); ++i) {
    if (comms[i].ranks == c.ranks) return static_cast<int>(i);
  }
  comms.push_back(std::move(c));
  return static_cast<int>(comms.size() - 1);
}

void add_job(Workload& w, const Workload& job, const std::vector<int>& gpu_of) {
  const auto rank_offset = static_cast<int32_t>(w.ranks.size());
  const auto comm_offset = static_cast<int32_t>(w.comms.size());
  w.ranks.reserve(w.ranks.size() + job.ranks.size());
  w.comms.reserve(w.comms.size() + job.comms.size());
  for (const collectives::Communicator& c : job.comms) {
    collectives::Communicator copy = c;
    for (int& g : copy.ranks) g = gpu_of.at(static_cast<size_t>(g));
    w.comms.push_back(std::move(copy));
  }
  for (const RankGraph& r : job.ranks) {
    RankGraph copy = r;
    copy.gpu = gpu_of.at(static_cast<size_t>(r.gpu));
    for (Op& op : copy.ops) {
      if (op.comm >= 0) op.comm += comm_offset;
      if (op.peer_rank >= 0) op.peer_rank += rank_offset;
    }
    w.ranks.push_back(std::move(copy));
  }
}

void add_copies(Workload& w, const std::vector<int>& shifts) {
  if (shifts.empty()) return;
  const Workload job = w;
  int gpus = job.total_gpus;
  for (const RankGraph& r : job.ranks) gpus = std::max(gpus, r.gpu + 1);
  for (const collectives::Communicator& c : job.comms) {
    for (int g : c.ranks) gpus = std::max(gpus, g + 1);
  }
  for (const int shift : shifts) {
    std::vector<int> gpu_of(static_cast<size_t>(gpus));
    for (int g = 0; g < gpus; ++g) gpu_of[static_cast<size_t>(g)] = g + shift;
    add_job(w, job, gpu_of);
  }
}

size_t Workload::op_count() const {
  size_t n = 0;
  for (const auto& r : ranks) n += r.ops.size();
  return n;
}

std::string Workload::misfit(int gpus) const {
  const int needed = std::max(total_gpus, static_cast<int>(ranks.size()));
  if (needed > gpus) {
    return "the workload runs on " + std::to_string(needed) + " GPUs but the cluster has " + std::to_string(gpus);
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (ranks[r].gpu < 0 || ranks[r].gpu >= gpus) {
      return "rank " + std::to_string(r) + " is on GPU " + std::to_string(ranks[r].gpu) + " but the cluster has " +
             std::to_string(gpus) + " GPUs";
    }
  }
  for (size_t c = 0; c < comms.size(); ++c) {
    for (int g : comms[c].ranks) {
      if (g < 0 || g >= gpus) {
        return "communicator " + std::to_string(c) + " names GPU " + std::to_string(g) + " but the cluster has " +
               std::to_string(gpus) + " GPUs";
      }
    }
  }
  return {};
}

CommCategory category_of(Stream s) {
  switch (s) {
    case Stream::tp: return CommCategory::tp;
    case Stream::cp: return CommCategory::cp;
    case Stream::ep: return CommCategory::ep;
    case Stream::pp: return CommCategory::pp;
    case Stream::dp:
    case Stream::dp_gather:
    case Stream::compute:
    case Stream::host: return CommCategory::dp;
  }
  return CommCategory::dp;
}

std::string_view name(Stream s) {
  switch (s) {
    case Stream::compute: return "compute";
    case Stream::tp: return "tp";
    case Stream::cp: return "cp";
    case Stream::ep: return "ep";
    case Stream::dp: return "dp";
    case Stream::dp_gather: return "dp_gather";
    case Stream::pp: return "pp";
    case Stream::host: return "host";
  }
  return "?";
}

std::string_view activity(const Op& op) {
  if (op.stream == Stream::host) return "host";
  if (op.kind == OpKind::compute) return "compute";
  return name(category_of(op.stream));
}

std::string_view name(CommCategory c) {
  switch (c) {
    case CommCategory::tp: return "tp";
    case CommCategory::cp: return "cp";
    case CommCategory::ep: return "ep";
    case CommCategory::dp: return "dp";
    case CommCategory::pp: return "pp";
  }
  return "?";
}

}  // namespace dtsim::workloads
