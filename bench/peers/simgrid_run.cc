#include "bench/peers/simgrid_run.h"

#include <xbt/log.h>

#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <string>
#include <vector>
#include <xbt/config.hpp>

namespace dtsim::bench::peers {
namespace {

namespace sg4 = simgrid::s4u;

// Throws unless SimGrid's configuration value `key` is `expected`.
void require_config(const std::string& key, double expected) {
  const double v = simgrid::config::get_value<double>(key);
  if (v != expected) {
    throw std::runtime_error("SimGrid's " + key + " is " + std::to_string(v) +
                             ", the comparison needs " + std::to_string(expected));
  }
}

}  // namespace

std::optional<SimgridLatency> parse_simgrid_latency(std::string_view s) {
  if (s == "after-drain") return SimgridLatency::after_drain;
  if (s == "links") return SimgridLatency::links;
  return std::nullopt;
}

PeerRun run_simgrid(const topology::Cluster& cluster, std::span<const network::Transfer> flows,
                    const network::LinkEfficiency& efficiency, SimgridLatency latency) {
  const RunClock timer;
  int argc = 1;
  std::string program = "flow_vs_simgrid";
  char* argv[] = {program.data(), nullptr};
  sg4::Engine engine(&argc, argv);
  xbt_log_control_set("root.thresh:warning");
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");

  sg4::NetZone* zone = sg4::create_full_zone("fabric");
  std::vector<sg4::Host*> hosts(static_cast<size_t>(cluster.gpu_count()), nullptr);
  auto host = [&](int gpu) {
    sg4::Host*& h = hosts[static_cast<size_t>(gpu)];
    if (h == nullptr) h = zone->create_host("gpu" + std::to_string(gpu), 1e9)->seal();
    return h;
  };
  std::vector<sg4::Link*> links(cluster.links().size(), nullptr);
  std::vector<double> route_latency(flows.size(), 0);
  std::vector<sg4::LinkInRoute> route;
  for (size_t i = 0; i < flows.size(); ++i) {
    const network::Transfer& t = flows[i];
    route.clear();
    for (topology::LinkId l : network::transfer_route(cluster, t)) {
      const topology::Link& link = cluster.link(l);
      sg4::Link*& s = links[l];
      if (s == nullptr) {
        s = zone->create_link("link" + std::to_string(l),
                              link.bandwidth.bytes_per_s() * efficiency.of(link.kind));
        s->set_latency(latency == SimgridLatency::links ? link.latency.seconds() : 0.0);
        s->seal();
      }
      route_latency[i] += link.latency.seconds();
      route.emplace_back(s);
    }
    const bool symmetrical = false;
    zone->add_route(host(t.src_gpu)->get_netpoint(), host(t.dst_gpu)->get_netpoint(), nullptr,
                    nullptr, route, symmetrical);
  }
  zone->seal();
  require_config("network/latency-factor", 1);
  require_config("network/bandwidth-factor", 1);
  require_config("network/weight-S", 0);
  if (simgrid::config::get_value<std::string>("network/model") != "CM02" ||
      simgrid::config::get_value<bool>("network/crosstraffic")) {
    throw std::runtime_error("SimGrid is not running CM02 without cross-traffic");
  }

  // Declared after the engine, so the comms are released before it.
  std::vector<sg4::CommPtr> comms(flows.size());
  sg4::Actor::create("starter", host(flows.empty() ? 0 : flows.front().src_gpu), [&] {
    for (size_t i = 0; i < flows.size(); ++i) {
      const network::Transfer& t = flows[i];
      comms[i] = sg4::Comm::sendto_async(host(t.src_gpu), host(t.dst_gpu),
                                         static_cast<uint64_t>(t.bytes.count()));
    }
    sg4::Comm::wait_all(comms);
  });
  engine.run();

  PeerRun run;
  run.completion_s.resize(flows.size());
  for (size_t i = 0; i < flows.size(); ++i) {
    run.completion_s[i] = comms[i]->get_finish_time();
    if (latency == SimgridLatency::after_drain) run.completion_s[i] += route_latency[i];
  }
  comms.clear();
  run.wall_s = timer.wall_s();
  run.cpu_s = timer.cpu_s();
  return run;
}

}  // namespace dtsim::bench::peers
