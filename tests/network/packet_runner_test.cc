// `network.model: packet` through the scenario runner: collective sweeps run on packets and agree
// with flows; what the packet model cannot run is refused by key (exit status 2 in simulate), and
// what it runs without modelling (ECN, DCQCN) is said on stderr.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "runner/scenario_runner.h"
#include "config/loader.h"
#include "sim/error.h"

namespace dtsim::runner {
namespace {

const std::string kScenarios = std::string(DTSIM_SOURCE_DIR) + "/scenarios/";

// The busbw column of each CSV row: collective,size_bytes,time_us,algbw_GBps,busbw_GBps,...
std::vector<double> busbw_column(const std::string& text) {
  std::vector<double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("collective,", 0) == 0 ||
        line.rfind("fingerprint ", 0) == 0)
      continue;
    std::istringstream cells(line);
    std::string cell;
    for (int i = 0; i < 5 && std::getline(cells, cell, ','); ++i) {
    }
    out.push_back(std::stod(cell));
  }
  return out;
}

std::string run_csv(const config::Scenario& s, bool fingerprint = false) {
  RunOptions options;
  options.format = OutputFormat::csv;
  options.quiet = true;
  options.fingerprint = fingerprint;
  std::ostringstream out;
  EXPECT_EQ(run_scenario(s, options, out), 0);
  return out.str();
}

// Expects `s` to be refused with an InputError naming `key`; returns its message.
std::string refusal(const config::Scenario& s, const std::string& key) {
  std::ostringstream out;
  try {
    run_scenario(s, {}, out);
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
    return e.message();
  }
  ADD_FAILURE() << "not refused: " << key;
  return "";
}

TEST(PacketRunner, RingAllReduceSweepOnPacketsAgreesWithFlows) {
  const std::vector<config::Override> common = {{"collectives.algorithm", "ring"},
                                    {"workload.min_bytes", "256MiB"},
                                    {"workload.max_bytes", "256MiB"}};
  auto with_model = [&](const std::string& model) {
    std::vector<config::Override> o = common;
    o.push_back({"network.model", model});
    return config::load_scenario(kScenarios + "default.yaml", o);
  };
  const auto packet = busbw_column(run_csv(with_model("packet")));
  const auto flow = busbw_column(run_csv(with_model("flow")));
  ASSERT_EQ(packet.size(), 1u);
  ASSERT_EQ(flow.size(), 1u);
  EXPECT_NEAR(packet[0] / flow[0], 1.0, 0.02) << "packet " << packet[0] << " flow " << flow[0];
}

TEST(PacketRunner, DefaultPacketSettingsRunAndRepeatExactly) {
  auto s = config::load_scenario(kScenarios + "default.yaml",
                                 {{"network.model", "packet"}, {"workload.max_bytes", "1MiB"}});
  const std::string first = run_csv(s, /*fingerprint=*/true);
  EXPECT_EQ(busbw_column(first).size(), 18u);  // 8 B .. 1 MiB in powers of two
  EXPECT_NE(first.find("fingerprint "), std::string::npos);
  EXPECT_EQ(run_csv(s, true), first);
}

// Runs a packet sweep of `file` with `sets`; returns what it wrote to stderr.
std::string packet_run_stderr(const std::string& file, std::vector<config::Override> sets, size_t rows) {
  sets.push_back({"network.model", "packet"});
  const auto s = config::load_scenario(kScenarios + file, sets);
  std::ostringstream err, out;
  std::streambuf* old = std::cerr.rdbuf(err.rdbuf());
  RunOptions options;
  options.format = OutputFormat::csv;
  const int status = run_scenario(s, options, out);
  std::cerr.rdbuf(old);
  EXPECT_EQ(status, 0) << file;
  EXPECT_EQ(busbw_column(out.str()).size(), rows) << file;
  return err.str();
}

TEST(PacketRunner, TheContractsPacketLineRunsDcqcnOnRoceAndWarnsElsewhere) {
  // SCENARIO.md: packet: {mtu: 4096, buffer_per_port: 32MiB, pfc: true, ecn: true, cc: dcqcn}.
  const std::vector<config::Override> contract = {
      {"network.packet.ecn", "true"}, {"network.packet.cc", "dcqcn"}, {"workload.max_bytes", "64KiB"}};
  // On InfiniBand (default.yaml) DCQCN does not apply, and the run says so.
  const std::string ib = packet_run_stderr("default.yaml", contract, 14);
  EXPECT_NE(ib.find("are RoCE's; on infiniband"), std::string::npos) << ib;
  // On RoCE it runs DCQCN, with nothing to warn about (stderr holds only the run's stated cost).
  auto roce = contract;
  roce.push_back({"workload.min_bytes", "1KiB"});
  const std::string on_roce = packet_run_stderr("a100-2node-roce.yaml", roce, 7);
  EXPECT_EQ(on_roce.find("warning"), std::string::npos) << on_roce;
  EXPECT_EQ(on_roce.rfind("simulate: packet model: 7 rows", 0), 0u) << on_roce;
  // With cc: none and no ECN there is nothing to warn about either.
  const std::string plain = packet_run_stderr(
      "default.yaml", {{"network.packet.ecn", "false"}, {"network.packet.cc", "none"}, {"workload.max_bytes", "64KiB"}}, 14);
  EXPECT_EQ(plain.find("warning"), std::string::npos) << plain;
  // Nor with neither written: on InfiniBand the defaults' DCQCN simply does not apply.
  const std::string unstated = packet_run_stderr("default.yaml", {{"workload.max_bytes", "64KiB"}}, 14);
  EXPECT_EQ(unstated.find("warning"), std::string::npos) << unstated;
}

// cc: dctcp on TCP NICs runs DCTCP's windows with nothing to warn about; a window starting below
// the path's bandwidth-delay product only ever slows a collective down. With lossy flow control,
// or without ECN, it is refused by key.
TEST(PacketRunner, DctcpRunsOnTcpNicsAndIsRefusedLossyOrWithoutEcn) {
  const std::string file = "validation/l40s_2node_tcp_socket_allreduce.yaml";
  const std::vector<config::Override> dctcp = {{"network.packet.cc", "dctcp"},
                                               {"workload.min_bytes", "1MiB"},
                                               {"workload.max_bytes", "4MiB"}};
  const std::string err = packet_run_stderr(file, dctcp, 3);
  EXPECT_EQ(err.find("warning"), std::string::npos) << err;
  // Without it a TCP run is warned, cc written or not: credits without congestion control is no
  // TCP stack.
  const std::string unstated =
      packet_run_stderr(file, {{"workload.min_bytes", "1MiB"}, {"workload.max_bytes", "4MiB"}}, 3);
  EXPECT_NE(unstated.find("on tcp NICs the packet model runs credit flow control"), std::string::npos)
      << unstated;
  auto on = dctcp;
  on.push_back({"network.model", "packet"});
  auto off = on;
  off.push_back({"network.packet.cc", "none"});
  const std::vector<double> windowed = busbw_column(run_csv(config::load_scenario(kScenarios + file, on)));
  const std::vector<double> open = busbw_column(run_csv(config::load_scenario(kScenarios + file, off)));
  ASSERT_EQ(windowed.size(), open.size());
  for (size_t i = 0; i < open.size(); ++i) EXPECT_LE(windowed[i], open[i]) << "row " << i;
  auto lossy = on;
  lossy.push_back({"network.packet.flow_control", "lossy"});
  refusal(config::load_scenario(kScenarios + file, lossy), "network.packet.cc");
  auto no_ecn = on;
  no_ecn.push_back({"network.packet.ecn", "false"});
  refusal(config::load_scenario(kScenarios + file, no_ecn), "network.packet.ecn");
}

TEST(PacketRunner, LossyEthernetIsRefusedButInfinibandWithoutPfcRuns) {
  auto roce = config::load_scenario(kScenarios + "a100-2node-roce.yaml",
                                    {{"network.model", "packet"}, {"network.packet.cc", "none"},
                                     {"network.packet.ecn", "false"}, {"network.packet.pfc", "false"}});
  EXPECT_NE(refusal(roce, "network.packet.pfc").find("lossless"), std::string::npos);
  // The lossy mode runs it: drops and go-back-N retransmission.
  auto lossy = config::load_scenario(kScenarios + "a100-2node-roce.yaml",
                                     {{"network.model", "packet"}, {"network.packet.cc", "none"},
                                      {"network.packet.ecn", "false"}, {"network.packet.pfc", "false"},
                                      {"network.packet.flow_control", "lossy"}, {"workload.max_bytes", "64KiB"}});
  EXPECT_EQ(busbw_column(run_csv(lossy)).size(), 7u);
  // InfiniBand is lossless through its credits whatever pfc says.
  auto ib = config::load_scenario(kScenarios + "default.yaml",
                                  {{"network.model", "packet"}, {"network.packet.pfc", "false"},
                                   {"workload.max_bytes", "64KiB"}});
  EXPECT_EQ(busbw_column(run_csv(ib)).size(), 14u);
}

// PFC runs where the buffers cover every link's headroom and gives the same rows as credits on a
// sweep that never fills a buffer; a buffer below a link's headroom is refused in one line naming
// the link, and so is PFC with pfc: false.
TEST(PacketRunner, PfcRunsAndABufferBelowItsHeadroomIsRefused) {
  const std::vector<config::Override> small = {{"network.model", "packet"}, {"workload.max_bytes", "64KiB"}};
  auto credits = config::load_scenario(kScenarios + "default.yaml", small);
  auto pfc = small;
  pfc.push_back({"network.packet.flow_control", "pfc"});
  EXPECT_EQ(run_csv(config::load_scenario(kScenarios + "default.yaml", pfc)), run_csv(credits));

  auto shallow = pfc;
  shallow.push_back({"network.packet.buffer_per_port", "64KiB"});
  const std::string message = refusal(config::load_scenario(kScenarios + "default.yaml", shallow),
                                      "network.packet.buffer_per_port");
  EXPECT_NE(message.find("needs a buffer of at least"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;

  auto off = pfc;
  off.push_back({"network.packet.pfc", "false"});
  refusal(config::load_scenario(kScenarios + "default.yaml", off), "network.packet.flow_control");
}

// A shared switch buffer runs where the pool covers what it sets aside, and one that cannot hold
// its links' PFC headroom is refused in one line naming the switch and network.packet.shared_buffer.
TEST(PacketRunner, SharedSwitchBufferRunsAndAPoolBelowItsHeadroomIsRefused) {
  const std::vector<config::Override> shared = {{"network.model", "packet"},
                                                {"workload.max_bytes", "64KiB"},
                                                {"network.packet.flow_control", "pfc"},
                                                {"network.packet.switch_buffer", "shared"}};
  EXPECT_FALSE(run_csv(config::load_scenario(kScenarios + "a100-2node-roce.yaml", shared)).empty());
  auto small = shared;
  small.push_back({"network.packet.shared_buffer", "64KiB"});
  const std::string message =
      refusal(config::load_scenario(kScenarios + "a100-2node-roce.yaml", small), "network.packet.shared_buffer");
  EXPECT_NE(message.find("links into it need their PFC headroom"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(PacketRunner, SweepTooLargeForPacketsIsRefusedBeforeItRuns) {
  // Rings to 8 GiB: every byte crosses NVLink and the network 2(n-1)/n times.
  auto s = config::load_scenario(kScenarios + "default.yaml",
                                 {{"network.model", "packet"}, {"collectives.algorithm", "ring"}});
  const std::string message = refusal(s, "network.model");
  EXPECT_NE(message.find("workload.max_bytes"), std::string::npos) << message;
}

// A packet model pays store-and-forward on top of a fluid one, so on the same schedule packets
// finish no earlier than flows, where the two share links alike: not where ECMP puts transfers
// from different switch inputs on one link (a port serves inputs in turn, max-min each flow), nor
// where channels that start together share a NIC (flows keep them in step; docs/flow-model.md,
// Limits). A ring's channel writes its bytes at its cap on both: a packet leaves
// once its bytes are written, the first one too, so a transfer of one packet waits for it as a
// flow does. A channel's steps to its next rank go in order on both (its connection): where a NIC
// hop falls behind the NVLink hops before it (two A100 nodes), a step has the NIC to itself on
// flows as on packets. Every protocol, 4 KiB to 16 MiB, on default.yaml, on a100-2node-roce.yaml,
// and on it with 2 GPUs a node and one channel.
TEST(PacketRunner, PacketsNeverBeatFlowsOnARing) {
  const std::vector<std::pair<const char*, std::vector<config::Override>>> clusters = {
      {"default.yaml", {}},
      {"a100-2node-roce.yaml", {}},
      {"a100-2node-roce.yaml",
       {{"cluster.gpus_per_node", "2"}, {"cluster.nic.count", "2"}, {"collectives.channels", "1"}}}};
  for (const auto& [file, cluster] : clusters) {
    for (const char* protocol : {"ll", "ll128", "simple"}) {
      std::vector<config::Override> ring = {{"collectives.algorithm", "ring"},
                                            {"collectives.protocol", protocol},
                                            {"workload.min_bytes", "4KiB"},
                                            {"workload.max_bytes", "16MiB"},
                                            {"workload.step_factor", "16"}};
      ring.insert(ring.end(), cluster.begin(), cluster.end());
      auto on = [&](const char* model) {
        auto overrides = ring;
        overrides.push_back({"network.model", model});
        return time_collective_sweep(config::load_scenario(kScenarios + file, overrides),
                                     collectives::ModelParameters{}, 1);
      };
      const auto flows = on("flow");
      const auto packets = on("packet");
      ASSERT_EQ(flows.size(), 4u);
      ASSERT_EQ(packets.size(), flows.size());
      for (size_t i = 0; i < flows.size(); ++i) {
        EXPECT_GE(packets[i].time, flows[i].time)
            << file << " (" << cluster.size() << " overrides) " << protocol << " at " << flows[i].bytes.count()
            << " B: packets " << packets[i].time.us() << " us, flows " << flows[i].time.us() << " us";
      }
    }
  }
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `s` with its files in a fresh directory `name` under the temporary one; returns stdout
// (with the fingerprint) and the directory.
std::pair<std::string, std::filesystem::path> run_into(const config::Scenario& s, const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("dtsim_packet_runner_test_" + name);
  std::filesystem::remove_all(dir);
  RunOptions options;
  options.quiet = true;
  options.fingerprint = true;
  options.out_dir = dir.string();
  std::ostringstream out;
  EXPECT_EQ(run_scenario(s, options, out), 0);
  return {out.str(), dir};
}

const std::string kPortColumns = "peak_egress_bytes,peak_ingress_bytes,pause_frames,paused_us,drops,ecn_marks";

// The first line of a file.
std::string header(const std::filesystem::path& path) {
  const std::string text = slurp(path);
  return text.substr(0, text.find('\n'));
}

// A sweep's per-link table on packets carries each row's port counters; on flows it keeps its
// seven columns.
TEST(PacketRunner, SweepLinkTableOnPacketsCarriesPortCounters) {
  const std::vector<config::Override> small = {{"workload.max_bytes", "64KiB"}, {"output.formats", "[table, csv, json]"}};
  auto packets = small;
  packets.push_back({"network.model", "packet"});
  const auto [out, dir] = run_into(config::load_scenario(kScenarios + "default.yaml", packets), "sweep_ports");
  EXPECT_EQ(header(dir / "default.links.csv"),
            "collective,size_bytes,link,kind,bandwidth_GBps,bytes,utilisation," + kPortColumns);
  const auto json = nlohmann::json::parse(slurp(dir / "default.links.json"));
  ASSERT_FALSE(json["links"].empty());
  for (const auto& row : json["links"]) EXPECT_TRUE(row.contains("peak_egress_bytes")) << row.dump();
  auto flows = small;
  flows.push_back({"network.model", "flow"});
  const auto [flow_out, flow_dir] = run_into(config::load_scenario(kScenarios + "default.yaml", flows), "sweep_flows");
  EXPECT_EQ(header(flow_dir / "default.links.csv"), "collective,size_bytes,link,kind,bandwidth_GBps,bytes,utilisation");
}

// A DLRM step online on packets with PFC and shallow buffers: its all_to_alls pause ports. With
// network.packet.sample_interval the trace gains a "ports" process, a queue_bytes counter per
// port that queued and a "paused" span per pause; every other output is byte for byte the run
// without sampling, its fingerprint included, and so is the trace without those tracks (and the
// resolved scenario it quotes, which names the interval).
TEST(PacketRunner, SampledQueuesAddTraceTracksAndChangeNothingElse) {
  std::vector<config::Override> dlrm = {{"network.model", "packet"},
                                        {"cluster.nodes", "2"},
                                        {"network.packet.flow_control", "pfc"},
                                        {"network.packet.buffer_per_port", "256KiB"},
                                        {"workload.dlrm.batch_per_gpu", "512"},
                                        {"workload.dlrm.tables", "128"},
                                        {"output.formats", "[table, csv, json, trace]"}};
  const auto [off_out, off] = run_into(config::load_scenario(kScenarios + "dlrm-64gpu.yaml", dlrm), "unsampled");
  dlrm.push_back({"network.packet.sample_interval", "1us"});
  const auto [on_out, on] = run_into(config::load_scenario(kScenarios + "dlrm-64gpu.yaml", dlrm), "sampled");
  EXPECT_EQ(on_out, off_out);
  for (const char* file : {".csv", ".json", ".ops.csv", ".links.csv", ".links.json"}) {
    EXPECT_EQ(slurp(on / (std::string("dlrm-64gpu") + file)), slurp(off / (std::string("dlrm-64gpu") + file))) << file;
  }
  EXPECT_EQ(header(on / "dlrm-64gpu.links.csv"),
            "link,kind,bandwidth_GBps,bytes,busy_s,utilisation_busy,utilisation_iteration," + kPortColumns);
  uint64_t pause_frames = 0;
  const auto links = nlohmann::json::parse(slurp(on / "dlrm-64gpu.links.json"));
  for (const auto& row : links["links"]) pause_frames += row["pause_frames"].get<uint64_t>();
  EXPECT_GT(pause_frames, 0u);

  auto trace_on = nlohmann::json::parse(slurp(on / "dlrm-64gpu.trace.json"));
  auto trace_off = nlohmann::json::parse(slurp(off / "dlrm-64gpu.trace.json"));
  int ports_pid = -1;
  for (const auto& e : trace_on["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "ports") ports_pid = e["pid"].get<int>();
  }
  ASSERT_GE(ports_pid, 0);
  nlohmann::json others = nlohmann::json::array();
  uint64_t counters = 0, paused = 0;
  for (const auto& e : trace_on["traceEvents"]) {
    if (e["pid"] != ports_pid) {
      others.push_back(e);
      continue;
    }
    if (e["ph"] == "C") {
      ++counters;
      EXPECT_TRUE(e["args"].contains("queue_bytes")) << e.dump();
    }
    if (e["ph"] == "X" && e["name"] == "paused") ++paused;
  }
  EXPECT_GT(counters, 0u);
  EXPECT_EQ(paused, pause_frames);  // every pause resumed within the run
  EXPECT_EQ(others, trace_off["traceEvents"]);
  trace_on["otherData"].erase("scenario");
  trace_off["otherData"].erase("scenario");
  EXPECT_EQ(trace_on["otherData"], trace_off["otherData"]);
}

}  // namespace
}  // namespace dtsim::runner
