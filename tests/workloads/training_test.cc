#include "workloads/training.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "report/training_writer.h"
#include "topology/catalog.h"
#include "workloads/alpha_beta_model.h"

namespace dtsim::workloads {
namespace {

topology::ClusterSpec cluster(int nodes) {
  topology::ClusterSpec c = *topology::find_node_preset("hgx-h100");
  c.nodes = nodes;
  return c;
}

TrainingSpec llama(int tp, int pp, int global) {
  TrainingSpec t;
  t.model.preset = "llama3-8b";
  t.parallel.tp = tp;
  t.parallel.pp = pp;
  t.parallel.zero = 1;
  t.parallel.dp = 0;  // the rest of the cluster
  t.batch.global = global;
  return t;
}

TEST(Training, HeadlineFiguresAreConsistent) {
  const auto c = cluster(2);
  AlphaBetaCollectiveModel comm(c);
  const TrainingResult r = run_training(llama(2, 2, 32), c, comm);
  ASSERT_GT(r.iteration_time_s, 0);
  EXPECT_NEAR(r.tokens_per_s_per_gpu, 32.0 * 8192 / r.iteration_time_s / 16, 1e-6 * r.tokens_per_s_per_gpu);
  EXPECT_NEAR(r.mfu, r.tflops_per_gpu * 1e12 / 989.4e12, 1e-9);
  EXPECT_GT(r.mfu, 0.2);
  EXPECT_LT(r.mfu, 0.7);
}

// CPU offload's copies run beside compute on the host link. Llama 3 70B, 16k tokens a
// microbatch, 40 of 80 layers offloaded: a layer's activations cross NVLink-C2C (GB200, 225 GB/s
// a GPU each way) well inside the next layer's forward pass (+0.6%), but PCIe Gen5 (H100, 50 GB/s)
// more slowly than the forward pass computes layers, which then waits on the copies (+10.7%).
TEST(Training, CpuOffloadHidesOnGraceButNotOnPcie) {
  for (const char* node : {"gb200-nvl72", "hgx-h100"}) {
    topology::ClusterSpec c = *topology::find_node_preset(node);
    c.nodes = 1;
    c.gpus_per_node = 8;
    AlphaBetaCollectiveModel comm(c);
    TrainingSpec t = llama(1, 1, 16);
    t.model.preset = "llama3-70b";
    t.batch.micro = 2;
    const TrainingResult plain = run_training(t, c, comm);
    t.cpu_offload_layers = 40;
    const TrainingResult offload = run_training(t, c, comm);
    ASSERT_TRUE(plain.memory && offload.memory);
    EXPECT_LT(offload.memory->activations, 0.55 * plain.memory->activations) << node;
    const double cost = offload.iteration_time_s / plain.iteration_time_s - 1;
    // The time the GPU waits on a copy is reported as waiting on the host, not as bubble (pp 1
    // has none); a run without offload waits on nothing.
    EXPECT_EQ(plain.breakdown.host, Time::zero()) << node;
    EXPECT_EQ(offload.breakdown.bubble, plain.breakdown.bubble) << node;
    if (std::string(node) == "gb200-nvl72") {
      EXPECT_LT(cost, 0.02) << node;
      EXPECT_LT(offload.breakdown.host.seconds(), 0.02 * offload.iteration_time_s) << node;
    } else {
      EXPECT_GT(cost, 0.05) << node;
      EXPECT_GT(offload.breakdown.host.seconds(), 0.5 * (offload.iteration_time_s - plain.iteration_time_s)) << node;
    }
  }
}

TEST(Training, PipelineBubbleShrinksWithMoreMicrobatches) {
  const auto c = cluster(1);
  AlphaBetaCollectiveModel comm(c);
  const TrainingResult few = run_training(llama(1, 4, 8), c, comm);    // 4 microbatches
  const TrainingResult many = run_training(llama(1, 4, 64), c, comm);  // 32 microbatches
  EXPECT_GT(few.breakdown.bubble.seconds() / few.iteration_time_s,
            2 * many.breakdown.bubble.seconds() / many.iteration_time_s);
}

TEST(Training, InterleavingReducesTheBubble) {
  const auto c = cluster(1);
  AlphaBetaCollectiveModel comm(c);
  TrainingSpec plain = llama(1, 4, 8);
  TrainingSpec inter = plain;
  inter.parallel.vp = 2;
  EXPECT_LT(run_training(inter, c, comm).breakdown.bubble, run_training(plain, c, comm).breakdown.bubble);
}

TEST(Training, TensorParallelAcrossNodesExposesMoreCommunication) {
  const auto c = cluster(2);
  AlphaBetaCollectiveModel comm(c);
  TrainingSpec in_node = llama(8, 1, 16);
  TrainingSpec across = in_node;
  across.parallel.placement = "dp-tp-cp-pp";  // puts TP peers on different nodes
  EXPECT_GT(run_training(across, c, comm).breakdown.exposed[static_cast<int>(CommCategory::tp)],
            run_training(in_node, c, comm).breakdown.exposed[static_cast<int>(CommCategory::tp)]);
}

TEST(Training, OverlappingTensorParallelCommunicationHidesMostOfIt) {
  const auto c = cluster(1);
  AlphaBetaCollectiveModel comm(c);
  TrainingSpec plain = llama(8, 1, 8);
  TrainingSpec overlapped = plain;
  overlapped.overlap_tp_comm = true;
  const TrainingResult a = run_training(plain, c, comm);
  const TrainingResult b = run_training(overlapped, c, comm);
  const int tp = static_cast<int>(CommCategory::tp);
  EXPECT_LT(b.breakdown.exposed[tp].seconds(), 0.5 * a.breakdown.exposed[tp].seconds());
  EXPECT_LT(b.iteration_time_s, a.iteration_time_s);
}

TEST(Training, MergingLayersIntoBlocksKeepsTheIterationTimeClose) {
  const auto c = cluster(4);
  AlphaBetaCollectiveModel comm(c);
  const TrainingSpec t = llama(2, 4, 64);
  GeneratorOptions coarse;
  coarse.layers_per_block = 0;
  const double exact = run_training(t, c, comm).iteration_time_s;
  const double fast = run_training(t, c, comm, coarse).iteration_time_s;
  EXPECT_NEAR(fast / exact, 1.0, 0.03);
  // Without a pipeline a chunk is the whole model: merged into one block, its parameter
  // all-gathers (ZeRO-1) and gradient reductions once waited for all of it and ran exposed
  // (+20-42% on such points of bench/workloads/planner-sweep.yaml). The first microbatch's
  // forward and the last one's backward now run layer by layer.
  for (const int global : {32, 128}) {  // 1 and 4 microbatches on 32 data-parallel ranks
    const TrainingSpec flat = llama(1, 1, global);
    const TrainingResult e = run_training(flat, c, comm);
    const TrainingResult f = run_training(flat, c, comm, coarse);
    EXPECT_NEAR(f.iteration_time_s / e.iteration_time_s, 1.0, 0.01) << global;
    EXPECT_NEAR(f.breakdown.exposed_total().seconds(), e.breakdown.exposed_total().seconds(),
                0.01 * e.iteration_time_s) << global;
  }
}

TEST(TrainingWriter, JsonCarriesTheSchemaAndHeadlineKeys) {
  const auto c = cluster(1);
  AlphaBetaCollectiveModel comm(c);
  const TrainingResult r = run_training(llama(8, 1, 8), c, comm);
  std::ostringstream out;
  report::write_training(r, "json", out);
  for (const char* key : {"\"schema_version\"", "\"iteration_time_s\"", "\"tflops_per_gpu\"", "\"mfu\"",
                          "\"tokens_per_s_per_gpu\"", "\"breakdown\"", "\"host_wait_s\"", "\"bubble_s\""}) {
    EXPECT_NE(out.str().find(key), std::string::npos) << key;
  }
}

TEST(TrainingWriter, NeighboursGetALineWhenThereAreAny) {
  TrainingResult r;
  r.iteration_time_s = 1;
  std::ostringstream alone;
  report::write_training(r, "table", alone);
  EXPECT_EQ(alone.str().find("neighbours"), std::string::npos) << alone.str();
  r.neighbour_copies = 3;
  std::ostringstream crowded, json;
  report::write_training(r, "table", crowded);
  EXPECT_NE(crowded.str().find("neighbours          3 copies of the job on the GPUs after it"), std::string::npos)
      << crowded.str();
  report::write_training(r, "json", json);
  EXPECT_NE(json.str().find("\"neighbour_copies\": 3"), std::string::npos) << json.str();
}

TEST(TrainingWriter, TimelineHasASpanPerTimedOp) {
  const auto c = cluster(1);
  AlphaBetaCollectiveModel comm(c);
  TrainingTrace trace;
  const TrainingResult r = run_training_traced(llama(2, 2, 4), c, comm, trace);
  report::Timeline t;
  report::add_training_timeline(trace, t);
  ASSERT_FALSE(t.spans().empty());
  Time last;
  for (const auto& s : t.spans()) last = std::max(last, s.end);
  EXPECT_NEAR(last.seconds(), r.iteration_time_s, 1e-12);
}

TEST(TrainingWriter, TableShowsShortIterationsInMillisecondsOrMicroseconds) {
  TrainingResult r;
  r.iteration_time_s = 45e-6;
  r.breakdown.compute = Time::us(40);
  r.breakdown.bubble = Time::us(5);
  std::ostringstream small;
  report::write_training(r, "table", small);
  EXPECT_NE(small.str().find("iteration time      45.0000 us"), std::string::npos) << small.str();
  EXPECT_NE(small.str().find("  compute            40.0000 us  88.9%"), std::string::npos) << small.str();
  EXPECT_NE(small.str().find("TFLOP/s, MFU        n/a"), std::string::npos) << small.str();
  // Waiting on the host gets a line only when there is any.
  EXPECT_EQ(small.str().find("waiting on host"), std::string::npos) << small.str();
  r.breakdown.bubble = Time::us(2);
  r.breakdown.host = Time::us(3);
  std::ostringstream host;
  report::write_training(r, "table", host);
  EXPECT_NE(host.str().find("  waiting on host     3.0000 us   6.7%"), std::string::npos) << host.str();
  std::ostringstream csv;
  report::write_training(r, "csv", csv);
  EXPECT_NE(csv.str().find(",memory_fits,host_wait_s\n"), std::string::npos) << csv.str();
  EXPECT_NE(csv.str().find(",0.000003\n"), std::string::npos) << csv.str();
  r.iteration_time_s = 0.0125;
  std::ostringstream mid;
  report::write_training(r, "table", mid);
  EXPECT_NE(mid.str().find("iteration time      12.5000 ms"), std::string::npos) << mid.str();
  r.iteration_time_s = 1.5;
  std::ostringstream large;
  report::write_training(r, "table", large);
  EXPECT_NE(large.str().find("iteration time      1.5000 s\n"), std::string::npos) << large.str();
  EXPECT_NE(large.str().find("  compute             0.0000 s    0.0%"), std::string::npos) << large.str();
}

// Every collective and transfer takes 10 us: the per-op table is about bookkeeping, not pricing.
class TenMicroseconds final : public collectives::CollectiveCostModel {
 public:
  collectives::CollectiveEstimate estimate(collectives::CollectiveKind, Bytes,
                                           const collectives::Communicator&) const override {
    return {Time::us(10)};
  }
};

Op measured(RankGraph& g, const char* label, int us) {
  Op op;
  op.measured = Time::us(us);
  op.label = g.label(label);
  return op;
}

// Two pipeline stages: stage 0 runs two 20 us GEMMs and sends (10 us) to stage 1, whose first
// rank waits for it and runs a 5 us GEMM; a second stage-1 rank, standing for three GPUs, runs
// a 9 us GEMM on its own. The iteration is 20 + 20 + 10 + 5 = 55 us.
TrainingTrace two_stage_run(TrainingResult& r) {
  Workload w;
  w.name = "two-stage";
  w.total_gpus = 5;
  w.ranks.resize(3);
  for (int i = 0; i < 3; ++i) {
    w.ranks[i].gpu = i;
    w.ranks[i].stage = i == 0 ? 0 : 1;
  }
  w.ranks[2].represents = 3;
  const int pair = w.add_comm({{0, 1}});
  RankGraph& a = w.ranks[0];
  const uint32_t g1 = a.add(measured(a, "gemm, fused", 20));
  const uint32_t g2 = a.add(measured(a, "gemm, fused", 20), {g1});
  Op send;
  send.kind = OpKind::send;
  send.stream = Stream::pp;
  send.comm = pair;
  send.label = a.label("pp.send");
  const uint32_t sent = a.add(send, {g2});
  RankGraph& b = w.ranks[1];
  Op recv;
  recv.kind = OpKind::recv;
  recv.stream = Stream::pp;
  recv.peer_rank = 0;
  recv.peer_op = static_cast<int32_t>(sent);
  recv.label = b.label("pp.recv");
  const uint32_t got = b.add(recv);
  b.add(measured(b, "gemm, fused", 5), {got});
  w.ranks[2].add(measured(w.ranks[2], "gemm, fused", 9));

  const auto c = cluster(1);
  ComputeModelParams params;
  params.comm_overlap_slowdown = 0;
  const ComputeModel compute(c.gpu, params);
  TenMicroseconds comm;
  TrainingTrace trace;
  r = evaluate_workload_traced(std::move(w), c, comm, topology::Dtype::bf16, compute, trace);
  return trace;
}

TEST(OpTotals, CountTimeAndCriticalPathPerStageStreamAndLabel) {
  TrainingResult r;
  const TrainingTrace trace = two_stage_run(r);
  ASSERT_NEAR(r.iteration_time_s, 55e-6, 1e-12);
  const std::vector<OpTotal> ops = op_totals(trace);
  ASSERT_EQ(ops.size(), 3u);  // the receive has no row: its time is the send's
  // Stage 0, busiest first: the GEMMs, then the send; all of it on the critical path.
  EXPECT_EQ(ops[0].stage, 0);
  EXPECT_EQ(ops[0].label, "gemm, fused");
  EXPECT_EQ(ops[0].stream, "compute");
  EXPECT_DOUBLE_EQ(ops[0].count, 2);
  EXPECT_NEAR(ops[0].busy_s, 40e-6, 1e-12);
  EXPECT_NEAR(ops[0].critical_s, 40e-6, 1e-12);
  EXPECT_EQ(ops[1].label, "pp.send");
  EXPECT_EQ(ops[1].what, "pp");
  EXPECT_NEAR(ops[1].busy_s, 10e-6, 1e-12);
  EXPECT_NEAR(ops[1].critical_s, 10e-6, 1e-12);
  // Stage 1 per GPU: (1 x 5 us + 3 x 9 us) / 4 GPUs; only the first rank's GEMM is critical.
  EXPECT_EQ(ops[2].stage, 1);
  EXPECT_DOUBLE_EQ(ops[2].count, 1);
  EXPECT_NEAR(ops[2].busy_s, 8e-6, 1e-12);
  EXPECT_NEAR(ops[2].critical_s, 5e-6, 1e-12);
}

TEST(OpTotals, CsvQuotesLabelsAndJsonCarriesTheSchema) {
  TrainingResult r;
  const TrainingTrace trace = two_stage_run(r);
  const std::vector<OpTotal> ops = op_totals(trace);
  std::ostringstream csv;
  report::write_op_table(r, ops, "csv", csv);
  EXPECT_EQ(csv.str().substr(0, csv.str().find('\n')),
            "stage,stream,activity,op,count,busy_s,mean_us,share,critical_s");
  EXPECT_NE(csv.str().find("\n0,compute,compute,\"gemm, fused\",2,0.000040000,20.000,0.72727,0.000040000\n"),
            std::string::npos)
      << csv.str();
  std::ostringstream json;
  report::write_op_table(r, ops, "json", json);
  EXPECT_EQ(json.str().front(), '{');
  EXPECT_NE(json.str().find("\"schema_version\": 1"), std::string::npos) << json.str();
  EXPECT_NE(json.str().find("\"op\": \"pp.send\""), std::string::npos) << json.str();
  EXPECT_THROW(report::write_op_table(r, ops, "table", json), std::invalid_argument);
}

// A ring-only flow model of two HGX H100 nodes, and two simulated ranks on them (GPUs 0 and 8)
// that all-reduce 64 MiB once (each issues it: one collective), GPU 0 then sending 1 MiB to GPU 8
// three times (a merged op, repeat 3).
collectives::FlowCollectiveModel two_node_ring_flows() {
  collectives::CollectiveOptions ring;
  ring.algorithm = collectives::Algorithm::ring;
  ring.protocol = collectives::Protocol::simple;
  return collectives::FlowCollectiveModel(cluster(2), ring, {});
}
Workload all_reduce_then_sends() {
  Workload w;
  w.total_gpus = 16;
  w.ranks.resize(2);
  w.ranks[1].gpu = 8;
  const int dp = w.add_comm({{0, 8}});
  for (RankGraph& g : w.ranks) g.add(Op::collective_on(Stream::dp, collectives::CollectiveKind::all_reduce, dp,
                                                       topology::Dtype::bf16, Bytes::mib(64)));
  Op send;
  send.kind = OpKind::send;
  send.stream = Stream::pp;
  send.comm = dp;
  send.bytes = Bytes::mib(1);
  send.repeat = 3;
  w.ranks[0].add(send);
  return w;
}

// Two simulated ranks on two nodes all-reduce 64 MiB once (each issues it: one collective) and
// GPU 0 sends 1 MiB to GPU 8 three times (a merged op, repeat 3). On flows each ring edge of a
// two-rank all_reduce carries the whole buffer, and the seven sibling groups (GPUs 1-7 with
// 9-15) run beside it, as they do beside the sends: each of node 0's eight NIC uplinks carries
// 64 MiB + 3 x 1 MiB, and was busy at least as long as the all_reduce took.
TEST(LinkTraffic, CountsEachCollectiveOnceAndEachSendItsRepeats) {
  const collectives::FlowCollectiveModel flows = two_node_ring_flows();
  const Workload w = all_reduce_then_sends();
  const std::vector<LinkTraffic> links = link_traffic(w, flows);
  const topology::Cluster& c = flows.cluster();
  const double all_reduce_s =
      flows.estimate(collectives::CollectiveKind::all_reduce, Bytes::mib(64), w.comms[0]).time.seconds();
  int uplinks = 0;
  for (const LinkTraffic& t : links) {
    const topology::Link& l = c.link(t.link);
    const std::string from = c.device(l.from).name;
    if (l.kind != topology::LinkKind::network || from.rfind("node0/nic", 0) != 0) continue;
    ++uplinks;
    EXPECT_NEAR(t.bytes, Bytes::mib(67).as_double(), 64) << from;  // the sends' chunks round down
    EXPECT_GT(t.busy_s, all_reduce_s) << from;
  }
  EXPECT_EQ(uplinks, 8);
}

// The same two ranks, traced: node 0's NIC uplinks see the all_reduce once (both simulated
// ranks issue it; the first speaks for it) over its recorded start and end, and the send with
// its three repeats; the receive never.
TEST(LinkUses, FollowTheRecordedTimesAndCountEachCollectiveOnce) {
  const collectives::FlowCollectiveModel flows = two_node_ring_flows();
  TrainingTrace trace;
  trace.workload = all_reduce_then_sends();
  Workload& w = trace.workload;
  Op recv = w.ranks[0].ops[1];
  recv.kind = OpKind::recv;
  w.ranks[1].add(recv);
  trace.execution.op_times = {{{Time::us(10), Time::us(110)}, {Time::us(120), Time::us(130)}},
                              {{Time::us(12), Time::us(111)}, {Time::us(120), Time::us(130)}}};
  const topology::Cluster& c = flows.cluster();
  std::vector<topology::LinkId> uplinks;
  for (topology::LinkId l = 0; l < c.links().size(); ++l) {
    if (c.link(l).kind == topology::LinkKind::network && c.device(c.link(l).from).name.rfind("node0/nic", 0) == 0) {
      uplinks.push_back(l);
    }
  }
  ASSERT_EQ(uplinks.size(), 8u);
  const std::vector<LinkUse> uses = link_uses(trace, flows, uplinks);
  ASSERT_EQ(uses.size(), 2 * uplinks.size());
  for (size_t i = 0; i < uses.size(); i += 2) {
    const LinkUse& all_reduce = uses[i];
    const LinkUse& sends = uses[i + 1];
    EXPECT_EQ(all_reduce.link, sends.link);
    EXPECT_EQ(all_reduce.rank, 0u);
    EXPECT_EQ(all_reduce.op, 0u);
    EXPECT_EQ(all_reduce.start, Time::us(10));
    EXPECT_EQ(all_reduce.end, Time::us(110));
    EXPECT_NEAR(all_reduce.bytes, Bytes::mib(64).as_double(), 64);
    EXPECT_EQ(sends.op, 1u);
    EXPECT_EQ(sends.start, Time::us(120));
    EXPECT_NEAR(sends.bytes, Bytes::mib(3).as_double(), 64);  // the chunks round down
  }
  // Links not asked for are not listed.
  EXPECT_TRUE(link_uses(trace, flows, {}).empty());
}

// Two operations overlap on one link: the track shows both, and the utilisation counter adds
// their shares while both run (0.5, then 0.75, then 0.25, then 0).
TEST(LinkTimeline, UtilisationAddsTheSharesOfOverlappingOperations) {
  const topology::ClusterSpec spec = cluster(2);
  const collectives::FlowCollectiveModel flows(spec, {}, {});
  const topology::Cluster& c = flows.cluster();
  TrainingTrace trace;
  trace.workload.ranks.resize(1);
  RankGraph& g = trace.workload.ranks[0];
  for (const char* label : {"grads.all_reduce", "params.all_gather"}) {
    Op op = Op::collective_on(Stream::dp, collectives::CollectiveKind::all_reduce, 0, topology::Dtype::bf16, Bytes::mib(1));
    op.label = g.label(label);
    g.add(op);
  }
  const topology::LinkId link = 0;
  const double per_us = c.link(link).bandwidth.bytes_per_s() * 1e-6;  // bytes the link carries in 1 us
  const std::vector<LinkUse> uses = {{link, Time::us(0), Time::us(100), 0.5 * 100 * per_us, 0, 0},
                                     {link, Time::us(50), Time::us(150), 0.25 * 100 * per_us, 0, 1}};
  report::Timeline timeline;
  report::add_link_timeline(trace, uses, c, timeline);
  ASSERT_EQ(timeline.tracks().size(), 1u);
  EXPECT_EQ(timeline.tracks()[0].process, "links");
  EXPECT_EQ(timeline.tracks()[0].thread, c.link_name(link));
  ASSERT_EQ(timeline.spans().size(), 2u);
  EXPECT_EQ(timeline.spans()[1].name, "params.all_gather");
  EXPECT_EQ(timeline.spans()[1].category, "dp");
  const std::vector<std::pair<Time, double>> expected = {
      {Time::us(0), 0.5}, {Time::us(50), 0.75}, {Time::us(100), 0.25}, {Time::us(150), 0.0}};
  ASSERT_EQ(timeline.counters().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(timeline.counters()[i].at, expected[i].first);
    EXPECT_NEAR(timeline.counters()[i].value, expected[i].second, 1e-9) << i;
  }
}

TEST(TrainingWriter, RejectsAnUnknownFormat) {
  std::ostringstream out;
  EXPECT_THROW(report::write_training(TrainingResult{}, "xml", out), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::workloads
