#include "bench/peers/ns3_run.h"

#include <ns3/boolean.h>
#include <ns3/config.h>
#include <ns3/data-rate.h>
#include <ns3/inet-socket-address.h>
#include <ns3/internet-stack-helper.h>
#include <ns3/ipv4-address-helper.h>
#include <ns3/ipv4-global-routing-helper.h>
#include <ns3/net-device-container.h>
#include <ns3/node-container.h>
#include <ns3/nstime.h>
#include <ns3/packet.h>
#include <ns3/point-to-point-helper.h>
#include <ns3/rng-seed-manager.h>
#include <ns3/simulator.h>
#include <ns3/socket.h>
#include <ns3/string.h>
#include <ns3/traffic-control-helper.h>
#include <ns3/udp-socket-factory.h>
#include <ns3/uinteger.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace dtsim::bench::peers {
namespace {

constexpr uint16_t kPort = 9;

// Sends one host's flows: a packet of the next flow with bytes left, round robin, each as soon as
// the previous one has left the host's link (its serialization time at the link's rate).
class HostSender {
 public:
  struct Flow {
    ns3::InetSocketAddress to;
    int64_t unsent;  // bytes on the wire still to send
  };
  HostSender(const ns3::Ptr<ns3::Socket>& socket, ns3::DataRate rate, int64_t mtu)
      : socket_(socket), rate_(rate), mtu_(mtu) {}
  void add(ns3::Ipv4Address to, int64_t wire_bytes) {
    if (wire_bytes > 0) flows_.push_back({ns3::InetSocketAddress(to, kPort), wire_bytes});
  }
  bool idle() const { return flows_.empty(); }

  // Sends the next flow's next packet and, while any flow has bytes left, comes back when it has
  // left the link. A flow leaves the turn when its last packet is sent.
  void send() {
    Flow& f = flows_[next_];
    const int64_t wire = std::min(mtu_, f.unsent);
    f.unsent -= wire;
    const auto payload = static_cast<uint32_t>(std::max<int64_t>(0, wire - kNs3HeaderBytes));
    socket_->SendTo(ns3::Create<ns3::Packet>(payload), 0, f.to);
    if (f.unsent == 0) {
      flows_.erase(flows_.begin() + static_cast<std::ptrdiff_t>(next_));
    } else {
      ++next_;
    }
    if (next_ >= flows_.size()) next_ = 0;
    if (!flows_.empty()) {
      ns3::Simulator::Schedule(rate_.CalculateBytesTxTime(static_cast<uint32_t>(wire)),
                               &HostSender::send, this);
    }
  }

 private:
  ns3::Ptr<ns3::Socket> socket_;
  ns3::DataRate rate_;
  int64_t mtu_;
  std::vector<Flow> flows_;
  size_t next_ = 0;
};

// Counts each flow's bytes at its receiver and records when the last one arrives.
class Receivers {
 public:
  Receivers(std::span<const network::Transfer> flows, std::vector<double>& completion_s)
      : completion_s_(completion_s), left_(flows.size()) {
    for (size_t i = 0; i < flows.size(); ++i) {
      const uint64_t key = pair_key(flows[i].src_gpu, flows[i].dst_gpu);
      if (!flow_of_.emplace(key, i).second) {
        throw std::invalid_argument("ns-3 run: two flows join GPUs " +
                                    std::to_string(flows[i].src_gpu) + " and " +
                                    std::to_string(flows[i].dst_gpu));
      }
      left_[i] = flows[i].bytes.count();
      if (left_[i] <= 0) completion_s_[i] = 0;  // nothing to send: done at the start
    }
  }
  void host_address(ns3::Ipv4Address a, int gpu) { gpu_of_[a.Get()] = gpu; }

  void receive(int dst_gpu, const ns3::Ptr<ns3::Socket>& socket) {
    ns3::Address from;
    while (ns3::Ptr<ns3::Packet> p = socket->RecvFrom(from)) {
      const int src_gpu = gpu_of_.at(ns3::InetSocketAddress::ConvertFrom(from).GetIpv4().Get());
      const size_t flow = flow_of_.at(pair_key(src_gpu, dst_gpu));
      left_[flow] -= p->GetSize() + kNs3HeaderBytes;
      if (left_[flow] <= 0) completion_s_[flow] = ns3::Simulator::Now().GetSeconds();
    }
  }

 private:
  static uint64_t pair_key(int src, int dst) {
    return static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32 | static_cast<uint32_t>(dst);
  }
  std::vector<double>& completion_s_;
  std::vector<int64_t> left_;  // wire bytes still to arrive, per flow
  std::unordered_map<uint64_t, size_t> flow_of_;
  std::unordered_map<uint32_t, int> gpu_of_;
};

}  // namespace

PeerRun run_ns3(const topology::Cluster& cluster, std::span<const network::Transfer> flows,
                const network::LinkEfficiency& efficiency, const Ns3Options& options) {
  if (options.mtu.count() <= kNs3HeaderBytes) {
    throw std::invalid_argument("ns-3 run: mtu must exceed the " + std::to_string(kNs3HeaderBytes) +
                                " header bytes");
  }
  if (cluster.spec().gpus_per_node != 1) {
    throw std::invalid_argument("ns-3 run: a host has one GPU (a flow's GPU is its host)");
  }
  const RunClock timer;
  PeerRun run;
  run.completion_s.assign(flows.size(), -1);
  ns3::Time::SetResolution(ns3::Time::PS);
  ns3::RngSeedManager::SetSeed(static_cast<uint32_t>(options.seed % 0xffffffffU) + 1);
  ns3::Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", ns3::BooleanValue(true));

  // A node per dtsim node (its devices as one host) and one per fabric switch.
  const int hosts = cluster.spec().nodes;
  std::vector<int> node_of(cluster.devices().size(), -1);
  int nodes = hosts;
  for (size_t d = 0; d < cluster.devices().size(); ++d) {
    const topology::Device& dev = cluster.devices()[d];
    node_of[d] = dev.node >= 0                                      ? dev.node
                 : dev.kind == topology::DeviceKind::network_switch ? nodes++
                                                                    : -1;
  }
  ns3::NodeContainer net;
  net.Create(static_cast<uint32_t>(nodes));
  ns3::InternetStackHelper stack;
  stack.SetIpv6StackInstall(false);
  stack.Install(net);

  ns3::PointToPointHelper p2p;
  p2p.SetDeviceAttribute("Mtu", ns3::UintegerValue(static_cast<uint64_t>(options.mtu.count())));
  p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns3::StringValue("1000000p"));
  ns3::Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.252");
  ns3::TrafficControlHelper queue_discs;
  Receivers receivers(flows, run.completion_s);
  std::vector<ns3::Ipv4Address> host_address(static_cast<size_t>(hosts));
  std::vector<ns3::DataRate> host_rate(static_cast<size_t>(hosts));
  const auto links = cluster.links();
  for (size_t l = 0; l < links.size(); l += 2) {  // links come in pairs (l, l ^ 1)
    const topology::Link& link = links[l];
    if (link.kind != topology::LinkKind::network) continue;
    const int a = node_of[link.from];
    const int b = node_of[link.to];
    const ns3::DataRate rate(
        static_cast<uint64_t>(link.bandwidth.bytes_per_s() * 8 * efficiency.of(link.kind)));
    p2p.SetDeviceAttribute("DataRate", ns3::DataRateValue(rate));
    p2p.SetChannelAttribute("Delay", ns3::TimeValue(ns3::PicoSeconds(link.latency.ps())));
    const ns3::NetDeviceContainer pair =
        p2p.Install(net.Get(static_cast<uint32_t>(a)), net.Get(static_cast<uint32_t>(b)));
    const ns3::Ipv4InterfaceContainer ifs = addresses.Assign(pair);
    addresses.NewNetwork();
    queue_discs.Uninstall(pair);
    for (uint32_t end = 0; end < 2; ++end) {
      const int node = end == 0 ? a : b;
      if (node < hosts) {
        host_address[static_cast<size_t>(node)] = ifs.GetAddress(end);
        host_rate[static_cast<size_t>(node)] = rate;
        receivers.host_address(ifs.GetAddress(end), node);
      }
    }
  }
  ns3::Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  const int64_t mtu = options.mtu.count();
  std::vector<std::unique_ptr<HostSender>> senders(static_cast<size_t>(hosts));
  for (int h = 0; h < hosts; ++h) {
    ns3::Ptr<ns3::Node> node = net.Get(static_cast<uint32_t>(h));
    ns3::Ptr<ns3::Socket> rx = ns3::Socket::CreateSocket(node, ns3::UdpSocketFactory::GetTypeId());
    rx->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), kPort));
    rx->SetRecvCallback(
        [&receivers, h](const ns3::Ptr<ns3::Socket>& s) { receivers.receive(h, s); });
    ns3::Ptr<ns3::Socket> tx = ns3::Socket::CreateSocket(node, ns3::UdpSocketFactory::GetTypeId());
    tx->Bind();
    senders[static_cast<size_t>(h)] =
        std::make_unique<HostSender>(tx, host_rate[static_cast<size_t>(h)], mtu);
  }
  for (const network::Transfer& t : flows) {
    const int src = cluster.node_of(t.src_gpu);
    const int dst = cluster.node_of(t.dst_gpu);
    if (src == dst) throw std::invalid_argument("ns-3 run: a flow inside one host");
    senders[static_cast<size_t>(src)]->add(host_address[static_cast<size_t>(dst)], t.bytes.count());
  }
  for (int h = 0; h < hosts; ++h) {
    HostSender* s = senders[static_cast<size_t>(h)].get();
    if (!s->idle()) {
      ns3::Simulator::ScheduleWithContext(static_cast<uint32_t>(h), ns3::Seconds(0),
                                          &HostSender::send, s);
    }
  }
  ns3::Simulator::Run();
  run.events = ns3::Simulator::GetEventCount();
  ns3::Simulator::Destroy();
  const auto incomplete = std::count(run.completion_s.begin(), run.completion_s.end(), -1.0);
  if (incomplete > 0) {
    throw std::runtime_error("ns-3 run: " + std::to_string(incomplete) +
                             " flows never received every byte (packets dropped)");
  }
  run.wall_s = timer.wall_s();
  run.cpu_s = timer.cpu_s();
  return run;
}

}  // namespace dtsim::bench::peers
