#include "workloads/chakra_trace.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "chakra_et.pb.h"
#include "topology/catalog.h"
#include "workloads/alpha_beta_model.h"
#include "workloads/megatron_generator.h"
#include "workloads/training.h"

namespace dtsim::workloads {
namespace {

std::string temp_prefix(const char* name) {
  const auto dir = std::filesystem::temp_directory_path() / ("dtsim_chakra_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

TrainingSpec pipelined() {
  TrainingSpec t;
  t.model.preset = "llama3-8b";
  t.parallel.tp = 2;
  t.parallel.pp = 4;
  t.parallel.dp = 0;
  t.parallel.vp = 2;
  t.parallel.zero = 1;
  t.batch.global = 16;
  return t;
}

TEST(ChakraTrace, WrittenAndReadBackGivesTheSameIterationTime) {
  topology::ClusterSpec c = *topology::find_node_preset("hgx-h100");
  c.nodes = 2;
  const Workload w = generate_megatron(pipelined(), c);
  const std::string prefix = temp_prefix("rank");
  write_chakra(w, prefix);
  const Workload back = read_chakra(prefix);
  ASSERT_EQ(back.ranks.size(), w.ranks.size());
  EXPECT_EQ(back.op_count(), w.op_count());
  AlphaBetaCollectiveModel comm(c);
  const ComputeModel cm(c.gpu);
  const TrainingResult a = evaluate_workload(w, c, comm, topology::Dtype::bf16, cm);
  const TrainingResult b = evaluate_workload(back, c, comm, topology::Dtype::bf16, cm);
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_EQ(a.tflops_per_gpu, b.tflops_per_gpu);
}

// CPU offload's copies are host-stream ops with measured durations: they survive too.
TEST(ChakraTrace, CpuOffloadCopiesSurviveTheRoundTrip) {
  topology::ClusterSpec c = *topology::find_node_preset("gb200-nvl72");
  c.nodes = 1;
  c.gpus_per_node = 8;
  TrainingSpec t = pipelined();
  t.parallel.pp = 1;
  t.parallel.vp = 1;
  t.cpu_offload_layers = 8;
  const Workload w = generate_megatron(t, c);
  const std::string prefix = temp_prefix("offload");
  write_chakra(w, prefix);
  const Workload back = read_chakra(prefix);
  AlphaBetaCollectiveModel comm(c);
  const ComputeModel cm(c.gpu);
  const TrainingResult a = evaluate_workload(w, c, comm, topology::Dtype::bf16, cm);
  const TrainingResult b = evaluate_workload(back, c, comm, topology::Dtype::bf16, cm);
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  int host_ops = 0;
  for (const Op& op : back.ranks[0].ops) host_ops += op.stream == Stream::host ? 1 : 0;
  EXPECT_GT(host_ops, 0);
}

TEST(ChakraTrace, MeasuredDurationsSurviveTheRoundTrip) {
  Workload w;
  w.total_gpus = 1;
  w.ranks.resize(1);
  Op op;
  op.measured = Time::us(12.5);
  w.ranks[0].add(op);
  const std::string prefix = temp_prefix("measured");
  write_chakra(w, prefix);
  EXPECT_EQ(read_chakra(prefix).ranks[0].ops[0].measured, Time::us(12.5));
}

TEST(ChakraTrace, MissingFirstFileIsAnError) {
  EXPECT_THROW(read_chakra(temp_prefix("nothing_here")), std::runtime_error);
}

TEST(ChakraTrace, TruncatedNodeEndsTheFileWithoutInventingOps) {
  Workload w;
  w.total_gpus = 1;
  w.ranks.resize(1);
  Op op;
  op.measured = Time::us(1);
  w.ranks[0].add(op);
  w.ranks[0].add(op, {0});
  const std::string prefix = temp_prefix("truncated");
  write_chakra(w, prefix);
  const auto path = prefix + ".0.et";
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  EXPECT_EQ(read_chakra(prefix).ranks[0].ops.size(), 1u);
}

// Traces as other tools write them (MLCommons' PyTorch converter): no dtsim attributes, CPU
// operators beside GPU kernels, process groups by name, nodes not in dependency order.
namespace pb = ChakraProtoMsg;

pb::Node node(uint64_t id, pb::NodeType type, uint64_t micros, std::vector<uint64_t> data_deps = {}) {
  pb::Node n;
  n.set_id(id);
  n.set_name("op" + std::to_string(id));
  n.set_type(type);
  n.set_duration_micros(micros);
  for (uint64_t d : data_deps) n.add_data_deps(d);
  return n;
}

void set(pb::Node& n, const char* name, bool v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_bool_val(v);
}
void set(pb::Node& n, const char* name, int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}
void set(pb::Node& n, const char* name, const std::string& v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_string_val(v);
}

pb::Node cpu_op(uint64_t id, uint64_t micros, std::vector<uint64_t> deps = {}) {
  pb::Node n = node(id, pb::COMP_NODE, micros, std::move(deps));
  set(n, "is_cpu_op", true);
  set(n, "op_schema", std::string("aten::mm(Tensor self, Tensor mat2) -> Tensor"));
  return n;
}

pb::Node kernel(uint64_t id, uint64_t micros, std::vector<uint64_t> deps = {}) {
  pb::Node n = node(id, pb::COMP_NODE, micros, std::move(deps));
  set(n, "is_cpu_op", false);
  set(n, "stream", int64_t{7});
  return n;
}

pb::Node collective(uint64_t id, pb::CollectiveCommType type, int64_t bytes,
                    const std::string& group, std::vector<uint64_t> deps = {}) {
  pb::Node n = node(id, pb::COMM_COLL_NODE, 0, std::move(deps));
  set(n, "comm_type", int64_t{type});
  set(n, "comm_size", bytes);
  set(n, "pg_name", group);
  return n;
}

pb::Node all_reduce(uint64_t id, int64_t bytes, const std::string& group,
                    std::vector<uint64_t> deps = {}) {
  return collective(id, pb::ALL_REDUCE, bytes, group, std::move(deps));
}

void write_rank(const std::string& prefix, int rank, const std::vector<pb::Node>& nodes) {
  std::ofstream file(prefix + "." + std::to_string(rank) + ".et", std::ios::binary | std::ios::trunc);
  google::protobuf::io::OstreamOutputStream stream(&file);
  google::protobuf::io::CodedOutputStream out(&stream);
  auto put = [&](const google::protobuf::Message& m) {
    out.WriteVarint32(static_cast<uint32_t>(m.ByteSizeLong()));
    m.SerializeWithCachedSizes(&out);
  };
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  auto* schema = meta.add_attr();
  schema->set_name("schema");
  schema->set_string_val("1.1.1-chakra.0.0.4");
  put(meta);
  for (const pb::Node& n : nodes) put(n);
}

TrainingResult run(const Workload& w) {
  topology::ClusterSpec c = *topology::find_node_preset("hgx-h100");
  AlphaBetaCollectiveModel comm(c);
  return evaluate_workload(w, c, comm, topology::Dtype::bf16, ComputeModel(c.gpu));
}

TEST(ChakraForeignTrace, CpuOperatorsRunOnTheHostBesideTheGpu) {
  // Host: A (5 us) then B (5 us). GPU: K1 (20 us) after A, K2 (20 us) after B. The host runs B
  // while K1 runs, so the iteration is 5 + 20 + 20 us; on one stream it would be 50 us.
  const std::string prefix = temp_prefix("host");
  write_rank(prefix, 0, {cpu_op(1, 5), kernel(2, 20, {1}), cpu_op(3, 5, {1}), kernel(4, 20, {3})});
  const Workload w = read_chakra(prefix);
  ASSERT_EQ(w.ranks[0].ops.size(), 4u);
  EXPECT_EQ(w.ranks[0].ops[0].stream, Stream::host);
  EXPECT_EQ(w.ranks[0].ops[1].stream, Stream::compute);
  const TrainingResult r = run(w);
  EXPECT_NEAR(r.iteration_time_s, 45e-6, 1e-12);
  // Only the first 5 us, when the GPU waits for the host, are not compute: they are host wait,
  // not pipeline bubble.
  EXPECT_NEAR(r.breakdown.compute.seconds(), 40e-6, 1e-12);
  EXPECT_NEAR(r.breakdown.host.seconds(), 5e-6, 1e-12);
  EXPECT_EQ(r.breakdown.bubble, Time::zero());
  EXPECT_NEAR(r.critical_split.host.seconds(), 5e-6, 1e-12);
}

TEST(ChakraForeignTrace, NodesRunAfterTheirDependenciesWhateverTheFileOrder) {
  // A CPU operator that waits for a kernel (a synchronisation) names a later node.
  const std::string prefix = temp_prefix("order");
  write_rank(prefix, 0, {cpu_op(1, 5, {3}), kernel(2, 10), kernel(3, 10, {2})});
  const Workload w = read_chakra(prefix);
  const RankGraph& g = w.ranks[0];
  ASSERT_EQ(g.ops.size(), 3u);
  EXPECT_EQ(g.labels[g.ops[0].label], "op2");
  EXPECT_EQ(g.labels[g.ops[2].label], "op1");
  EXPECT_NEAR(run(w).iteration_time_s, 25e-6, 1e-12);
}

TEST(ChakraForeignTrace, ProcessGroupsHoldTheRanksThatUseThem) {
  const std::string prefix = temp_prefix("groups");
  for (int r = 0; r < 4; ++r) {
    write_rank(prefix, r, {kernel(1, 10), all_reduce(2, 1 << 20, r < 2 ? "1" : "2", {1}),
                           all_reduce(3, 1 << 20, "0", {2})});
  }
  const Workload w = read_chakra(prefix);
  ASSERT_EQ(w.ranks.size(), 4u);
  EXPECT_EQ(w.comms[w.ranks[0].ops[1].comm].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(w.comms[w.ranks[3].ops[1].comm].ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(w.comms[w.ranks[2].ops[2].comm].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(w.ranks[0].ops[2].comm, w.ranks[3].ops[2].comm);
  EXPECT_GT(run(w).iteration_time_s, 10e-6);
}

// Chakra's GATHER and SCATTER are their own operations (they were read as all_gather and
// broadcast, which move n times and once the bytes to every rank).
TEST(ChakraForeignTrace, GatherAndScatterAreReadAsThemselves) {
  const std::string prefix = temp_prefix("rooted");
  for (int r = 0; r < 2; ++r) {
    write_rank(
        prefix, r,
        {collective(1, pb::GATHER, 1 << 20, "0"), collective(2, pb::SCATTER, 1 << 20, "0", {1})});
  }
  const Workload w = read_chakra(prefix);
  EXPECT_EQ(w.ranks[0].ops[0].collective, collectives::CollectiveKind::gather);
  EXPECT_EQ(w.ranks[1].ops[1].collective, collectives::CollectiveKind::scatter);
  const std::string back = temp_prefix("rooted_back");
  write_chakra(w, back);
  EXPECT_EQ(read_chakra(back).ranks[0].ops[1].collective, collectives::CollectiveKind::scatter);
}

TEST(ChakraForeignTrace, BrokenDependenciesAreErrorsNamingTheNode) {
  const std::string prefix = temp_prefix("broken");
  write_rank(prefix, 0, {kernel(1, 10, {2}), kernel(2, 10, {1})});
  try {
    read_chakra(prefix);
    FAIL() << "a dependency cycle was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("dependency cycle"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("node 1 (op1)"), std::string::npos) << e.what();
  }
  write_rank(prefix, 0, {kernel(1, 10, {9})});
  EXPECT_THROW(
      {
        try {
          read_chakra(prefix);
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("depends on node 9, which the file does not have"), std::string::npos)
              << e.what();
          throw;
        }
      },
      std::runtime_error);
}

TEST(ChakraForeignTrace, SendWithoutItsPeerIsAnError) {
  const std::string prefix = temp_prefix("send");
  write_rank(prefix, 0, {node(1, pb::COMM_SEND_NODE, 0)});
  EXPECT_THROW(read_chakra(prefix), std::runtime_error);
}

TEST(ChakraForeignTrace, OutOfRangeDtsimAttributesAreErrors) {
  const std::string prefix = temp_prefix("range");
  pb::Node n = kernel(1, 10);
  set(n, "dtsim.stream", int64_t{99});
  write_rank(prefix, 0, {n});
  EXPECT_THROW(read_chakra(prefix), std::runtime_error);
}

TEST(ChakraForeignTrace, MoreRanksThanTheClusterHasGpusIsRefused) {
  const std::string prefix = temp_prefix("misfit");
  for (int r = 0; r < 4; ++r) write_rank(prefix, r, {all_reduce(1, 1 << 20, "0")});
  const Workload w = read_chakra(prefix);
  topology::ClusterSpec two = *topology::find_node_preset("hgx-h100");
  two.nodes = 1;
  two.gpus_per_node = 2;
  ASSERT_EQ(w.ranks.size(), 4u);
  ASSERT_EQ(two.total_gpus(), 2);
  EXPECT_EQ(w.misfit(two.total_gpus()), "the workload runs on 4 GPUs but the cluster has 2");
  EXPECT_EQ(w.misfit(8), "");
  AlphaBetaCollectiveModel comm(two);
  EXPECT_THROW(evaluate_workload(w, two, comm, topology::Dtype::bf16, ComputeModel(two.gpu)), std::invalid_argument);
}

pb::Node message(uint64_t id, bool send, int peer, int self, int64_t bytes, std::vector<uint64_t> deps = {},
                 int64_t tag = -1) {
  pb::Node n = node(id, send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE, 0, std::move(deps));
  set(n, "comm_size", bytes);
  set(n, "comm_src", int64_t{send ? self : peer});
  set(n, "comm_dst", int64_t{send ? peer : self});
  if (tag >= 0) set(n, "comm_tag", tag);
  return n;
}

// PyTorch's converter writes ctrl_deps that, with the data_deps, close two-node cycles (a CPU
// operator and the kernel it launched name each other). Chakra's feeder waits on data_deps only.
TEST(ChakraForeignTrace, ControlDependenciesAreNotWaitedOn) {
  const std::string prefix = temp_prefix("ctrl");
  pb::Node launch = cpu_op(1, 5);
  launch.add_ctrl_deps(2);  // the kernel it launched, which waits on it through data_deps
  write_rank(prefix, 0, {launch, kernel(2, 20, {1}), kernel(3, 20, {2})});
  const Workload w = read_chakra(prefix);
  ASSERT_EQ(w.ranks[0].ops.size(), 3u);
  EXPECT_NEAR(run(w).iteration_time_s, 45e-6, 1e-12);
}

// ASTRA-sim's custom collective traces tag every message alike: the k-th receive from a sender
// takes the sender's k-th send, as MPI pairs messages.
TEST(ChakraForeignTrace, SendsWithOneTagPairInOrder) {
  const std::string prefix = temp_prefix("sametag");
  const int64_t kib = 1024;
  for (int tag : {-1, 0, 7}) {
    write_rank(prefix, 0, {message(1, true, 1, 0, 1 * kib, {}, tag), message(2, true, 1, 0, 64 * kib, {1}, tag),
                           message(3, true, 1, 0, 4096 * kib, {2}, tag)});
    write_rank(prefix, 1, {message(1, false, 0, 1, 1 * kib, {}, tag), message(2, false, 0, 1, 64 * kib, {1}, tag),
                           message(3, false, 0, 1, 4096 * kib, {2}, tag)});
    const Workload w = read_chakra(prefix);
    ASSERT_EQ(w.ranks.size(), 2u);
    for (int k = 0; k < 3; ++k) {
      const Op& recv = w.ranks[1].ops[static_cast<size_t>(k)];
      EXPECT_EQ(recv.peer_rank, 0);
      EXPECT_EQ(recv.peer_op, k) << "tag " << tag;
      EXPECT_EQ(w.ranks[0].ops[static_cast<size_t>(recv.peer_op)].bytes, recv.bytes);
    }
    EXPECT_GT(run(w).iteration_time_s, 0);
  }
  // One send more than receives: named, not a deadlock.
  write_rank(prefix, 0, {message(1, true, 1, 0, kib), message(2, true, 1, 0, kib, {1})});
  write_rank(prefix, 1, {message(1, false, 0, 1, kib)});
  try {
    read_chakra(prefix);
    FAIL() << "an unmatched send was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 sends 2 messages with tag 0 to rank 1, which receives 1"),
              std::string::npos)
        << e.what();
  }
}

std::string json_of(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions o;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(m, &out, o).ok());
  return out;
}

// Chakra's jsonizer: older versions write the messages one after another, newer ones as an array.
TEST(ChakraForeignTrace, JsonFormReadsAsTheBinaryForm) {
  const std::string binary = temp_prefix("bin");
  const std::vector<pb::Node> nodes = {cpu_op(1, 5), kernel(2, 20, {1}), all_reduce(3, 8 << 20, "0", {2}),
                                       cpu_op(4, 5, {1}), kernel(5, 20, {4, 3})};
  write_rank(binary, 0, nodes);
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  const Workload a = read_chakra(binary);
  for (bool array : {false, true}) {
    const std::string prefix = temp_prefix(array ? "json_array" : "json_seq");
    std::ofstream out(prefix + ".0.json");
    out << (array ? "[" : "") << json_of(meta);
    for (const pb::Node& n : nodes) out << (array ? ",\n" : "\n") << json_of(n);
    out << (array ? "]" : "") << "\n";
    out.close();
    const Workload b = read_chakra(prefix);
    ASSERT_EQ(b.ranks.size(), 1u);
    ASSERT_EQ(b.ranks[0].ops.size(), a.ranks[0].ops.size());
    EXPECT_EQ(run(b).iteration_time_s, run(a).iteration_time_s);
  }
}

TEST(ChakraForeignTrace, JsonThatIsNotChakrasIsNamed) {
  auto error_of = [](const std::string& text) {
    const std::string prefix = temp_prefix("notchakra");
    std::ofstream(prefix + ".0.json") << text;
    std::filesystem::remove(prefix + ".0.et");
    try {
      read_chakra(prefix);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error_of(R"({"schema": "1.0.1", "pid": 7, "time": "2024", "nodes": [{"id": 1, "name": "[pytorch|profiler|execution_trace|process]"}]})")
                .find("a PyTorch execution trace"),
            std::string::npos);
  EXPECT_NE(error_of(R"([{"id": "1", "type": "COMP_NODE", "dataDeps": []}])").find("starts with its GlobalMetadata"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"version": "0.0.4"} {"id": "x"})").find("is not a Chakra node"), std::string::npos);
  EXPECT_NE(error_of(R"({"version": )").find("not Chakra JSON"), std::string::npos);
}

TEST(ChakraForeignTrace, ACorruptNodeBeforeTheEndIsAnErrorNotTheEndOfTheFile) {
  const std::string prefix = temp_prefix("corrupt");
  write_rank(prefix, 0, {kernel(1, 10), kernel(2, 10, {1})});
  const auto path = prefix + ".0.et";
  // Overwrite the first node's bytes after its length with a field of wire type 7 (invalid).
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  auto* schema = meta.add_attr();
  schema->set_name("schema");
  schema->set_string_val("1.1.1-chakra.0.0.4");
  f.seekp(static_cast<std::streamoff>(1 + meta.ByteSizeLong() + 1));
  f.put(static_cast<char>(0x0f));
  f.close();
  try {
    read_chakra(prefix);
    FAIL() << "a corrupt node was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("message 2 (at byte"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dtsim::workloads
