// The sweep page: a sweep's results table as one self-contained HTML page: a summary, scaling
// curves of the time metric against the sweep's size key (one curve per setting of the other
// keys), the Pareto front of time against capex, and the front's rows.
//   report::write_sweep_html(table, sweep.name, out);
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "report/sweep_table.h"

namespace dtsim::report {

// The varied key the scaling curves run along: a key whose values are all numbers, at least two
// of them distinct, preferring one that names nodes or GPUs. nullopt when there is none.
std::optional<std::size_t> scaling_key(const SweepTable& table);

void write_sweep_html(const SweepTable& table, const std::string& name, std::ostream& out);

}  // namespace dtsim::report
