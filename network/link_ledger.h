// LinkLedger: a NetworkModel that hands every transfer to another model and adds its bytes to
// each directed link of its routed path (the path every model takes: transfer_paths; a sprayed
// transfer's bytes split over its routes as the flow model splits them, spray_share), so a run
// on the flow or packet model can report how much crossed each link and how busy that kept it.
// It also times, per link, how long at least one transfer crossing it was in flight (busy):
// it stands between the model and each transfer's handler, without events of its own.
// On a partitioned engine (sim/partitioned_engine.h; set_partitions) a transfer starts in its
// sender's partition and completes in its receiver's, so each partition keeps its own part of the
// ledger (Shard), written only by its own events: the bytes of the transfers it started, those
// transfers (their links and start, read by the receiver's partition at completion as a packet
// header would be, never written after the start) and the completions it saw. loads() adds the
// parts up and times each link from the transfers' intervals, which gives the serial run's table.
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
#include "sim/stable_pool.h"

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
  bool operator==(const LinkLoad&) const = default;
};

class LinkLedger final : public NetworkModel, private sim::EventHandler {
 public:
  LinkLedger(const topology::Cluster& cluster, NetworkModel& inner);

  std::string_view name() const override { return inner_.name(); }
  void start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done, uint64_t payload) override;
  Bytes bytes_delivered() const override { return inner_.bytes_delivered(); }
  NetworkCounters counters() const override { return inner_.counters(); }
  sim::Site site_of_gpu(int gpu) const override { return inner_.site_of_gpu(gpu); }

  // Makes room for a run on a PartitionedEngine of `partitions` partitions, before any transfer
  // starts; a plain Engine needs one, the default.
  void set_partitions(uint32_t partitions);

  // Links that carried bytes since the last clear(), in link order, with their utilisation over
  // `elapsed` (0 when elapsed is 0). With partitions, after the run (not while it runs).
  std::vector<LinkLoad> loads(Time elapsed) const;
  // With partitions, only while no transfer is in flight (std::logic_error otherwise).
  void clear();

 private:
  // A transfer handed to the inner model: whose handler gets its completion, and its links.
  struct InFlight {
    sim::EventHandler* done = nullptr;
    uint64_t payload = 0;
    std::vector<topology::LinkId> links;
  };
  // With partitions: a transfer a partition started, kept until the end of the run (the sender's
  // partition cannot learn when its slot could be reused), and a completion one saw.
  struct Started {
    sim::EventHandler* done = nullptr;
    uint64_t payload = 0;
    int64_t start_ps = 0;
    std::vector<topology::LinkId> links;
  };
  struct Completion {
    uint64_t id = 0;  // the sender's partition in the high 32 bits, its slot in the low
    int64_t end_ps = 0;
  };
  struct Shard {
    std::vector<int64_t> bytes;  // by LinkId, of the transfers this partition started
    sim::StablePool<Started> started;
    std::vector<Completion> completions;
  };
  void on_event(sim::Engine& engine, uint64_t slot) override;
  // The links of t's routed paths, each once, after adding t's bytes to `bytes` (by LinkId).
  std::vector<topology::LinkId> add_bytes(const Transfer& t, std::vector<int64_t>& bytes) const;
  // With partitions: busy time by LinkId from the started transfers' intervals, a link's time
  // counted when the last transfer crossing it completes (as the serial count is).
  std::vector<int64_t> busy_from_shards() const;

  const topology::Cluster& cluster_;
  NetworkModel& inner_;
  std::vector<int64_t> bytes_;        // by LinkId
  std::vector<int32_t> active_;       // transfers in flight crossing it, by LinkId
  std::vector<int64_t> busy_since_;   // ps: when it last went from idle to busy
  std::vector<int64_t> busy_ps_;      // ps busy before busy_since_
  std::vector<InFlight> in_flight_;
  std::vector<uint64_t> free_;
  std::vector<Shard> shards_;  // with partitions: one per partition; empty on a plain Engine
};

}  // namespace dtsim::network
