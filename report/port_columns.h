// The packet model's port counters (network::PortStats) as the per-link tables write them: six
// CSV columns after a table's own, and the same keys in a JSON row. A table writes them only when
// some row has them (a packet run), so a flow run's table keeps its columns.
//   out << "link,bytes" << (ports ? kPortCsvHeader : "") << '\n';
//   out << row << port_csv_cells(load.port, ports) << '\n';
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "network/network_model.h"

namespace dtsim::report {

inline constexpr std::string_view kPortCsvHeader =
    ",peak_egress_bytes,peak_ingress_bytes,pause_frames,paused_us,drops,ecn_marks";

// The row's cells, each after a comma; empty cells for a row without counters in a table that has
// them, nothing in a table without.
inline std::string port_csv_cells(const std::optional<network::PortStats>& port,
                                  bool table_has_ports) {
  if (!port) return table_has_ports ? ",,,,,," : "";
  return fmt::format(",{},{},{},{:.6f},{},{}", port->peak_egress.count(),
                     port->peak_ingress.count(), port->pause_frames, port->paused.us(), port->drops,
                     port->ecn_marks);
}

inline void add_port_json(nlohmann::json& row, const std::optional<network::PortStats>& port) {
  if (!port) return;
  row["peak_egress_bytes"] = port->peak_egress.count();
  row["peak_ingress_bytes"] = port->peak_ingress.count();
  row["pause_frames"] = port->pause_frames;
  row["paused_us"] = port->paused.us();
  row["drops"] = port->drops;
  row["ecn_marks"] = port->ecn_marks;
}

}  // namespace dtsim::report
