// LinkLedger: a NetworkModel that hands every transfer to another model and adds its bytes to
// each directed link of its routed path (the path every model takes: transfer_paths; a sprayed
// transfer's bytes split over its routes as the flow model splits them, spray_share), so a run
// on the flow or packet model can report how much crossed each link and how busy that kept it.
//   network::LinkLedger ledger(cluster, flow_model);
//   schedule_executor_on(ledger) ...;  engine.run();
//   for (const LinkLoad& l : ledger.loads(elapsed)) ...   // links that carried bytes
//   ledger.clear();                                       // before the next measurement
#pragma once

#include <cstdint>
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
};

class LinkLedger final : public NetworkModel {
 public:
  LinkLedger(const topology::Cluster& cluster, NetworkModel& inner);

  std::string_view name() const override { return inner_.name(); }
  void start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done, uint64_t payload) override;
  Bytes bytes_delivered() const override { return inner_.bytes_delivered(); }
  NetworkCounters counters() const override { return inner_.counters(); }

  // Links that carried bytes since the last clear(), in link order, with their utilisation over
  // `elapsed` (0 when elapsed is 0).
  std::vector<LinkLoad> loads(Time elapsed) const;
  void clear();

 private:
  const topology::Cluster& cluster_;
  NetworkModel& inner_;
  std::vector<int64_t> bytes_;  // by LinkId
};

}  // namespace dtsim::network
