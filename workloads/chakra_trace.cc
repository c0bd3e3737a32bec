#include "workloads/chakra_trace.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "chakra_et.pb.h"

namespace dtsim::workloads {
namespace {

namespace pb = ChakraProtoMsg;
using collectives::CollectiveKind;

std::string file_of(const std::string& prefix, size_t rank) { return prefix + "." + std::to_string(rank) + ".et"; }

pb::CollectiveCommType to_chakra(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce: return pb::ALL_REDUCE;
    case CollectiveKind::all_gather: return pb::ALL_GATHER;
    case CollectiveKind::reduce_scatter: return pb::REDUCE_SCATTER;
    case CollectiveKind::broadcast: return pb::BROADCAST;
    case CollectiveKind::reduce: return pb::REDUCE;
    case CollectiveKind::all_to_all: return pb::ALL_TO_ALL;
    case CollectiveKind::send_recv: return pb::BARRIER;
  }
  return pb::ALL_REDUCE;
}

CollectiveKind from_chakra(int64_t t) {
  switch (t) {
    case pb::ALL_GATHER:
    case pb::GATHER: return CollectiveKind::all_gather;
    case pb::REDUCE_SCATTER:
    case pb::REDUCE_SCATTER_BLOCK: return CollectiveKind::reduce_scatter;
    case pb::BROADCAST:
    case pb::SCATTER: return CollectiveKind::broadcast;
    case pb::REDUCE: return CollectiveKind::reduce;
    case pb::ALL_TO_ALL: return CollectiveKind::all_to_all;
    default: return CollectiveKind::all_reduce;
  }
}

void attr(pb::Node& n, const char* name, int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}
void attr(pb::Node& n, const char* name, double v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_double_val(v);
}
void meta(pb::GlobalMetadata& m, const std::string& name, const std::string& v) {
  auto* a = m.add_attr();
  a->set_name(name);
  a->set_string_val(v);
}
void meta(pb::GlobalMetadata& m, const std::string& name, double v) {
  auto* a = m.add_attr();
  a->set_name(name);
  a->set_double_val(v);
}

double number(const pb::AttributeProto& a) {
  switch (a.value_case()) {
    case pb::AttributeProto::kDoubleVal: return a.double_val();
    case pb::AttributeProto::kInt64Val: return static_cast<double>(a.int64_val());
    case pb::AttributeProto::kUint64Val: return static_cast<double>(a.uint64_val());
    case pb::AttributeProto::kBoolVal: return a.bool_val() ? 1 : 0;
    case pb::AttributeProto::kStringVal: return std::stod(a.string_val());
    default: return 0;
  }
}

std::string join(const std::vector<int>& v) {
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s << ',';
    s << v[i];
  }
  return s.str();
}

std::vector<int> split_ints(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(std::stoi(item));
  }
  return out;
}

void write_message(google::protobuf::io::CodedOutputStream& out, const google::protobuf::Message& m) {
  out.WriteVarint32(static_cast<uint32_t>(m.ByteSizeLong()));
  m.SerializeWithCachedSizes(&out);
}

bool read_message(google::protobuf::io::CodedInputStream& in, google::protobuf::Message& m) {
  uint32_t size = 0;
  if (!in.ReadVarint32(&size)) return false;
  const auto limit = in.PushLimit(static_cast<int>(size));
  const bool ok = m.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
  in.PopLimit(limit);
  return ok;
}

}  // namespace

void write_chakra(const Workload& w, const std::string& prefix) {
  const auto dir = std::filesystem::path(prefix).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  for (size_t r = 0; r < w.ranks.size(); ++r) {
    const RankGraph& g = w.ranks[r];
    std::ofstream file(file_of(prefix, r), std::ios::binary | std::ios::trunc);
    if (!file) throw std::runtime_error("cannot write " + file_of(prefix, r));
    google::protobuf::io::OstreamOutputStream stream(&file);
    google::protobuf::io::CodedOutputStream out(&stream);

    pb::GlobalMetadata m;
    m.set_version("0.0.4");
    meta(m, "dtsim.name", w.name);
    meta(m, "dtsim.total_gpus", static_cast<double>(w.total_gpus));
    meta(m, "dtsim.model_flops", w.model_flops);
    meta(m, "dtsim.tokens", w.tokens);
    meta(m, "dtsim.gpu", static_cast<double>(g.gpu));
    meta(m, "dtsim.represents", static_cast<double>(g.represents));
    meta(m, "dtsim.stage", static_cast<double>(g.stage));
    for (size_t c = 0; c < w.comms.size(); ++c) meta(m, "dtsim.comm." + std::to_string(c), join(w.comms[c].ranks));
    write_message(out, m);

    pb::Node n;
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const Op& op = g.ops[i];
      n.Clear();
      n.set_id(i);
      n.set_name(op.label < g.labels.size() ? g.labels[op.label] : std::string());
      for (uint32_t d = 0; d < op.dep_count; ++d) n.add_data_deps(g.deps[op.dep_begin + d]);
      if (op.has_measured()) n.set_duration_micros(static_cast<uint64_t>(op.measured.us() + 0.5));
      attr(n, "dtsim.stream", static_cast<int64_t>(op.stream));
      attr(n, "dtsim.repeat", static_cast<int64_t>(op.repeat));
      if (op.has_measured()) attr(n, "dtsim.measured_ps", static_cast<int64_t>(op.measured.ps()));
      switch (op.kind) {
        case OpKind::compute:
          n.set_type(pb::COMP_NODE);
          attr(n, "num_ops", static_cast<int64_t>(op.flops));
          attr(n, "tensor_size", op.bytes.count());
          attr(n, "dtsim.compute_kind", static_cast<int64_t>(op.compute));
          attr(n, "dtsim.dtype", static_cast<int64_t>(op.dtype));
          attr(n, "dtsim.flops", op.flops);
          attr(n, "dtsim.m", op.m);
          attr(n, "dtsim.n", op.n);
          attr(n, "dtsim.k", op.k);
          attr(n, "dtsim.batch", op.batch);
          attr(n, "dtsim.causal", static_cast<int64_t>(op.causal));
          break;
        case OpKind::collective:
          n.set_type(pb::COMM_COLL_NODE);
          attr(n, "comm_type", static_cast<int64_t>(to_chakra(op.collective)));
          attr(n, "comm_size", op.bytes.count());
          attr(n, "dtsim.comm", static_cast<int64_t>(op.comm));
          break;
        case OpKind::send:
        case OpKind::recv: {
          n.set_type(op.kind == OpKind::send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
          attr(n, "comm_size", op.bytes.count());
          attr(n, "dtsim.comm", static_cast<int64_t>(op.comm));
          // The tag names the send: its rank and node id, so a receive finds exactly its match.
          if (op.kind == OpKind::send) {
            attr(n, "comm_src", static_cast<int64_t>(r));
            attr(n, "comm_dst", static_cast<int64_t>(op.peer_rank));
            attr(n, "comm_tag", static_cast<int64_t>(i));
          } else {
            attr(n, "comm_src", static_cast<int64_t>(op.peer_rank));
            attr(n, "comm_dst", static_cast<int64_t>(r));
            attr(n, "comm_tag", static_cast<int64_t>(op.peer_op));
          }
          break;
        }
      }
      write_message(out, n);
    }
  }
}

Workload read_chakra(const std::string& prefix) {
  Workload w;
  w.name = std::filesystem::path(prefix).filename().string();
  std::map<std::pair<int, int64_t>, uint32_t> send_at;  // (rank, tag) -> send op
  struct PendingRecv {
    int rank;
    uint32_t op;
    int src;
    int64_t tag;
  };
  std::vector<PendingRecv> recvs;
  std::map<int, int> comm_of_trace;  // a comm id in dtsim attributes -> Workload comm

  for (size_t r = 0;; ++r) {
    const std::string path = file_of(prefix, r);
    std::ifstream file(path, std::ios::binary);
    if (!file) {
      if (r == 0) throw std::runtime_error("cannot open " + path);
      break;
    }
    google::protobuf::io::IstreamInputStream stream(&file);
    google::protobuf::io::CodedInputStream in(&stream);
    in.SetTotalBytesLimit(std::numeric_limits<int>::max());
    RankGraph g;
    g.gpu = static_cast<int>(r);
    pb::GlobalMetadata m;
    if (!read_message(in, m)) throw std::runtime_error(path + ": no GlobalMetadata message");
    for (const auto& a : m.attr()) {
      const std::string& k = a.name();
      if (k == "dtsim.name") w.name = a.string_val();
      else if (k == "dtsim.total_gpus") w.total_gpus = static_cast<int>(number(a));
      else if (k == "dtsim.model_flops") w.model_flops = number(a);
      else if (k == "dtsim.tokens") w.tokens = number(a);
      else if (k == "dtsim.gpu") g.gpu = static_cast<int>(number(a));
      else if (k == "dtsim.represents") g.represents = static_cast<int>(number(a));
      else if (k == "dtsim.stage") g.stage = static_cast<int>(number(a));
      else if (r == 0 && k.rfind("dtsim.comm.", 0) == 0) {
        const int id = std::stoi(k.substr(11));
        comm_of_trace[id] = w.add_comm({split_ints(a.string_val())});
      }
    }

    // Node ids may be sparse: map them to op indices in file order (dependencies point back).
    std::map<uint64_t, uint32_t> index_of;
    pb::Node n;
    std::vector<std::vector<uint64_t>> deps_by_op;
    while (true) {
      n.Clear();
      if (!read_message(in, n)) break;
      Op op;
      std::map<std::string, double> at;
      for (const auto& a : n.attr()) at[a.name()] = number(a);
      auto get = [&](const char* key, double fallback) {
        auto it = at.find(key);
        return it == at.end() ? fallback : it->second;
      };
      op.stream = static_cast<Stream>(static_cast<int>(get("dtsim.stream", 0)));
      op.repeat = static_cast<int32_t>(get("dtsim.repeat", 1));
      if (at.count("dtsim.measured_ps")) {
        op.measured = Time::ps(static_cast<int64_t>(at["dtsim.measured_ps"]));
      } else if (n.duration_micros() > 0) {
        op.measured = Time::us(static_cast<double>(n.duration_micros()));
      }
      switch (n.type()) {
        case pb::COMP_NODE:
          op.kind = OpKind::compute;
          op.compute = static_cast<ComputeKind>(static_cast<int>(get("dtsim.compute_kind", static_cast<double>(ComputeKind::gemm))));
          op.dtype = static_cast<topology::Dtype>(static_cast<int>(get("dtsim.dtype", static_cast<double>(topology::Dtype::bf16))));
          op.flops = get("dtsim.flops", get("num_ops", 0));
          op.bytes = Bytes(static_cast<int64_t>(get("tensor_size", 0)));
          op.m = static_cast<int64_t>(get("dtsim.m", 0));
          op.n = static_cast<int64_t>(get("dtsim.n", 0));
          op.k = static_cast<int64_t>(get("dtsim.k", 0));
          op.batch = static_cast<int64_t>(get("dtsim.batch", 1));
          op.causal = get("dtsim.causal", 1) != 0;
          if (!op.has_measured() && op.flops == 0 && op.bytes.count() == 0) op.measured = Time::zero();
          break;
        case pb::COMM_COLL_NODE: {
          op.kind = OpKind::collective;
          if (!at.count("dtsim.stream")) op.stream = Stream::dp;
          op.collective = from_chakra(static_cast<int64_t>(get("comm_type", 0)));
          op.bytes = Bytes(static_cast<int64_t>(get("comm_size", 0)));
          auto c = comm_of_trace.find(static_cast<int>(get("dtsim.comm", -1)));
          op.comm = c == comm_of_trace.end() ? -1 : c->second;
          break;
        }
        case pb::COMM_SEND_NODE:
        case pb::COMM_RECV_NODE: {
          const bool send = n.type() == pb::COMM_SEND_NODE;
          op.kind = send ? OpKind::send : OpKind::recv;
          if (!at.count("dtsim.stream")) op.stream = Stream::pp;
          op.collective = CollectiveKind::send_recv;
          op.bytes = Bytes(static_cast<int64_t>(get("comm_size", 0)));
          auto c = comm_of_trace.find(static_cast<int>(get("dtsim.comm", -1)));
          op.comm = c == comm_of_trace.end() ? -1 : c->second;
          const int src = static_cast<int>(get("comm_src", -1));
          const int dst = static_cast<int>(get("comm_dst", -1));
          const auto tag = static_cast<int64_t>(get("comm_tag", static_cast<double>(n.id())));
          if (send) {
            op.peer_rank = dst;
            send_at[{static_cast<int>(r), tag}] = static_cast<uint32_t>(g.ops.size());
          } else {
            recvs.push_back({static_cast<int>(r), static_cast<uint32_t>(g.ops.size()), src, tag});
          }
          if (op.comm < 0 && src >= 0 && dst >= 0) op.comm = w.add_comm({{std::min(src, dst), std::max(src, dst)}});
          break;
        }
        default:
          op.kind = OpKind::compute;
          op.measured = op.has_measured() ? op.measured : Time::zero();
          break;
      }
      op.label = g.label(n.name());
      std::vector<uint32_t> deps;
      for (uint64_t d : n.data_deps()) {
        auto it = index_of.find(d);
        if (it == index_of.end()) throw std::runtime_error(path + ": node " + std::to_string(n.id()) + " depends on a later or unknown node");
        deps.push_back(it->second);
      }
      for (uint64_t d : n.ctrl_deps()) {
        auto it = index_of.find(d);
        if (it != index_of.end()) deps.push_back(it->second);
      }
      index_of[n.id()] = static_cast<uint32_t>(g.ops.size());
      g.add(op, deps);
    }
    w.ranks.push_back(std::move(g));
  }
  for (const PendingRecv& p : recvs) {
    auto it = send_at.find({p.src, p.tag});
    if (it == send_at.end()) {
      throw std::runtime_error(file_of(prefix, p.rank) + ": receive from rank " + std::to_string(p.src) +
                               " tag " + std::to_string(p.tag) + " has no matching send");
    }
    Op& op = w.ranks[p.rank].ops[p.op];
    op.peer_rank = p.src;
    op.peer_op = static_cast<int32_t>(it->second);
  }
  if (w.total_gpus == 0) w.total_gpus = static_cast<int>(w.ranks.size());
  // Collectives of a foreign trace that name no communicator run on every rank of the trace.
  int world = -1;
  for (RankGraph& g : w.ranks) {
    for (Op& op : g.ops) {
      if (op.kind != OpKind::collective || op.comm >= 0) continue;
      if (world < 0) {
        collectives::Communicator all;
        for (const RankGraph& x : w.ranks) all.ranks.push_back(x.gpu);
        world = w.add_comm(std::move(all));
      }
      op.comm = world;
    }
  }
  return w;
}

}  // namespace dtsim::workloads
