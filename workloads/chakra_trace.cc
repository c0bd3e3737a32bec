#include "workloads/chakra_trace.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/json_util.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chakra_et.pb.h"

namespace dtsim::workloads {
namespace {

namespace pb = ChakraProtoMsg;
using collectives::CollectiveKind;

std::string file_of(const std::string& prefix, size_t rank, const char* ext = ".et") {
  return prefix + "." + std::to_string(rank) + ext;
}

pb::CollectiveCommType to_chakra(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce: return pb::ALL_REDUCE;
    case CollectiveKind::all_gather: return pb::ALL_GATHER;
    case CollectiveKind::reduce_scatter: return pb::REDUCE_SCATTER;
    case CollectiveKind::broadcast: return pb::BROADCAST;
    case CollectiveKind::reduce: return pb::REDUCE;
    case CollectiveKind::all_to_all: return pb::ALL_TO_ALL;
    case CollectiveKind::send_recv: return pb::BARRIER;
    case CollectiveKind::gather: return pb::GATHER;
    case CollectiveKind::scatter: return pb::SCATTER;
    case CollectiveKind::hypercube: return pb::ALL_GATHER;  // Chakra has no name for the algorithm
  }
  return pb::ALL_REDUCE;
}

CollectiveKind from_chakra(int64_t t) {
  switch (t) {
    case pb::ALL_GATHER: return CollectiveKind::all_gather;
    case pb::GATHER: return CollectiveKind::gather;
    case pb::REDUCE_SCATTER:
    case pb::REDUCE_SCATTER_BLOCK: return CollectiveKind::reduce_scatter;
    case pb::BROADCAST: return CollectiveKind::broadcast;
    case pb::SCATTER: return CollectiveKind::scatter;
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

// A numeric attribute's value; NaN for text that is not a number (real traces carry text
// attributes such as op_schema beside the numbers).
double number(const pb::AttributeProto& a) {
  switch (a.value_case()) {
    case pb::AttributeProto::kDoubleVal: return a.double_val();
    case pb::AttributeProto::kInt64Val: return static_cast<double>(a.int64_val());
    case pb::AttributeProto::kUint64Val: return static_cast<double>(a.uint64_val());
    case pb::AttributeProto::kInt32Val: return a.int32_val();
    case pb::AttributeProto::kUint32Val: return a.uint32_val();
    case pb::AttributeProto::kSint32Val: return a.sint32_val();
    case pb::AttributeProto::kSint64Val: return static_cast<double>(a.sint64_val());
    case pb::AttributeProto::kFixed32Val: return a.fixed32_val();
    case pb::AttributeProto::kFixed64Val: return static_cast<double>(a.fixed64_val());
    case pb::AttributeProto::kSfixed32Val: return a.sfixed32_val();
    case pb::AttributeProto::kSfixed64Val: return static_cast<double>(a.sfixed64_val());
    case pb::AttributeProto::kFloatVal: return a.float_val();
    case pb::AttributeProto::kBoolVal: return a.bool_val() ? 1 : 0;
    case pb::AttributeProto::kStringVal: {
      const std::string& t = a.string_val();
      double v = 0;
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      return ec == std::errc() && end == t.data() + t.size() ? v : std::numeric_limits<double>::quiet_NaN();
    }
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

// An attribute as text: strings as they are, numbers in decimal (pg_name is either).
std::string text(const pb::AttributeProto& a) {
  if (a.value_case() == pb::AttributeProto::kStringVal) return a.string_val();
  const double v = number(a);
  return std::isnan(v) ? std::string() : fmt::format("{}", v);
}

const pb::AttributeProto* find_attr(const pb::Node& n, std::string_view key) {
  for (const auto& a : n.attr()) {
    if (a.name() == key) return &a;
  }
  return nullptr;
}

double get(const pb::Node& n, std::string_view key, double fallback) {
  const pb::AttributeProto* a = find_attr(n, key);
  if (a == nullptr) return fallback;
  const double v = number(*a);
  return std::isnan(v) ? fallback : v;
}

std::string join(const std::vector<int>& v) {
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s << ',';
    s << v[i];
  }
  return s.str();
}

// "0,1,2" -> {0, 1, 2}; empty when an item is not a non-negative number.
std::vector<int> split_ints(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    int v = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || v < 0) return {};
    out.push_back(v);
  }
  return out;
}

void write_message(google::protobuf::io::CodedOutputStream& out, const google::protobuf::Message& m) {
  out.WriteVarint32(static_cast<uint32_t>(m.ByteSizeLong()));
  m.SerializeWithCachedSizes(&out);
}

// How reading one length-delimited message went: `truncated` is a message cut off by the end of
// the file (a trace whose writer was stopped), `corrupt` one whose bytes are all there but do not
// parse.
enum class ReadResult { ok, end, truncated, corrupt };

ReadResult read_message(google::protobuf::io::CodedInputStream& in, int64_t file_size, google::protobuf::Message& m) {
  const int64_t at = in.CurrentPosition();
  if (at >= file_size) return ReadResult::end;
  uint32_t size = 0;
  if (!in.ReadVarint32(&size)) return file_size - at < 5 ? ReadResult::truncated : ReadResult::corrupt;
  if (in.CurrentPosition() + static_cast<int64_t>(size) > file_size) return ReadResult::truncated;
  const auto limit = in.PushLimit(static_cast<int>(size));
  const bool ok = m.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
  in.PopLimit(limit);
  return ok ? ReadResult::ok : ReadResult::corrupt;
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

namespace {

// One rank's file, read whole: a node may depend on nodes later in the file.
struct RankFile {
  std::string path;
  pb::GlobalMetadata meta;
  std::vector<pb::Node> nodes;
};

// Chakra's JSON form, as its jsonizer writes it: the GlobalMetadata object, then one object a
// node, either as a JSON array (newer Chakra) or as objects one after another (older Chakra),
// in protobuf's JSON mapping (field names in either spelling, 64-bit numbers as strings).
void read_json_rank_file(std::istream& file, RankFile& f) {
  const std::string& path = f.path;
  std::vector<nlohmann::json> objects;
  try {
    for (;;) {
      file >> std::ws;
      if (file.peek() == std::char_traits<char>::eof()) break;
      nlohmann::json j;
      file >> j;
      if (j.is_array()) {
        for (auto& e : j) objects.push_back(std::move(e));
      } else {
        objects.push_back(std::move(j));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not Chakra JSON (" + e.what() + ")");
  }
  if (objects.empty()) throw std::runtime_error(path + ": an empty JSON file (expected Chakra's GlobalMetadata, then its nodes)");
  const nlohmann::json& first = objects.front();
  if (first.is_object() && first.contains("nodes") && (first.contains("schema") || first.contains("pid"))) {
    throw std::runtime_error(path + ": a PyTorch execution trace (the input of Chakra's converter), not a Chakra trace: "
                             "convert it with chakra_trace_link and chakra_converter first");
  }
  // GlobalMetadata holds a version and attributes; any other key is another JSON dialect, which
  // protobuf's reader (told to skip fields dtsim does not use) would read as an empty trace.
  if (first.is_object()) {
    for (const auto& [key, value] : first.items()) {
      if (key == "id" || key == "type" || key == "dataDeps" || key == "data_deps") {
        throw std::runtime_error(path + ": the first JSON object is a node; Chakra's JSON form starts with its GlobalMetadata");
      }
      if (key != "version" && key != "attr" && key != "attribute") {
        throw std::runtime_error(path + ": the first JSON object has \"" + key +
                                 "\", which Chakra's GlobalMetadata does not: not Chakra's JSON form (GlobalMetadata, then "
                                 "one object a node, as chakra_jsonizer writes it)");
      }
    }
  }
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // fields of Chakra's schema that dtsim does not read
  auto parse = [&](const nlohmann::json& j, google::protobuf::Message& m, size_t index) {
    const char* what = index == 0 ? "the GlobalMetadata (the first JSON object)" : "a Chakra node";
    if (!j.is_object()) {
      throw std::runtime_error(path + ": JSON value " + std::to_string(index + 1) + " is a " + j.type_name() + ", expected " + what);
    }
    const auto status = google::protobuf::util::JsonStringToMessage(j.dump(), &m, options);
    if (!status.ok()) {
      throw std::runtime_error(path + ": JSON object " + std::to_string(index + 1) + " is not " + what + ": " +
                               std::string(status.message()));
    }
  };
  parse(first, f.meta, 0);
  for (size_t i = 1; i < objects.size(); ++i) {
    pb::Node n;
    parse(objects[i], n, i);
    f.nodes.push_back(std::move(n));
  }
}

// Reads PATH (the binary form, or the JSON form when the file starts with '{' or '['); false
// when it does not exist.
bool read_rank_file(const std::string& path, RankFile& f) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  f.path = path;
  std::error_code size_error;
  const auto size = std::filesystem::file_size(path, size_error);
  if (size_error || size > static_cast<uintmax_t>(std::numeric_limits<int>::max())) {
    throw std::runtime_error(path + ": not a regular file of under 2 GiB");
  }
  if (const int c = file.peek(); c == '{' || c == '[') {
    read_json_rank_file(file, f);
    return true;
  }
  const auto file_size = static_cast<int64_t>(size);
  google::protobuf::io::IstreamInputStream stream(&file);
  google::protobuf::io::CodedInputStream in(&stream);
  in.SetTotalBytesLimit(std::numeric_limits<int>::max());
  const google::protobuf::LogSilencer quiet;  // a bad string would be logged to stderr besides
  pb::Node n;
  // Traces of Chakra's first versions (older ASTRA-sim examples) start with a node, no
  // GlobalMetadata: a first message that does not read as metadata, or reads as metadata only
  // through fields metadata does not have, and reads as a node of a known type, is that node.
  std::string first;
  uint32_t first_size = 0;
  const bool framed = in.ReadVarint32(&first_size) && static_cast<int64_t>(first_size) <= file_size &&
                      in.ReadString(&first, static_cast<int>(first_size));
  const bool metadata = framed && f.meta.ParseFromString(first) &&
                        (!f.meta.version().empty() || f.meta.GetReflection()->GetUnknownFields(f.meta).field_count() == 0);
  if (!metadata) {
    if (!framed || !n.ParseFromString(first) || n.type() == pb::INVALID_NODE) {
      throw std::runtime_error(path + ": no GlobalMetadata message (neither Chakra's binary form, a varint-length-"
                               "delimited GlobalMetadata then nodes, nor its JSON form)");
    }
    f.meta.Clear();
    f.nodes.push_back(std::move(n));
    n.Clear();
  }
  for (;;) {
    const int64_t at = in.CurrentPosition();
    const ReadResult r = read_message(in, file_size, n);
    if (r == ReadResult::end || r == ReadResult::truncated) break;  // a cut-off last node is dropped
    if (r == ReadResult::corrupt) {
      throw std::runtime_error(path + ": message " + std::to_string(f.nodes.size() + 2) + " (at byte " + std::to_string(at) +
                               ") is not a Chakra node");
    }
    f.nodes.push_back(std::move(n));
    n.Clear();
  }
  return true;
}

// PREFIX.N.et, else PREFIX.N.json; false when neither exists.
bool read_rank(const std::string& prefix, size_t rank, RankFile& f) {
  return read_rank_file(file_of(prefix, rank), f) || read_rank_file(file_of(prefix, rank, ".json"), f);
}

std::string node_name(const pb::Node& n) {
  return "node " + std::to_string(n.id()) + (n.name().empty() ? "" : " (" + n.name() + ")");
}

// The order to run a file's nodes in: file order wherever the dependencies allow, every node
// after the nodes its data_deps name, which must be nodes of the file. ctrl_deps are not
// dependencies, as in Chakra's reference feeder: with the data_deps, the ctrl_deps of a trace
// from PyTorch's converter form cycles of two nodes. A file with no data_deps at all (Chakra's
// first versions, older ASTRA-sim examples) ordered its nodes by ctrl_deps: there they are the
// dependencies (those on nodes the file lacks are dropped, as converters drop parents).
// Fills `deps` with each node's dependencies as indices into the file.
std::vector<uint32_t> dependency_order(const RankFile& f, std::vector<std::vector<uint32_t>>& deps) {
  const size_t n = f.nodes.size();
  std::unordered_map<uint64_t, uint32_t> index;
  index.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!index.emplace(f.nodes[i].id(), static_cast<uint32_t>(i)).second) {
      throw std::runtime_error(f.path + ": node id " + std::to_string(f.nodes[i].id()) + " appears twice");
    }
  }
  deps.assign(n, {});
  const bool by_ctrl = std::none_of(f.nodes.begin(), f.nodes.end(), [](const pb::Node& x) { return x.data_deps_size() > 0; });
  for (size_t i = 0; i < n; ++i) {
    if (by_ctrl) {
      for (uint64_t d : f.nodes[i].ctrl_deps()) {
        if (auto it = index.find(d); it != index.end()) deps[i].push_back(it->second);
      }
      continue;
    }
    for (uint64_t d : f.nodes[i].data_deps()) {
      auto it = index.find(d);
      if (it == index.end()) {
        throw std::runtime_error(f.path + ": " + node_name(f.nodes[i]) + " depends on node " + std::to_string(d) +
                                 ", which the file does not have");
      }
      deps[i].push_back(it->second);
    }
  }
  // Depth-first, iteratively: traces hold chains of 100k+ nodes.
  enum : uint8_t { unseen, open, placed };
  std::vector<uint8_t> state(n, unseen);
  std::vector<std::pair<uint32_t, uint32_t>> stack;  // (node, next dependency to visit)
  std::vector<uint32_t> order;
  order.reserve(n);
  for (uint32_t root = 0; root < n; ++root) {
    if (state[root] != unseen) continue;
    state[root] = open;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      const uint32_t v = stack.back().first;
      if (stack.back().second < deps[v].size()) {
        const uint32_t d = deps[v][stack.back().second++];
        if (state[d] == unseen) {
          state[d] = open;
          stack.emplace_back(d, 0);
        } else if (state[d] == open) {
          throw std::runtime_error(f.path + ": " + node_name(f.nodes[v]) + " depends on " + node_name(f.nodes[d]) +
                                   ", which depends back on it (a dependency cycle)");
        }
      } else {
        state[v] = placed;
        order.push_back(v);
        stack.pop_back();
      }
    }
  }
  return order;
}

// A whole number in [lo, hi], as a trace must hold it; throws naming the place (where(), built
// only then: the readers run once per attribute of every node) otherwise.
template <class Where>
int64_t checked_whole(const Where& where, std::string_view key, double v, int64_t lo, int64_t hi) {
  if (!(v >= static_cast<double>(lo) && v <= static_cast<double>(hi)) || v != std::floor(v)) {
    throw std::runtime_error(where() + " has " + std::string(key) + " " + fmt::format("{}", v) +
                             ", expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return static_cast<int64_t>(v);
}

// A non-negative amount (FLOPs) up to 1e30; throws naming the place otherwise.
template <class Where>
double checked_amount(const Where& where, std::string_view key, double v) {
  if (!(v >= 0 && v <= 1e30)) {
    throw std::runtime_error(where() + " has " + std::string(key) + " " + fmt::format("{}", v) +
                             ", expected a number from 0 to 1e30");
  }
  return v;
}

// A node's whole-number attribute: `fallback` when absent.
int64_t whole(const RankFile& f, const pb::Node& n, std::string_view key, int64_t fallback, int64_t lo, int64_t hi) {
  const pb::AttributeProto* a = find_attr(n, key);
  if (a == nullptr) return fallback;
  return checked_whole([&] { return f.path + ": " + node_name(n); }, key, number(*a), lo, hi);
}

// A node's amount: `fallback` when absent.
double amount(const RankFile& f, const pb::Node& n, std::string_view key, double fallback) {
  const pb::AttributeProto* a = find_attr(n, key);
  return a == nullptr ? fallback : checked_amount([&] { return f.path + ": " + node_name(n); }, key, number(*a));
}

constexpr int64_t kMaxBytes = int64_t{1} << 50;  // a petabyte: more in one op is a broken trace
constexpr int64_t kMaxDim = int64_t{1} << 40;
constexpr int64_t kMaxRank = 1 << 24;

}  // namespace

Workload read_chakra(const std::string& prefix) {
  Workload w;
  // The name stays empty unless the trace carries one (dtsim.name): the caller names the rest.
  // Sends and receives pair in order per (sender, receiver, tag), as MPI matches messages: the
  // k-th receive a rank posts from a sender with a tag takes the k-th such send, in each rank's
  // run order. A trace that tags every message alike (ASTRA-sim's) pairs by order alone.
  struct Endpoint {
    int rank;
    uint32_t op;
  };
  using Channel = std::tuple<int, int, int64_t>;  // (sender, receiver, tag)
  std::map<Channel, std::vector<Endpoint>> sends, receives;
  std::map<int, int> comm_of_trace;  // a comm id in dtsim attributes -> Workload comm
  // Collectives named by a process group (PyTorch's pg_name): the group's members are the ranks
  // whose traces issue collectives on it, resolved once every file is read.
  struct PendingGroup {
    int rank;
    uint32_t op;
    std::string group;
  };
  std::vector<PendingGroup> grouped;
  std::map<std::string, std::vector<int>> group_members;

  for (size_t r = 0;; ++r) {
    RankFile f;
    if (!read_rank(prefix, r, f)) {
      if (r == 0) throw std::runtime_error("cannot open " + file_of(prefix, r) + " (nor " + file_of(prefix, r, ".json") + ")");
      break;
    }
    const std::string& path = f.path;
    RankGraph g;
    g.gpu = static_cast<int>(r);
    for (const auto& a : f.meta.attr()) {
      const std::string& k = a.name();
      auto where = [&] { return path + ": GlobalMetadata"; };
      auto int_of = [&](int64_t lo) { return static_cast<int>(checked_whole(where, k, number(a), lo, kMaxRank)); };
      if (k == "dtsim.name") w.name = a.string_val();
      else if (k == "dtsim.total_gpus") w.total_gpus = int_of(0);
      else if (k == "dtsim.model_flops") w.model_flops = checked_amount(where, k, number(a));
      else if (k == "dtsim.tokens") w.tokens = static_cast<double>(checked_whole(where, k, number(a), 0, int64_t{1} << 62));
      else if (k == "dtsim.gpu") g.gpu = int_of(0);
      else if (k == "dtsim.represents") g.represents = int_of(1);
      else if (k == "dtsim.stage") g.stage = int_of(0);
      else if (r == 0 && k.rfind("dtsim.comm.", 0) == 0) {
        const std::string id = k.substr(11);
        int c = -1;
        const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), c);
        const std::vector<int> ranks = split_ints(a.string_val());
        if (ec != std::errc() || end != id.data() + id.size() || c < 0 || ranks.empty()) {
          throw std::runtime_error(where() + " has " + k + " \"" + a.string_val() +
                                   "\", expected dtsim.comm.ID with ID a number and the value a list of GPU numbers");
        }
        comm_of_trace[c] = w.add_comm({ranks});
      }
    }

    std::vector<std::vector<uint32_t>> file_deps;
    const std::vector<uint32_t> order = dependency_order(f, file_deps);
    std::vector<uint32_t> op_of(f.nodes.size());
    std::vector<uint32_t> deps;
    for (uint32_t at : order) {
      const pb::Node& n = f.nodes[at];
      Op op;
      // PyTorch's CPU operators (the converter marks them is_cpu_op) and metadata run on the
      // host thread, not on a GPU stream.
      const bool host = get(n, "is_cpu_op", 0) != 0 || n.type() == pb::METADATA_NODE;
      const int stream = static_cast<int>(whole(f, n, "dtsim.stream", -1, 0, kStreamCount - 1));
      op.repeat = static_cast<int32_t>(whole(f, n, "dtsim.repeat", 1, 1, 1 << 20));
      if (find_attr(n, "dtsim.measured_ps")) {
        op.measured = Time::ps(whole(f, n, "dtsim.measured_ps", 0, -1, int64_t{1} << 62));
      } else if (n.duration_micros() > 0) {
        op.measured = Time::us(static_cast<double>(n.duration_micros()));
      }
      switch (n.type()) {
        case pb::COMP_NODE:
          op.kind = OpKind::compute;
          op.stream = host ? Stream::host : Stream::compute;
          op.compute = static_cast<ComputeKind>(whole(f, n, "dtsim.compute_kind", static_cast<int>(ComputeKind::gemm), 0,
                                                      static_cast<int>(ComputeKind::measured)));
          op.dtype = static_cast<topology::Dtype>(
              whole(f, n, "dtsim.dtype", static_cast<int>(topology::Dtype::bf16), 0, static_cast<int>(topology::Dtype::fp4)));
          op.flops = amount(f, n, "dtsim.flops", amount(f, n, "num_ops", 0));
          op.bytes = Bytes(whole(f, n, "tensor_size", 0, 0, kMaxBytes));
          op.m = whole(f, n, "dtsim.m", 0, 0, kMaxDim);
          op.n = whole(f, n, "dtsim.n", 0, 0, kMaxDim);
          op.k = whole(f, n, "dtsim.k", 0, 0, kMaxDim);
          op.batch = whole(f, n, "dtsim.batch", 1, 1, kMaxDim);
          op.causal = get(n, "dtsim.causal", 1) != 0;
          if (host || (!op.has_measured() && op.flops == 0 && op.bytes.count() == 0)) {
            op.compute = ComputeKind::measured;
            if (!op.has_measured()) op.measured = Time::zero();
          }
          break;
        case pb::COMM_COLL_NODE: {
          op.kind = OpKind::collective;
          op.stream = Stream::dp;
          op.collective = from_chakra(whole(f, n, "comm_type", pb::ALL_REDUCE, 0, pb::BARRIER));
          op.bytes = Bytes(whole(f, n, "comm_size", 0, 0, kMaxBytes));
          auto c = comm_of_trace.find(static_cast<int>(whole(f, n, "dtsim.comm", -1, -1, kMaxRank)));
          op.comm = c == comm_of_trace.end() ? -1 : c->second;
          if (op.comm < 0) {
            if (const pb::AttributeProto* pg = find_attr(n, "pg_name")) {
              const std::string group = text(*pg);
              grouped.push_back({static_cast<int>(r), static_cast<uint32_t>(g.ops.size()), group});
              std::vector<int>& m = group_members[group];
              if (m.empty() || m.back() != g.gpu) m.push_back(g.gpu);
            }
          }
          break;
        }
        case pb::COMM_SEND_NODE:
        case pb::COMM_RECV_NODE: {
          const bool send = n.type() == pb::COMM_SEND_NODE;
          op.kind = send ? OpKind::send : OpKind::recv;
          op.stream = Stream::pp;
          op.collective = CollectiveKind::send_recv;
          op.bytes = Bytes(whole(f, n, "comm_size", 0, 0, kMaxBytes));
          auto c = comm_of_trace.find(static_cast<int>(whole(f, n, "dtsim.comm", -1, -1, kMaxRank)));
          op.comm = c == comm_of_trace.end() ? -1 : c->second;
          const int self = static_cast<int>(r);
          const int src = static_cast<int>(whole(f, n, "comm_src", send ? self : -1, 0, kMaxRank));
          const int dst = static_cast<int>(whole(f, n, "comm_dst", send ? -1 : self, 0, kMaxRank));
          if ((send ? dst : src) < 0) {
            throw std::runtime_error(path + ": " + node_name(n) + " is a " + (send ? "send without comm_dst" : "receive without comm_src") +
                                     ": its peer rank is needed to match it");
          }
          const int64_t tag = whole(f, n, "comm_tag", 0, 0, int64_t{1} << 62);
          if (send) {
            op.peer_rank = dst;
            sends[{self, dst, tag}].push_back({self, static_cast<uint32_t>(g.ops.size())});
          } else {
            receives[{src, self, tag}].push_back({self, static_cast<uint32_t>(g.ops.size())});
          }
          // The pair's communicator names its sender, then its receiver, as the generators' do: the
          // network runs its send from the first to the second, and each direction on its own.
          if (op.comm < 0) op.comm = w.add_comm({{src, dst}});
          break;
        }
        default:
          op.kind = OpKind::compute;
          op.stream = host ? Stream::host : Stream::compute;
          if (!op.has_measured()) op.measured = Time::zero();
          break;
      }
      if (stream >= 0) op.stream = static_cast<Stream>(stream);
      op.label = g.label(n.name());
      deps.clear();
      for (uint32_t d : file_deps[at]) deps.push_back(op_of[d]);
      op_of[at] = static_cast<uint32_t>(g.ops.size());
      g.add(op, deps);
    }
    w.ranks.push_back(std::move(g));
  }
  for (const auto& [channel, list] : sends) {
    const auto [from, to, tag] = channel;
    if (to >= static_cast<int>(w.ranks.size())) {
      throw std::runtime_error(file_of(prefix, static_cast<size_t>(from)) + ": a send (tag " + std::to_string(tag) + ") to rank " +
                               std::to_string(to) + ", which has no trace file");
    }
  }
  auto unmatched = [&](const Channel& c, size_t sent, size_t received) {
    const auto [from, to, tag] = c;
    return std::runtime_error(file_of(prefix, static_cast<size_t>(sent > received ? from : to)) + ": rank " +
                              std::to_string(from) + " sends " + std::to_string(sent) + " message" + (sent == 1 ? "" : "s") +
                              " with tag " + std::to_string(tag) + " to rank " + std::to_string(to) + ", which receives " +
                              std::to_string(received) + " (" + (sent > received ? "a send" : "a receive") +
                              " has no match)");
  };
  for (const auto& [channel, list] : receives) {
    auto it = sends.find(channel);
    const size_t sent = it == sends.end() ? 0 : it->second.size();
    if (sent != list.size()) throw unmatched(channel, sent, list.size());
    for (size_t k = 0; k < list.size(); ++k) {
      Op& op = w.ranks[static_cast<size_t>(list[k].rank)].ops[list[k].op];
      op.peer_rank = std::get<0>(channel);
      op.peer_op = static_cast<int32_t>(it->second[k].op);
    }
  }
  for (const auto& [channel, list] : sends) {
    if (!receives.count(channel)) throw unmatched(channel, list.size(), 0);
  }
  for (auto& [group, members] : group_members) {
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
  }
  std::map<std::string, int> comm_of_group;
  for (const PendingGroup& p : grouped) {
    auto [it, fresh] = comm_of_group.emplace(p.group, -1);
    if (fresh) it->second = w.add_comm({group_members[p.group]});
    w.ranks[p.rank].ops[p.op].comm = it->second;
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
