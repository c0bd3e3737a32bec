// LinkLedger: a NetworkModel that hands every transfer to another model and adds its bytes to
// each directed link of its routed path (the path every model takes: transfer_paths; a sprayed
// transfer's bytes split over its routes as the flow model splits them, spray_share), so a run
// on the flow or packet model can report how much crossed each link and how busy that kept it.
// It also times, per link, how long at least one transfer crossing it was in flight (busy):
// it stands between the model and each transfer's handler, without events of its own.
//   network::LinkLedger ledger(cluster, flow_model);
//   schedule_executor_on(ledger) ...;  engine.run();
//   for (const LinkLoad& l : ledger.loads(elapsed)) ...   // links that carried bytes
//   ledger.clear();                                       // before the next measurement
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "network/network_model.h"

namespace dtsim::network {

struct LinkLoad {
  topology::LinkId link = 0;
  std::string name;        // "node0/nic3->leaf1": the two devices' names
  topology::LinkKind kind = topology::LinkKind::network;
  Bandwidth bandwidth;     // of this direction
  Bytes bytes;             // carried since the last clear()
  double utilisation = 0;  // bytes over what the link could carry in the elapsed time
  Time busy;               // how long a transfer crossing it was in flight, since the last clear()
  // The inner model's counters at this link's port over the model's life (clear() keeps them):
  // the packet model's; none on flows.
  std::optional<PortStats> port;
};

class LinkLedger final : public NetworkModel, private sim::EventHandler {
 public:
  LinkLedger(const topology::Cluster& cluster, NetworkModel& inner);

  std::string_view name() const override { return inner_.name(); }
  void start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done, uint64_t payload) override;
  Bytes bytes_delivered() const override { return inner_.bytes_delivered(); }
  NetworkCounters counters() const override { return inner_.counters(); }
  sim::Site site_of_gpu(int gpu) const override { return inner_.site_of_gpu(gpu); }

  // Links that carried bytes since the last clear(), in link order, with their utilisation over
  // `elapsed` (0 when elapsed is 0).
  std::vector<LinkLoad> loads(Time elapsed) const;
  void clear();

 private:
  // A transfer handed to the inner model: whose handler gets its completion, and its links.
  struct InFlight {
    sim::EventHandler* done = nullptr;
    uint64_t payload = 0;
    std::vector<topology::LinkId> links;
  };
  void on_event(sim::Engine& engine, uint64_t slot) override;

  const topology::Cluster& cluster_;
  NetworkModel& inner_;
  std::vector<int64_t> bytes_;        // by LinkId
  std::vector<int32_t> active_;       // transfers in flight crossing it, by LinkId
  std::vector<int64_t> busy_since_;   // ps: when it last went from idle to busy
  std::vector<int64_t> busy_ps_;      // ps busy before busy_since_
  std::vector<InFlight> in_flight_;
  std::vector<uint64_t> free_;
};

}  // namespace dtsim::network
