// Writes collective-sweep rows in the three formats `simulate` offers: a table laid out like
// nccl-tests' output, CSV with exactly the columns a measured file is diffed against
// (collective,size_bytes,time_us,algbw_GBps,busbw_GBps,algorithm,protocol), and JSON.
//   report::write_sweep(rows, report::SweepFormat::table, std::cout);
#pragma once

#include <iosfwd>
#include <string_view>
#include <vector>

#include "workloads/collective_sweep.h"

namespace dtsim::report {

enum class SweepFormat { table, csv, json };

void write_sweep(const std::vector<workloads::SweepRow>& rows, SweepFormat format,
                 std::ostream& out);

}  // namespace dtsim::report
