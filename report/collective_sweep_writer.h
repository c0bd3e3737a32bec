// Writes collective-sweep rows in the three formats `simulate` offers: a table laid out like
// nccl-tests' output, CSV with exactly the columns a measured file is diffed against
// (collective,size_bytes,time_us,algbw_GBps,busbw_GBps,algorithm,protocol), and JSON.
//   report::write_sweep(rows, report::SweepFormat::table, std::cout);
#pragma once

#include <iosfwd>
#include <string_view>
#include <vector>

#include "network/link_ledger.h"
#include "workloads/collective_sweep.h"

namespace dtsim::report {

enum class SweepFormat { table, csv, json };

void write_sweep(const std::vector<workloads::SweepRow>& rows, SweepFormat format,
                 std::ostream& out);

// What one sweep row put on one link (flow and packet models only: the analytical model routes
// nothing). `row` indexes the sweep's rows.
struct SweepLinkLoad {
  size_t row = 0;
  network::LinkLoad load;
};

// The per-link table of a sweep, csv or json (table throws std::invalid_argument). CSV columns:
//   collective,size_bytes,link,kind,bandwidth_GBps,bytes,utilisation
// utilisation: the link's bytes over what it could carry during that size's collective.
// On the packet model six columns follow (network::PortStats, the row's run at the link's port):
//   peak_egress_bytes,peak_ingress_bytes,pause_frames,paused_us,drops,ecn_marks
// absent on flows; json rows carry the same keys, or none of them.
void write_sweep_links(const std::vector<workloads::SweepRow>& rows, const std::vector<SweepLinkLoad>& links,
                       SweepFormat format, std::ostream& out);

}  // namespace dtsim::report
