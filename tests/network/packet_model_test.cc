// The packet-level network model: store-and-forward timing, fair sharing of a bottleneck,
// lossless backpressure under incast, agreement with the flow model, determinism.
#include "network/packet/packet_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "collectives/schedule.h"
#include "collectives/schedule_executor.h"
#include "network/flow/flow_model.h"
#include "sim/rng.h"
#include "tests/network/line_cluster.h"
#include "tests/network/star_cluster.h"
#include "tests/topology/spec_helpers.h"
#include "topology/catalog.h"

namespace dtsim::network {
namespace {

using testing_support::Recorder;
using testing_support::StarCluster;

// 400 Gb/s = 50 GB/s: a 4096-byte packet serializes in exactly 81,920 ps.
const Bandwidth kBw = Bandwidth::gbps(400);
const Time kMtuTime = Time::ps(81'920);


// Starts transfer i at the event with payload i; its completion goes to the recorder with payload i.
struct Starter final : sim::EventHandler {
  NetworkModel* net = nullptr;
  std::vector<Transfer> transfers;
  Recorder r;
  void on_event(sim::Engine& engine, uint64_t i) override { net->start(engine, transfers[i], r, i); }
  // Queues the start of plan[i].second at plan[i].first, at its sender's site.
  void queue(sim::Engine& engine, PacketNetworkModel& model, const std::vector<std::pair<Time, Transfer>>& plan) {
    net = &model;
    for (size_t i = 0; i < plan.size(); ++i) {
      transfers.push_back(plan[i].second);
      engine.schedule_at_site(plan[i].first, model.site_of_gpu(plan[i].second.src_gpu), *this, i);
    }
  }
};

// Every transfer of a run completed, each at the instant it did in the reference run.
void expect_same_completions(const std::vector<Time>& got, const std::vector<Time>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NE(want[i], Time::max()) << what << " transfer " << i;
    EXPECT_EQ(got[i], want[i]) << what << " transfer " << i;
  }
}

// Starts every transfer at time zero; completion i goes to the recorder with payload i.
Recorder run_all(NetworkModel& net, sim::Engine& engine, const std::vector<Transfer>& transfers) {
  Recorder r;
  for (size_t i = 0; i < transfers.size(); ++i) net.start(engine, transfers[i], r, i);
  engine.run();
  return r;
}

TEST(PacketNetworkModel, TransferOverKHopsIsStoreAndForwardExactly) {
  const Time lat = Time::us(1);
  testing_support::LineCluster line({{kBw, lat}, {kBw, lat}, {kBw, lat}});
  for (const Bytes size : {Bytes::mib(1), Bytes::mib(1) + Bytes(1000)}) {  // last packet full / short
    PacketNetworkModel net(
        line,
        {.mtu = Bytes(4096), .buffer_per_port = Bytes::mib(1), .dcqcn = {}, .link_efficiency = {}});
    sim::Engine engine;
    const Recorder r = run_all(net, engine, {{.src_gpu = 0, .dst_gpu = 3, .bytes = size}});
    // size/bw + k * latency + (k - 1) * mtu/bw, with k = 3, in integer picoseconds.
    EXPECT_EQ(r.time_of(0), kBw.transfer_time(size) + lat * 3 + kMtuTime * 2) << size.count();
    EXPECT_EQ(net.bytes_delivered(), size);
    EXPECT_EQ(net.active_transfers(), 0u);
    EXPECT_EQ(net.packets_in_flight(), 0u);
  }
}

TEST(PacketNetworkModel, OnePacketTransferPaysItsSerializationAtEveryHop) {
  testing_support::LineCluster line({{kBw, Time::ns(500)}, {kBw, Time::ns(500)}});
  PacketNetworkModel net(line);
  sim::Engine engine;
  const Recorder r = run_all(net, engine, {{.src_gpu = 0, .dst_gpu = 2, .bytes = Bytes(4096)}});
  EXPECT_EQ(r.time_of(0), (kMtuTime + Time::ns(500)) * 2);
}

// A port sends a packet as it starts it: its finish is an event only when a packet waits behind
// it (gpus 1 and 2 forward each packet as it arrives, onto an idle port). The sender cuts its
// first and last packets alone and the others in bursts of 16 (PacketModelOptions::burst): a
// finish after the first packet and after each burst, 1 + 16 for 256 packets. Every hop is the arrival at the next device, except that only the last
// packet's arrival at the destination GPU is an event (it completes the transfer); the hops into
// a device the packet leaves again (gpus 1 and 2) return its credits, far below the 32 MiB
// buffers here, in updates of 16 packets (credit_batch, 64 KiB); then the caller's completion and
// the acknowledgement that frees the sender's slot.
TEST(PacketNetworkModel, OnlyTheLastPacketsArrivalAtTheGpuIsAnEvent) {
  testing_support::LineCluster line({{kBw, Time::us(1)}, {kBw, Time::us(1)}, {kBw, Time::us(1)}});
  PacketNetworkModel net(line);
  sim::Engine engine;
  const uint64_t packets = 256;
  const Bytes size(4096 * packets);
  const Recorder r = run_all(net, engine, {{.src_gpu = 0, .dst_gpu = 3, .bytes = size}});
  EXPECT_EQ(r.time_of(0), kBw.transfer_time(size) + Time::us(3) + kMtuTime * 2);
  EXPECT_EQ(engine.events_executed(), 1 + (packets - 2 + 15) / 16 + packets * 2 + 1 + 2 * (packets / 16) + 1 + 1);
  EXPECT_EQ(net.bytes_delivered(), size);
  EXPECT_EQ(net.packets_in_flight(), 0u);
}

// Credit updates in batches (credit_batch) move no time and no byte. A 7-to-1 incast with 256 KiB
// buffers, one transfer back the other way and short last packets: while a sender is far from its
// limit its link's far end holds credits back, and once the switch's queue fills the buffers it
// returns them packet by packet. Every completion to the picosecond, every link's bytes, the
// DCQCN marks drawn from each port's queue and the bytes delivered equal those of a run with an
// update per packet (credit_batch 0), which executes more events.
TEST(PacketNetworkModel, CreditBatchesMoveNoTimeAndNoByte) {
  struct Run {
    Recorder r;
    std::vector<Bytes> sent;
    uint64_t marks = 0;
    Bytes delivered;
    Bytes peak;
    uint64_t events = 0;
  };
  const int senders = 7;
  const Bytes buffer = Bytes::kib(256);
  StarCluster star(senders + 1, kBw, Time::us(1));
  auto run = [&](Bytes batch, bool dcqcn) {
    PacketModelOptions o{.mtu = Bytes(4096),
                         .buffer_per_port = buffer,
                         .dcqcn = {.enabled = dcqcn},
                         .link_efficiency = {}};
    o.credit_batch = batch;
    // A finish per packet at the senders and at the switch: bursts, which credits cut shorter
    // with batches than without (BurstsMoveNoTimeAndNoByte), and rounds, which batches make
    // shorter (PacketModelOptions::round), would blur the events batches save.
    o.burst = 1;
    o.round = 1;
    PacketNetworkModel net(star, o);
    std::vector<Transfer> ts;
    for (int i = 0; i < senders; ++i) {
      ts.push_back({.src_gpu = i, .dst_gpu = senders, .bytes = Bytes::mib(2) + Bytes(1000 * i)});
    }
    ts.push_back({.src_gpu = senders, .dst_gpu = 0, .bytes = Bytes::mib(1) + Bytes(7)});
    sim::Engine engine;
    Run out{.r = run_all(net, engine, ts), .sent = {}, .marks = net.ecn_marks(), .delivered = net.bytes_delivered(),
            .peak = net.peak_buffer_occupancy(), .events = engine.events_executed()};
    for (topology::LinkId l = 0; l < star.links().size(); ++l) out.sent.push_back(net.bytes_sent_on(l));
    return out;
  };
  for (const bool dcqcn : {false, true}) {
    const Run each = run(Bytes(0), dcqcn);
    const Run batched = run(Bytes::kib(64), dcqcn);
    ASSERT_EQ(each.r.done.size(), static_cast<size_t>(senders + 1));
    ASSERT_EQ(batched.r.done.size(), each.r.done.size());
    for (uint64_t i = 0; i <= static_cast<uint64_t>(senders); ++i) {
      EXPECT_EQ(batched.r.time_of(i), each.r.time_of(i)) << i << " " << dcqcn;
    }
    EXPECT_EQ(batched.sent, each.sent) << dcqcn;
    EXPECT_EQ(batched.marks, each.marks) << dcqcn;
    EXPECT_EQ(batched.delivered, each.delivered) << dcqcn;
    EXPECT_LT(batched.events, each.events) << dcqcn;
    // Without DCQCN credits bound the incast: some sender came within a packet of its limit.
    if (!dcqcn) {
      EXPECT_GE(each.peak, buffer - Bytes(4096));
    }
  }
}

// A run of `plan` with bursts of up to `burst` packets (1: a finish per packet): what the burst
// tests compare.
struct BurstRun {
  std::vector<Time> done;
  std::vector<Bytes> sent;
  uint64_t packets = 0;
  Bytes peak;
  Bytes delivered;
  uint64_t events = 0;
  uint64_t taken_back = 0;
};
BurstRun run_with_bursts(const topology::Cluster& cluster, const std::vector<std::pair<Time, Transfer>>& plan,
                         Bytes buffer, Bytes batch, uint32_t burst, uint32_t round = 16) {
  PacketModelOptions o{.mtu = Bytes(4096), .buffer_per_port = buffer, .dcqcn = {}, .link_efficiency = {}};
  o.credit_batch = batch;
  o.burst = burst;
  o.round = round;
  PacketNetworkModel net(cluster, o);
  sim::Engine engine;
  Starter starter;
  starter.queue(engine, net, plan);
  engine.run();
  BurstRun out{.done = {}, .sent = {}, .packets = net.packets_sent(), .peak = net.peak_buffer_occupancy(),
               .delivered = net.bytes_delivered(), .events = engine.events_executed(),
               .taken_back = net.bursts_taken_back()};
  for (uint64_t i = 0; i < plan.size(); ++i) out.done.push_back(starter.r.time_of(i));
  for (topology::LinkId l = 0; l < cluster.links().size(); ++l) out.sent.push_back(net.bytes_sent_on(l));
  EXPECT_EQ(net.packets_in_flight(), 0u);
  EXPECT_EQ(net.active_transfers(), 0u);
  return out;
}
// Where a credit update reaches a port at the very instant its serializer comes free, the next
// packet still starts at the port's finish, not at the update: which packet goes next then does
// not depend on whether an update happens to arrive at that instant, so credits in batches move
// no time there either. An all-to-all of 4-packet transfers among 70 single-GPU nodes under a
// radix-64 fat-tree (every link alike, so many events share an instant), sprayed: every
// completion to the picosecond and every link's bytes equal with credits in batches and one by
// one, with and without rounds.
TEST(PacketNetworkModel, CreditBatchesMoveNoTimeWhereEventsTie) {
  topology::ClusterSpec spec = *topology::find_node_preset("hgx-h100");
  spec.nodes = 70;
  spec.gpus_per_node = 1;
  spec.scale_up.domain_gpus = 1;
  spec.nic.count = 1;
  spec.fabric.kind = topology::FabricKind::fat_tree;
  spec.fabric.tiers = 2;
  spec.fabric.radix = 64;
  spec.fabric.link.bandwidth = spec.nic.bandwidth;
  spec.fabric.routing = topology::Routing::adaptive;
  const auto cluster = topology::build_cluster(spec);
  std::vector<std::pair<Time, Transfer>> plan;
  sim::Rng rng(70, sim::stream_id("test/ties"));
  for (int src = 0; src < 70; ++src) {
    for (int dst = 0; dst < 70; ++dst) {
      if (src != dst) plan.push_back({Time::zero(), {.src_gpu = src, .dst_gpu = dst, .bytes = Bytes::kib(16), .flow_hash = rng.next()}});
    }
  }
  for (const uint32_t round : {1u, 16u}) {
    const BurstRun each = run_with_bursts(*cluster, plan, Bytes::mib(32), Bytes(0), 16, round);
    const BurstRun batched = run_with_bursts(*cluster, plan, Bytes::mib(32), Bytes::kib(64), 16, round);
    expect_same_completions(batched.done, each.done, "round " + std::to_string(round));
    EXPECT_EQ(batched.sent, each.sent) << round;
    EXPECT_LT(batched.events, each.events) << round;
  }
}

// For each of `buffers`, with credits in batches of 64 KiB and one by one: `plan` run with a finish
// per packet and with bursts of 16, and a line naming the case.
struct BurstPair {
  Bytes buffer;
  BurstRun each;
  BurstRun burst;
  std::string what;
};
std::vector<BurstPair> runs_with_and_without_bursts(const topology::Cluster& cluster,
                                                    const std::vector<std::pair<Time, Transfer>>& plan,
                                                    uint64_t seed, std::initializer_list<Bytes> buffers) {
  std::vector<BurstPair> out;
  for (const Bytes buffer : buffers) {
    for (const Bytes batch : {Bytes::kib(64), Bytes(0)}) {
      out.push_back({.buffer = buffer,
                     .each = run_with_bursts(cluster, plan, buffer, batch, 1),
                     .burst = run_with_bursts(cluster, plan, buffer, batch, 16),
                     .what = std::to_string(seed) + " " + std::to_string(buffer.count()) + " " +
                             std::to_string(batch.count())});
    }
  }
  return out;
}
// Every completion to the picosecond, every link's bytes, the packets sent, the peak credits in
// use and the bytes delivered: all but the events.
void expect_the_same_run(const BurstRun& got, const BurstRun& want, const std::string& what) {
  expect_same_completions(got.done, want.done, what);
  EXPECT_EQ(got.sent, want.sent) << what;
  EXPECT_EQ(got.packets, want.packets) << what;
  EXPECT_EQ(got.peak, want.peak) << what;
  EXPECT_EQ(got.delivered, want.delivered) << what;
}

// Bursts (PacketModelOptions::burst) move no time and no byte. On a line of 4 GPUs (the middle
// ones forward) 14 transfers start at random instants, a third of them on a multiple of a
// packet's serialization (the instants a burst's packets start at), from GPUs 0, 1 and 2 to
// GPUs further along, some of a few packets or with a short last one: a transfer that starts at a
// port in the middle of a burst, or a packet passed on through it, takes back the packets that had
// not started. Every completion to the picosecond, every link's bytes, the packets sent, the peak
// credits in use and the bytes delivered equal those of a run with a finish per packet (burst 1),
// which executes more events; with 32 MiB and 256 KiB buffers (where credits cut bursts short),
// credits returned in batches or one by one.
TEST(PacketNetworkModel, BurstsMoveNoTimeAndNoByte) {
  testing_support::LineCluster line({{kBw, Time::us(1)}, {kBw, Time::ns(700)}, {kBw, Time::us(1)}});
  uint64_t taken_back = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    sim::Rng rng(seed, 7);
    std::vector<std::pair<Time, Transfer>> plan;
    for (int i = 0; i < 12; ++i) {
      const int src = static_cast<int>(rng.next() % 3);
      const int dst = src + 1 + static_cast<int>(rng.next() % static_cast<uint64_t>(3 - src));
      const Bytes bytes(static_cast<int64_t>(4096 * (1 + rng.next() % 96) + (i % 2 == 0 ? 0 : rng.next() % 4096)));
      const Time at = i % 3 == 0 ? kMtuTime * static_cast<int64_t>(rng.next() % 200)
                                 : Time::ps(static_cast<int64_t>(rng.next() % 20'000'000));
      plan.push_back({at, {.src_gpu = src, .dst_gpu = dst, .bytes = bytes}});
    }
    // A transfer that starts at the very instant one of a burst's packets would have: it joins the
    // port's turn first (its event was queued before the run), so that packet is taken back.
    plan.push_back({Time::zero(), {.src_gpu = 0, .dst_gpu = 3, .bytes = Bytes::kib(400)}});
    plan.push_back({kMtuTime * 37, {.src_gpu = 0, .dst_gpu = 2, .bytes = Bytes::kib(40)}});
    for (const BurstPair& r : runs_with_and_without_bursts(line, plan, seed, {Bytes::mib(32), Bytes::kib(256)})) {
      expect_the_same_run(r.burst, r.each, r.what);
      EXPECT_LT(r.burst.events, r.each.events) << r.what;
      EXPECT_EQ(r.each.taken_back, 0u);
      taken_back += r.burst.taken_back;
    }
  }
  EXPECT_GT(taken_back, 0u);  // the case this test is for arose
}

// An all-to-all among 6 GPUs, all starting at 0, of 2 to 40 packets each, the last of some short.
std::vector<std::pair<Time, Transfer>> all_to_all_on_six(sim::Rng& rng) {
  std::vector<std::pair<Time, Transfer>> plan;
  for (int src = 0; src < 6; ++src) {
    for (int dst = 0; dst < 6; ++dst) {
      if (src == dst) continue;
      const Bytes bytes(4096 * static_cast<int64_t>(2 + rng.below(39)) - (rng.below(2) == 0 ? 0 : 1000));
      plan.push_back({Time::zero(), {.src_gpu = src, .dst_gpu = dst, .bytes = bytes}});
    }
  }
  return plan;
}

// A GPU's port with several transfers to inject cuts a burst in its turn over them, as it would
// have cut the packets one per serialization. An all-to-all among 6 GPUs on a star (each port
// injecting 5 transfers round robin, of 2 to 40 packets, the last of some short), transfers that
// start later at a GPU mid-burst (some at the very instant a burst's packet starts), on 32 MiB
// and 64 KiB buffers, credits in batches and one by one: every completion, link's bytes, packet
// and peak credit count as with a finish per packet, in fewer events, and some bursts taken back.
TEST(PacketNetworkModel, BurstsOverSeveralTransfersMoveNoTimeAndNoByte) {
  StarCluster star(6, kBw, Time::us(1));
  uint64_t taken_back = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    sim::Rng rng(seed, sim::stream_id("test/multi-burst"));
    std::vector<std::pair<Time, Transfer>> plan = all_to_all_on_six(rng);
    for (int i = 0; i < 8; ++i) {
      const int src = static_cast<int>(rng.below(6));
      const int dst = (src + 1 + static_cast<int>(rng.below(5))) % 6;
      const Time at = i % 2 == 0 ? kMtuTime * static_cast<int64_t>(10 + rng.below(300))
                                 : Time::ps(static_cast<int64_t>(rng.below(30'000'000)));
      plan.push_back({at, {.src_gpu = src, .dst_gpu = dst, .bytes = Bytes(4096 * static_cast<int64_t>(1 + rng.below(20)))}});
    }
    for (const BurstPair& r : runs_with_and_without_bursts(star, plan, seed, {Bytes::mib(32), Bytes::kib(64)})) {
      expect_the_same_run(r.burst, r.each, r.what);
      // With 64 KiB buffers and credits in batches no burst fits: a burst stays within what the
      // link's far end may hold back (defer_below), and such a buffer holds nothing back.
      EXPECT_LE(r.burst.events, r.each.events) << r.what;
      if (r.buffer == Bytes::mib(32)) {
        EXPECT_LT(r.burst.events, r.each.events) << r.what;
      }
      taken_back += r.burst.taken_back;
    }
  }
  EXPECT_GT(taken_back, 0u);  // transfers joined ports mid-burst
}

// Rounds (PacketModelOptions::round) and credit batches move no time and no byte, ties
// included. On a star of 6 GPUs (the switch's ports feed GPUs: no credits) an all-to-all of 2 to
// 40 packets a transfer, and on three nodes of 8 GPUs under a 3-tier radix-8 fat-tree, sprayed
// (NVLink, PCIe, NICs and switches of different rates; credits on every hop into a switch),
// transfers between random GPUs; both with transfers that start later, a third of them on a
// multiple of a packet's serialization, so that packets reach ports at the very instant a round's
// packet starts or a credit update arrives. With 32 MiB and 256 KiB buffers, credits in batches
// or one by one, rounds of up to 16 packets or a finish per packet: every completion to the
// picosecond, every link's bytes, the packets sent and the bytes delivered equal those of the run
// with a finish per packet and an update per packet; rounds execute fewer events than a finish
// per packet with the same credits, and give the same peak credits in use where credits come
// back one by one (a batch holds a round's credits from its cut, and the upstream port counts
// them in use until the batch reaches it).
TEST(PacketNetworkModel, RoundsMoveNoTimeAndNoByte) {
  StarCluster star(6, kBw, Time::us(1));
  topology::ClusterSpec spec = topology::testing::hgx(3, topology::FabricKind::fat_tree, 8, 3);
  spec.fabric.routing = topology::Routing::adaptive;
  const auto tree = topology::build_cluster(spec);
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    sim::Rng rng(seed, sim::stream_id("test/rounds"));
    std::vector<std::pair<Time, Transfer>> on_star = all_to_all_on_six(rng);
    std::vector<std::pair<Time, Transfer>> on_tree;
    for (int i = 0; i < 60; ++i) {
      const int src = static_cast<int>(rng.below(24));
      const int dst = (src + 1 + static_cast<int>(rng.below(23))) % 24;
      const Bytes bytes(4096 * static_cast<int64_t>(1 + rng.below(60)) - (rng.below(2) == 0 ? 0 : 700));
      on_tree.push_back({i < 30 ? Time::zero() : Time::ps(static_cast<int64_t>(rng.below(20'000'000))),
                         {.src_gpu = src, .dst_gpu = dst, .bytes = bytes, .flow_hash = rng.next(),
                          .nic = static_cast<int>(rng.below(8))}});
    }
    for (auto* plan : {&on_star, &on_tree}) {
      for (int i = 0; i < 8; ++i) {
        const int src = static_cast<int>(rng.below(6));
        const int dst = (src + 1 + static_cast<int>(rng.below(5))) % 6;
        const Time at = i % 3 == 0 ? kMtuTime * static_cast<int64_t>(10 + rng.below(300))
                                   : Time::ps(static_cast<int64_t>(rng.below(30'000'000)));
        plan->push_back({at, {.src_gpu = src, .dst_gpu = dst, .bytes = Bytes(4096 * static_cast<int64_t>(1 + rng.below(20)))}});
      }
    }
    for (const bool on_a_tree : {false, true}) {
      const topology::Cluster& cluster = on_a_tree ? *tree : static_cast<const topology::Cluster&>(star);
      const auto& plan = on_a_tree ? on_tree : on_star;
      for (const Bytes buffer : {Bytes::mib(32), Bytes::kib(256)}) {
        const BurstRun plain = run_with_bursts(cluster, plan, buffer, Bytes(0), 16, 1);
        for (const Bytes batch : {Bytes::kib(64), Bytes(0)}) {
          const std::string what = std::to_string(seed) + (on_a_tree ? " tree " : " star ") +
                                   std::to_string(buffer.count()) + " " + std::to_string(batch.count());
          BurstRun each = batch > Bytes(0) ? run_with_bursts(cluster, plan, buffer, batch, 16, 1) : plain;
          BurstRun round = run_with_bursts(cluster, plan, buffer, batch, 16, 16);
          EXPECT_LT(round.events, each.events) << what;
          if (batch > Bytes(0)) {
            round.peak = each.peak = plain.peak;
          }
          expect_the_same_run(each, plain, what + " each");
          expect_the_same_run(round, plain, what + " round");
        }
      }
    }
  }
}

// A packet passed onto an idle last link in one step (PacketModelOptions::pass_last) is sent as
// the general hop sends it. On a star of 6 GPUs (one switch: every route's second link is its
// last) and a line of 4 (GPUs 1 and 2 forward), 14 transfers start at random instants, some
// alone on their last link, some into an incast that queues there, some of a few packets or with
// a short last one. Every completion to the picosecond, every link's bytes and peak queue, the
// sampled queues, the packets sent, the peak credits in use, the bytes delivered, the events and
// the fingerprint equal those of the same run through the general hop.
TEST(PacketNetworkModel, PassingOnALastLinkInOneStepChangesNothing) {
  struct Run {
    std::vector<Time> done;
    std::vector<Bytes> sent;
    std::vector<std::optional<PortStats>> stats;
    std::vector<PortTimeline> timelines;
    NetworkCounters counters;
    Bytes peak;
    uint64_t events = 0;
    uint64_t fingerprint = 0;
  };
  StarCluster star(6, kBw, Time::us(1));
  testing_support::LineCluster line({{kBw, Time::us(1)}, {kBw, Time::ns(700)}, {kBw, Time::us(1)}});
  for (const bool on_star : {true, false}) {
    const topology::Cluster& cluster = on_star ? static_cast<const topology::Cluster&>(star) : line;
    const int gpus = on_star ? 6 : 4;
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      sim::Rng rng(seed, 11);
      std::vector<std::pair<Time, Transfer>> plan;
      for (int i = 0; i < 14; ++i) {
        const int src = static_cast<int>(rng.next() % static_cast<uint64_t>(gpus - 1));
        const int dst = on_star ? (src + 1 + static_cast<int>(rng.next() % 5)) % gpus
                                : src + 1 + static_cast<int>(rng.next() % static_cast<uint64_t>(gpus - 1 - src));
        const Bytes bytes(static_cast<int64_t>(4096 * (1 + rng.next() % 64) + (i % 2 == 0 ? 0 : rng.next() % 4096)));
        const Time at = i % 3 == 0 ? kMtuTime * static_cast<int64_t>(rng.next() % 100)
                                   : Time::ps(static_cast<int64_t>(rng.next() % 10'000'000));
        plan.push_back({at, {.src_gpu = src, .dst_gpu = dst, .bytes = bytes}});
      }
      for (const Bytes buffer : {Bytes::mib(32), Bytes::kib(64)}) {
        auto run = [&](bool pass_last) {
          PacketModelOptions o{.mtu = Bytes(4096), .buffer_per_port = buffer, .dcqcn = {}, .link_efficiency = {}};
          o.sample_interval = Time::ns(500);
          o.pass_last = pass_last;
          PacketNetworkModel net(cluster, o);
          sim::Engine engine;
          Starter starter;
          starter.queue(engine, net, plan);
          engine.run();
          Run out{.done = {}, .sent = {}, .stats = {}, .timelines = net.port_timelines(engine.now()),
                  .counters = net.counters(), .peak = net.peak_buffer_occupancy(),
                  .events = engine.events_executed(), .fingerprint = engine.fingerprint()};
          for (uint64_t i = 0; i < plan.size(); ++i) out.done.push_back(starter.r.time_of(i));
          for (topology::LinkId l = 0; l < cluster.links().size(); ++l) {
            out.sent.push_back(net.bytes_sent_on(l));
            out.stats.push_back(net.port_stats(l));
          }
          return out;
        };
        const Run general = run(false);
        const Run passed = run(true);
        const std::string what = std::to_string(on_star) + " " + std::to_string(seed) + " " +
                                 std::to_string(buffer.count());
        expect_same_completions(passed.done, general.done, what);
        EXPECT_EQ(passed.sent, general.sent) << what;
        EXPECT_EQ(passed.stats, general.stats) << what;
        EXPECT_EQ(passed.timelines, general.timelines) << what;
        EXPECT_EQ(passed.counters, general.counters) << what;
        EXPECT_EQ(passed.peak, general.peak) << what;
        EXPECT_EQ(passed.events, general.events) << what;
        EXPECT_EQ(passed.fingerprint, general.fingerprint) << what;
      }
    }
  }
}

TEST(PacketNetworkModel, TwoFlowsSharingABottleneckEachGetHalf) {
  // Senders 0 and 1 both feed the switch port down to gpu 2; a 64 KiB buffer makes the
  // senders wait on credits, so the round robin at the switch sets both rates.
  StarCluster star(3, kBw, Time::us(1));
  const Bytes size = Bytes::mib(16);
  PacketNetworkModel net(
      star,
      {.mtu = Bytes(4096), .buffer_per_port = Bytes::kib(64), .dcqcn = {}, .link_efficiency = {}});
  sim::Engine engine;
  const Recorder r = run_all(net, engine,
                             {{.src_gpu = 0, .dst_gpu = 2, .bytes = size},
                              {.src_gpu = 1, .dst_gpu = 2, .bytes = size}});
  const double alone = kBw.transfer_time(size).seconds();
  const double a = r.time_of(0).seconds();
  const double b = r.time_of(1).seconds();
  EXPECT_NEAR(a / b, 1.0, 0.01);
  EXPECT_NEAR(a / (2 * alone), 1.0, 0.01);
  EXPECT_NEAR(b / (2 * alone), 1.0, 0.01);
  EXPECT_EQ(net.bytes_delivered(), size * 2);
}

// A transfer with a rate cap (one channel's thread block: Transfer::max_rate) injects its packets
// no faster than the cap, on packets as on flows; an uncapped one beside it takes the rest of
// the bottleneck. The buffers (256 KiB) are above the credit loop's bandwidth-delay product
// (50 GB/s x (2 x 81.92 ns + 2 x 1 us) = 108 KB), so credits do not hold the uncapped one back.
TEST(PacketNetworkModel, CappedTransferInjectsAtItsCapAndTheOtherTakesTheRest) {
  StarCluster star(3, kBw, Time::us(1));
  const Bytes size = Bytes::mib(16);
  const double cap = 10e9;  // a fifth of the 50 GB/s links
  PacketNetworkModel net(
      star,
      {.mtu = Bytes(4096), .buffer_per_port = Bytes::kib(256), .dcqcn = {}, .link_efficiency = {}});
  sim::Engine engine;
  const Recorder r = run_all(net, engine,
                             {{.src_gpu = 0, .dst_gpu = 2, .bytes = size, .max_rate = cap},
                              {.src_gpu = 1, .dst_gpu = 2, .bytes = size}});
  EXPECT_NEAR(r.time_of(0).seconds() / (size.as_double() / cap), 1.0, 0.01);
  // The uncapped one gets 40 of the 50 GB/s while the capped one runs, all of it once alone.
  EXPECT_LT(r.time_of(1).seconds(), 1.3 * kBw.transfer_time(size).seconds());
  EXPECT_EQ(net.bytes_delivered(), size * 2);
}

TEST(PacketNetworkModel, IncastIsHeldWithinTheBufferAndDeliversEveryByte) {
  const int senders = 7;
  const Bytes buffer = Bytes::kib(64);
  const Bytes size = Bytes::mib(2);
  StarCluster star(senders + 1, kBw, Time::us(1));
  PacketNetworkModel net(
      star, {.mtu = Bytes(4096), .buffer_per_port = buffer, .dcqcn = {}, .link_efficiency = {}});
  std::vector<Transfer> ts;
  for (int i = 0; i < senders; ++i)
    ts.push_back({.src_gpu = i, .dst_gpu = senders, .bytes = size, .flow_hash = uint64_t(i)});
  sim::Engine engine;
  const Recorder r = run_all(net, engine, ts);

  ASSERT_EQ(r.done.size(), static_cast<size_t>(senders));
  EXPECT_EQ(net.bytes_delivered(), size * senders);
  EXPECT_EQ(net.bytes_sent_on(2 * senders + 1), size * senders);  // the shared down link
  // A queue built up, and backpressure kept it within the buffer.
  EXPECT_LE(net.peak_buffer_occupancy(), buffer);
  EXPECT_GE(net.peak_buffer_occupancy(), buffer - Bytes(4096));
  // The down link never idled once the queue formed: the incast takes N times one transfer.
  Time last;
  for (const auto& d : r.done) last = std::max(last, d.second);
  const double ideal = kBw.transfer_time(size * senders).seconds();
  EXPECT_GE(last.seconds(), ideal);
  EXPECT_NEAR(last.seconds() / ideal, 1.0, 0.01);
  // No link above capacity: what each link carried fits in the elapsed time at its rate.
  for (topology::LinkId l = 0; l < star.links().size(); ++l)
    EXPECT_LE(net.bytes_sent_on(l).as_double(), kBw.bytes_per_s() * last.seconds() + 1) << l;
}

TEST(PacketNetworkModel, IncastKeepsEveryBufferWithinOneMtu) {
  // The smallest legal buffer still delivers everything, with no port ever holding more.
  StarCluster star(5, kBw, Time::ns(300));
  PacketNetworkModel net(
      star,
      {.mtu = Bytes(4096), .buffer_per_port = Bytes(4096), .dcqcn = {}, .link_efficiency = {}});
  std::vector<Transfer> ts;
  for (int i = 0; i < 4; ++i)
    ts.push_back({.src_gpu = i, .dst_gpu = 4, .bytes = Bytes::kib(256) + Bytes(7)});
  sim::Engine engine;
  const Recorder r = run_all(net, engine, ts);
  EXPECT_EQ(r.done.size(), 4u);
  EXPECT_EQ(net.bytes_delivered(), (Bytes::kib(256) + Bytes(7)) * 4);
  EXPECT_EQ(net.peak_buffer_occupancy(), Bytes(4096));
}

// Credit flow control with a round trip. On a star, gpu 0 -> switch -> gpu 1: the up link's port
// takes credits for a packet when it starts serializing it; the packet leaves the switch's receive
// buffer when the down port has serialized it, and the credits travel back over the reverse link.
// The credit loop is T = s + L (up) + s (down) + L (back), s one packet's serialization. With a
// buffer of k packets, packet i starts at (i / k) T + (i mod k) s as long as k s <= T, so the rate
// is min(line, k mtu / T), and the last packet arrives 2 s + 2 L after it starts.
Time credit_limited_time(int64_t packets, int64_t k, Time s, Time lat) {
  const Time loop = s * 2 + lat * 2;
  if (k * s.ps() >= loop.ps()) return s * packets + lat * 2 + s;  // line rate
  const int64_t last = packets - 1;
  return loop * (last / k) + s * (last % k) + s * 2 + lat * 2;
}

TEST(PacketNetworkModel, SmallBufferLimitsTheRateToItsCreditsPerRoundTrip) {
  const Time lat = Time::us(1);
  StarCluster star(2, kBw, lat);
  const int64_t packets = 64;
  for (const int64_t k : {1, 4, 8}) {
    PacketNetworkModel net(star, {.mtu = Bytes(4096),
                                  .buffer_per_port = Bytes(4096 * k),
                                  .dcqcn = {},
                                  .link_efficiency = {}});
    sim::Engine engine;
    const Recorder r =
        run_all(net, engine, {{.src_gpu = 0, .dst_gpu = 1, .bytes = Bytes(4096 * packets)}});
    EXPECT_EQ(r.time_of(0), credit_limited_time(packets, k, kMtuTime, lat)) << k;
    // The steady rate is k packets per loop: B / T, far below the 50 GB/s line here.
    const double loop = (kMtuTime * 2 + lat * 2).seconds();
    const double rate = 4096.0 * static_cast<double>(packets - k) / (r.time_of(0) - (kMtuTime * 2 + lat * 2) - kMtuTime * (k - 1)).seconds();
    EXPECT_NEAR(rate / (4096.0 * static_cast<double>(k) / loop), 1.0, 0.02) << k;
    EXPECT_EQ(net.peak_buffer_occupancy(), Bytes(4096 * k));
    EXPECT_EQ(net.bytes_delivered(), Bytes(4096 * packets));
  }
}

// A buffer of ceil(T / s) packets covers the credit loop: the transfer takes the fluid closed form,
// bytes / bandwidth + the latencies, plus one packet's store-and-forward at the switch, to the
// picosecond. One packet less and it is slower.
TEST(PacketNetworkModel, BufferCoveringTheCreditLoopGivesTheFluidTime) {
  const Time lat = Time::us(1);
  StarCluster star(2, kBw, lat);
  const Time loop = kMtuTime * 2 + lat * 2;
  const int64_t k = (loop.ps() + kMtuTime.ps() - 1) / kMtuTime.ps();  // 27
  const Bytes size = Bytes::mib(4) + Bytes(1000);  // the last packet short
  auto time_with = [&](Bytes buffer) {
    PacketNetworkModel net(
        star, {.mtu = Bytes(4096), .buffer_per_port = buffer, .dcqcn = {}, .link_efficiency = {}});
    sim::Engine engine;
    const Recorder r = run_all(net, engine, {{.src_gpu = 0, .dst_gpu = 1, .bytes = size}});
    EXPECT_EQ(net.bytes_delivered(), size);
    return r.time_of(0);
  };
  const Time fluid = kBw.transfer_time(size) + lat * 2 + kMtuTime;
  EXPECT_EQ(time_with(Bytes(4096 * k)), fluid);
  EXPECT_EQ(time_with(Bytes::mib(32)), fluid);
  EXPECT_GT(time_with(Bytes(4096 * (k - 1))), fluid);
}

// 16 senders into one GPU with 4-packet buffers: every receive buffer fills and none overflows,
// every byte arrives, and the down link stays busy (its port's queue holds 16 x 4 packets).
TEST(PacketNetworkModel, SixteenToOneIncastKeepsEveryBufferWithinItsCredits) {
  const int senders = 16;
  const Bytes buffer(4 * 4096);
  const Bytes size = Bytes::kib(512) + Bytes(123);
  StarCluster star(senders + 1, kBw, Time::ns(500));
  PacketNetworkModel net(
      star, {.mtu = Bytes(4096), .buffer_per_port = buffer, .dcqcn = {}, .link_efficiency = {}});
  std::vector<Transfer> ts;
  for (int i = 0; i < senders; ++i) ts.push_back({.src_gpu = i, .dst_gpu = senders, .bytes = size});
  sim::Engine engine;
  const Recorder r = run_all(net, engine, ts);
  ASSERT_EQ(r.done.size(), static_cast<size_t>(senders));
  EXPECT_EQ(net.bytes_delivered(), size * senders);
  EXPECT_EQ(net.bytes_sent_on(2 * senders + 1), size * senders);
  EXPECT_EQ(net.peak_buffer_occupancy(), buffer);
  EXPECT_EQ(net.packets_in_flight(), 0u);
  const double ideal = kBw.transfer_time(size * senders).seconds();
  EXPECT_GE(r.last().seconds(), ideal);
  EXPECT_NEAR(r.last().seconds() / ideal, 1.0, 0.01);
}

// DCQCN draws its marks from a stream per port: a port's marks depend on its own queue alone, so
// an unrelated incast on another port of the same switch leaves them, and the first incast's
// times, unchanged. (With one stream for the whole model, the other port's draws shift this
// port's: checked by hand, this test then fails.)
TEST(PacketNetworkModel, DcqcnMarksAreAFunctionOfThePortAlone) {
  struct Run {
    uint64_t marks_here = 0, marks = 0;
    std::vector<Time> times;
  };
  auto run = [](bool neighbour) {
    StarCluster star(8, kBw, Time::us(1));
    // kmax far above the queues: every mark is a draw, with probability rising with the queue.
    PacketNetworkModel net(star, {.mtu = Bytes(4096),
                                  .buffer_per_port = Bytes::mib(32),
                                  .dcqcn = {.enabled = true, .kmax = Bytes::mib(64), .pmax = 1.0},
                                  .link_efficiency = {}});
    std::vector<Transfer> ts;
    for (int i = 0; i < 4; ++i) ts.push_back({.src_gpu = i, .dst_gpu = 4, .bytes = Bytes::mib(2)});
    if (neighbour) {
      for (int i = 5; i < 7; ++i) ts.push_back({.src_gpu = i, .dst_gpu = 7, .bytes = Bytes::mib(2)});
    }
    sim::Engine engine;
    const Recorder r = run_all(net, engine, ts);
    Run out{.marks_here = net.ecn_marks_at(2 * 4 + 1), .marks = net.ecn_marks(), .times = {}};
    for (uint64_t i = 0; i < 4; ++i) out.times.push_back(r.time_of(i));
    return out;
  };
  const Run alone = run(false);
  const Run beside = run(true);
  EXPECT_GT(alone.marks_here, 0u);
  EXPECT_GT(beside.marks, beside.marks_here);  // the neighbour's port marked too
  EXPECT_EQ(beside.marks_here, alone.marks_here);
  EXPECT_EQ(beside.times, alone.times);
}

// A transfer to itself is instant; one of no bytes to another GPU is a message that pays the
// route's latencies (two 1 us links of the star) and sends no packet.
TEST(PacketNetworkModel, TransferToItselfIsInstantAndAnEmptyOneIsItsLatency) {
  StarCluster star(2, kBw, Time::us(1));
  PacketNetworkModel net(star);
  sim::Engine engine;
  const Recorder r = run_all(net, engine,
                             {{.src_gpu = 1, .dst_gpu = 1, .bytes = Bytes::mib(1)},
                              {.src_gpu = 0, .dst_gpu = 1, .bytes = Bytes(0)}});
  EXPECT_EQ(r.time_of(0), Time::zero());
  EXPECT_EQ(r.time_of(1), Time::us(2));
  EXPECT_EQ(net.packets_sent(), 0u);
  EXPECT_EQ(net.bytes_delivered(), Bytes::mib(1));
}

TEST(PacketNetworkModel, RefusesABufferSmallerThanOneMtu) {
  StarCluster star(2, kBw, Time::us(1));
  EXPECT_THROW(
      PacketNetworkModel(
          star,
          {.mtu = Bytes(4096), .buffer_per_port = Bytes(4095), .dcqcn = {}, .link_efficiency = {}}),
      std::invalid_argument);
  EXPECT_THROW(
      PacketNetworkModel(
          star,
          {.mtu = Bytes(0), .buffer_per_port = Bytes::mib(32), .dcqcn = {}, .link_efficiency = {}}),
      std::invalid_argument);
}

TEST(PacketNetworkModel, RefusesARoundOfNoPacketOrOverSixteen) {
  StarCluster star(2, kBw, Time::us(1));
  for (const uint32_t round : {0u, 17u}) {
    PacketModelOptions o;
    o.round = round;
    EXPECT_THROW(PacketNetworkModel(star, o), std::invalid_argument) << round;
  }
  PacketModelOptions o;
  o.round = 16;
  EXPECT_NO_THROW(PacketNetworkModel(star, o));
}

std::unique_ptr<topology::Cluster> hgx_h100(int nodes) {
  topology::ClusterSpec s = *topology::find_node_preset("hgx-h100");
  s.nodes = nodes;
  s.fabric.kind = topology::FabricKind::fat_tree;
  s.fabric.tiers = 2;
  s.fabric.radix = 64;
  return topology::build_cluster(s);
}

// Runs `schedule` on `net` and returns its duration.
Time run_schedule(const collectives::Schedule& schedule, NetworkModel& net, sim::Engine& engine) {
  collectives::ScheduleExecutor exec(schedule, net);
  exec.start(engine);
  engine.run();
  EXPECT_TRUE(exec.done());
  EXPECT_EQ(net.bytes_delivered(), exec.bytes_sent());
  return exec.finish_time() - exec.start_time();
}

TEST(PacketNetworkModel, RingAllReduceOnTwoHgxNodesAgreesWithTheFlowModel) {
  // DESIGN.md: the packet model converges to the flow model on long uncongested transfers. 16
  // channels keep every NIC busy; see docs/packet-model.md for fewer channels.
  const auto cluster = hgx_h100(2);
  collectives::Communicator comm;
  for (int r = 0; r < 16; ++r) comm.ranks.push_back(r);
  const collectives::Schedule schedule =
      collectives::build_schedule(collectives::Algorithm::ring, collectives::CollectiveKind::all_reduce,
                                  Bytes::mib(256), comm, /*channels=*/16, /*ranks_per_node=*/8);
  sim::Engine flow_engine;
  FlowNetworkModel flow(*cluster);
  const Time t_flow = run_schedule(schedule, flow, flow_engine);
  sim::Engine packet_engine;
  PacketNetworkModel packet(*cluster);
  const Time t_packet = run_schedule(schedule, packet, packet_engine);
  EXPECT_NEAR(t_packet / t_flow, 1.0, 0.02) << "packet " << t_packet.us() << " us, flow " << t_flow.us()
                                            << " us";
  EXPECT_GE(t_packet, t_flow);  // store-and-forward only adds time to an uncongested schedule
}

// A sprayed transfer on a P5-like pair (32 x 100 Gb/s EFA NICs a node, the nodes under different
// leaves of a radix-64 fat-tree): packet j takes route j mod K, so each of the K leaf uplinks
// carries a K-th of the bytes, and every byte arrives.
TEST(PacketNetworkModel, SprayedTransferUsesEveryRouteOfItsSet) {
  topology::ClusterSpec spec = topology::testing::hgx(2, topology::FabricKind::fat_tree);
  spec.nic = {.kind = topology::NicKind::efa, .count = 32, .bandwidth = Bandwidth::gbps(100)};
  ASSERT_TRUE(spec.adaptive_routing());  // auto on EFA
  const auto cluster = topology::build_cluster(spec);
  const Transfer t{.src_gpu = 5, .dst_gpu = 13, .bytes = Bytes::mib(16), .flow_hash = 9, .nic = 1};
  const auto routes = transfer_paths(*cluster, t);
  ASSERT_EQ(routes.size(), topology::kSprayRoutes);
  PacketNetworkModel net(*cluster);
  sim::Engine engine;
  const Recorder r = run_all(net, engine, {t});
  ASSERT_EQ(r.done.size(), 1u);
  EXPECT_EQ(net.bytes_delivered(), t.bytes);
  for (const auto& route : routes) {
    const auto up = std::find_if(route.begin(), route.end(), [&](topology::LinkId l) {
      return cluster->device(cluster->link(l).from).kind == topology::DeviceKind::network_switch;
    });
    // leaf -> spine: 4096 packets of 4 KiB, 128 on each route
    EXPECT_EQ(net.bytes_sent_on(*up), Bytes(t.bytes.count() / static_cast<int64_t>(routes.size())))
        << cluster->link_name(*up);
  }
}

// Every packet crosses every link of its route and no other: packet j of a transfer takes route
// j mod K of transfer_paths, so each link carries exactly the bytes of the packets whose routes
// cross it. A hop reads its route's links from the transfer's Routes (the links every route shares
// at its start and end, and each route's own links between, stored once for transfers between the
// same two leaves); checked on hgx nodes (routes through NVLink, PCIe and NICs) under a 3-tier
// fat-tree, sprayed, with hashed ECMP and inside a node, on routes of 2 to 11 links.
TEST(PacketNetworkModel, EveryPacketCrossesEveryLinkOfItsRouteAndNoOther) {
  for (const topology::Routing routing : {topology::Routing::adaptive, topology::Routing::ecmp}) {
    topology::ClusterSpec spec = topology::testing::hgx(6, topology::FabricKind::fat_tree, 8, 3);
    spec.fabric.routing = routing;
    const auto cluster = topology::build_cluster(spec);
    std::vector<Transfer> transfers;
    sim::Rng rng(41, sim::stream_id("test/routes"));
    for (int i = 0; i < 40; ++i) {
      const int src = static_cast<int>(rng.below(48));
      const int dst = (src + 1 + static_cast<int>(rng.below(47))) % 48;  // not itself
      transfers.push_back({.src_gpu = src, .dst_gpu = dst, .bytes = Bytes(1 + static_cast<int64_t>(rng.below(300'000))),
                           .flow_hash = rng.below(1000), .nic = static_cast<int>(rng.below(8))});
    }
    std::vector<int64_t> want(cluster->links().size(), 0);
    size_t longest = 0;
    size_t most_routes = 0;
    for (const Transfer& t : transfers) {
      const auto routes = transfer_paths(*cluster, t);
      most_routes = std::max(most_routes, routes.size());
      for (int64_t cut = 0, j = 0; cut < t.bytes.count(); cut += 4096, ++j) {
        const auto& route = routes[static_cast<size_t>(j) % routes.size()];
        longest = std::max(longest, route.size());
        for (const topology::LinkId l : route) want[l] += std::min<int64_t>(4096, t.bytes.count() - cut);
      }
    }
    PacketNetworkModel net(*cluster);
    sim::Engine engine;
    const Recorder r = run_all(net, engine, transfers);
    ASSERT_EQ(r.done.size(), transfers.size());
    for (size_t l = 0; l < want.size(); ++l) {
      EXPECT_EQ(net.bytes_sent_on(static_cast<topology::LinkId>(l)), Bytes(want[l]))
          << cluster->link_name(static_cast<topology::LinkId>(l));
    }
    // The case covers long routes and, sprayed, many of them.
    EXPECT_GE(longest, 9u);
    if (routing == topology::Routing::adaptive) {
      EXPECT_GT(most_routes, 1u);
    }
  }
}

// A cluster whose sprayed routes are the real ones and, after them, a detour two links longer:
// from the first route's spine on to a third leaf, up to another spine and down to the
// destination's leaf. Its transfers' routes differ in length.
struct DetourCluster final : topology::Cluster {
  explicit DetourCluster(const topology::Cluster& c) : inner(c) {}
  const topology::ClusterSpec& spec() const override { return inner.spec(); }
  std::span<const topology::Device> devices() const override { return inner.devices(); }
  std::span<const topology::Link> links() const override { return inner.links(); }
  int gpu_count() const override { return inner.gpu_count(); }
  topology::DeviceId gpu_device(int gpu) const override { return inner.gpu_device(gpu); }
  std::vector<topology::LinkId> route(int a, int b, uint64_t hash) const override { return inner.route(a, b, hash); }
  std::vector<topology::LinkId> route_nic(int a, int b, uint64_t hash, int nic) const override {
    return inner.route_nic(a, b, hash, nic);
  }
  std::vector<std::vector<topology::LinkId>> sprayed_routes(int a, int b, uint64_t hash, int nic,
                                                            size_t k) const override {
    auto routes = inner.sprayed_routes(a, b, hash, nic, k);
    if (routes.size() < 2) return routes;
    const std::vector<topology::LinkId>& first = routes.front();
    const auto leaf = [&](topology::DeviceId d) {
      return device(d).kind == topology::DeviceKind::network_switch && device(d).tier == 0;
    };
    const auto up = std::find_if(first.begin(), first.end(), [&](topology::LinkId l) { return leaf(link(l).from); });
    const topology::DeviceId spine = link(*up).to;
    const topology::DeviceId down_leaf = link(*(up + 1)).to;
    const auto find = [&](auto&& ok) {
      for (topology::LinkId l = 0; l < links().size(); ++l) {
        if (ok(link(l))) return l;
      }
      throw std::logic_error("DetourCluster: no such link");
    };
    const topology::LinkId to_third = find([&](const topology::Link& l) {
      return l.from == spine && leaf(l.to) && l.to != down_leaf && l.to != link(*up).from;
    });
    const topology::DeviceId third = link(to_third).to;
    const topology::LinkId up_again =
        find([&](const topology::Link& l) { return l.from == third && l.to != spine && !leaf(l.to) && device(l.to).node < 0; });
    const topology::LinkId down_again =
        find([&](const topology::Link& l) { return l.from == link(up_again).to && l.to == down_leaf; });
    std::vector<topology::LinkId> detour(first.begin(), up + 1);
    detour.insert(detour.end(), {to_third, up_again, down_again});
    detour.insert(detour.end(), up + 2, first.end());
    routes.push_back(std::move(detour));
    return routes;
  }
  const topology::Cluster& inner;
};

// Routes of different lengths (Routes::hops 0: the transfer's routes read from its own record):
// packet j takes route j mod K all the same, so every link carries exactly the bytes of the packets
// whose routes cross it, and every transfer completes with all its bytes.
TEST(PacketNetworkModel, RoutesOfDifferentLengthsCarryTheirPacketsExactly) {
  topology::ClusterSpec spec = topology::testing::hgx(4, topology::FabricKind::fat_tree, 8, 2);
  spec.fabric.routing = topology::Routing::adaptive;
  const auto real = topology::build_cluster(spec);
  const DetourCluster cluster(*real);
  std::vector<Transfer> transfers;
  sim::Rng rng(43, sim::stream_id("test/detours"));
  while (transfers.size() < 24) {  // each between two leaves: sprayed over spines, with a detour
    const int src = static_cast<int>(rng.below(32));
    const int dst = (src + 8 + static_cast<int>(rng.below(24))) % 32;  // another node
    const Transfer t{.src_gpu = src, .dst_gpu = dst, .bytes = Bytes(1 + static_cast<int64_t>(rng.below(400'000))),
                     .flow_hash = rng.below(1000), .nic = static_cast<int>(rng.below(8))};
    if (transfer_paths(*real, t).size() > 1) transfers.push_back(t);
  }
  std::vector<int64_t> want(cluster.links().size(), 0);
  for (const Transfer& t : transfers) {
    const auto routes = transfer_paths(cluster, t);
    ASSERT_GT(routes.size(), 2u);
    ASSERT_EQ(routes.back().size(), routes.front().size() + 2);
    for (int64_t cut = 0, j = 0; cut < t.bytes.count(); cut += 4096, ++j) {
      for (const topology::LinkId l : routes[static_cast<size_t>(j) % routes.size()]) {
        want[l] += std::min<int64_t>(4096, t.bytes.count() - cut);
      }
    }
  }
  PacketNetworkModel net(cluster);
  sim::Engine engine;
  const Recorder r = run_all(net, engine, transfers);
  ASSERT_EQ(r.done.size(), transfers.size());
  int64_t total = 0;
  for (const Transfer& t : transfers) total += t.bytes.count();
  EXPECT_EQ(net.bytes_delivered(), Bytes(total));
  for (size_t l = 0; l < want.size(); ++l) {
    EXPECT_EQ(net.bytes_sent_on(static_cast<topology::LinkId>(l)), Bytes(want[l]))
        << cluster.link_name(static_cast<topology::LinkId>(l));
  }
}

// Where hashed ECMP puts two transfers on one leaf uplink, spraying finishes no later.
TEST(PacketNetworkModel, SprayingIsNoSlowerThanEcmpWhereEcmpCollides) {
  auto slowest = [](topology::Routing routing) {
    const auto cluster = topology::build_cluster(topology::testing::two_spine_fat_tree(routing));
    std::vector<Transfer> ts;
    for (int i = 0; i < 8; ++i) {
      ts.push_back({.src_gpu = i, .dst_gpu = (i + 4) % 8, .bytes = Bytes::mib(8), .flow_hash = static_cast<uint64_t>(i)});
    }
    PacketNetworkModel net(*cluster);
    sim::Engine engine;
    const Recorder r = run_all(net, engine, ts);
    EXPECT_EQ(r.done.size(), ts.size());
    EXPECT_EQ(net.bytes_delivered(), Bytes::mib(64));
    return r.last();
  };
  const Time ecmp = slowest(topology::Routing::ecmp);
  const Time adaptive = slowest(topology::Routing::adaptive);
  EXPECT_LT(adaptive.seconds(), 0.7 * ecmp.seconds()) << "adaptive " << adaptive.us() << " us, ecmp " << ecmp.us() << " us";
}

// DCQCN on a 7-to-1 incast of 16 MiB each into one 400 Gb/s down link.
struct IncastRun {
  Time last;
  Bytes peak;   // credits in use on one link
  Bytes queue;  // bytes waiting at one output port
  uint64_t marks = 0, cnps = 0;
  Bytes delivered;
};

IncastRun incast(bool dcqcn, int senders, Bytes size, Bytes buffer = Bytes::mib(32)) {
  StarCluster star(senders + 1, kBw, Time::us(1));
  PacketNetworkModel net(star, {.mtu = Bytes(4096),
                                .buffer_per_port = buffer,
                                .dcqcn = {.enabled = dcqcn},
                                .link_efficiency = {}});
  std::vector<Transfer> ts;
  for (int i = 0; i < senders; ++i) ts.push_back({.src_gpu = i, .dst_gpu = senders, .bytes = size});
  sim::Engine engine;
  const Recorder r = run_all(net, engine, ts);
  EXPECT_EQ(r.done.size(), static_cast<size_t>(senders));
  return {r.last(), net.peak_buffer_occupancy(), net.peak_queue(), net.ecn_marks(), net.cnps(), net.bytes_delivered()};
}

// Deep (32 MiB) lossless buffers: with credits alone, each sender's 16 MiB fit its link's receive
// buffer, so each sends at line rate and what the shared down link has not drained, 6/7 of it, waits
// at the switch: the down port's queue reaches 6 x 16 MiB. With DCQCN the marks past kmin bring
// CNPs that cut the senders' rates before the queue is a ninth of that. (With the paper's
// settings, made for 40 Gb/s, the rates then recover slowly at 400 Gb/s: the incast takes about 7
// times its ideal time; docs/packet-model.md.)
TEST(PacketNetworkModel, DcqcnHoldsADeepIncastQueueFarBelowTheBuffer) {
  const Bytes size = Bytes::mib(16);
  const IncastRun credits = incast(false, 7, size);
  const IncastRun dcqcn = incast(true, 7, size);
  EXPECT_EQ(credits.marks, 0u);
  EXPECT_GE(credits.peak.as_double(), size.as_double() * 6 / 7);
  EXPECT_GE(credits.queue, size * 6);
  EXPECT_GT(dcqcn.marks, 0u);
  EXPECT_GT(dcqcn.cnps, 0u);
  EXPECT_LT(dcqcn.queue.as_double(), credits.queue.as_double() / 9);
  EXPECT_LT(dcqcn.queue, Bytes::mib(12));
  EXPECT_EQ(dcqcn.delivered, size * 7);
  EXPECT_NEAR(credits.last.seconds() / kBw.transfer_time(size * 7).seconds(), 1.0, 0.01);
}

// PFC-sized buffers: 16 KiB a link, so the down port's queue stays within 7 x 16 KiB, well under
// kmax (200 KB): the senders are trimmed, and the down link stays busy. (A receive buffer per
// ingress link lets the egress queue reach senders x buffer: with 256 KiB each it is 1.7 MB, every
// packet past kmax is marked, and the incast takes twice its ideal time; docs/packet-model.md.)
TEST(PacketNetworkModel, DcqcnWithShallowBuffersKeepsTheDownLinkBusy) {
  const Bytes size = Bytes::mib(16);
  const Bytes buffer = Bytes::kib(16);
  const IncastRun dcqcn = incast(true, 7, size, buffer);
  EXPECT_GT(dcqcn.cnps, 0u);
  EXPECT_LE(dcqcn.peak, buffer);
  EXPECT_LE(dcqcn.queue, buffer * 7);
  const double ideal = kBw.transfer_time(size * 7).seconds();
  EXPECT_GE(dcqcn.last.seconds(), ideal);
  EXPECT_LT(dcqcn.last.seconds(), 1.15 * ideal) << dcqcn.last.us() << " us, ideal " << ideal * 1e6;
}

TEST(PacketNetworkModel, DcqcnLeavesAnUncongestedTransferAlone) {
  // One sender: its queue never passes kmin, so nothing is marked and the timing is exact.
  const IncastRun credits = incast(false, 1, Bytes::mib(8));
  const IncastRun dcqcn = incast(true, 1, Bytes::mib(8));
  EXPECT_EQ(dcqcn.marks, 0u);
  EXPECT_EQ(dcqcn.last, credits.last);
}

TEST(PacketNetworkModel, DcqcnRunsAreDeterministic) {
  const IncastRun a = incast(true, 5, Bytes::mib(4));
  const IncastRun b = incast(true, 5, Bytes::mib(4));
  EXPECT_EQ(a.last, b.last);
  EXPECT_EQ(a.marks, b.marks);
  EXPECT_EQ(a.cnps, b.cnps);
}

TEST(PacketNetworkModel, SameInputGivesTheSameFingerprint) {
  const auto cluster = hgx_h100(4);
  auto run = [&] {
    sim::Rng rng(7, sim::stream_id("packet-model-plan"));
    std::vector<Transfer> ts;
    for (int i = 0; i < 64; ++i) {
      const int src = static_cast<int>(rng.below(32));
      const int dst = static_cast<int>(rng.below(32));
      ts.push_back({src, dst, Bytes(static_cast<int64_t>(1 + rng.below(1 << 20))), rng.next()});
    }
    PacketNetworkModel net(*cluster, {.mtu = Bytes(4096),
                                      .buffer_per_port = Bytes::kib(32),
                                      .dcqcn = {},
                                      .link_efficiency = {}});
    sim::Engine engine;
    Recorder r = run_all(net, engine, ts);
    EXPECT_EQ(r.done.size(), ts.size());
    return std::pair(engine.fingerprint(), r.done);
  };
  const auto a = run();
  const auto b = run();
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second, b.second);
}

}  // namespace
}  // namespace dtsim::network
