// The measurement CSV of validation/measured/: '#' header lines, then
//   collective,size_bytes,time_us,algbw_GBps,busbw_GBps,placement
// One file may hold several blocks ("all_reduce:A40_2gpu_NVLinkBridge"), each read as its own
// MeasurementSet. nccl-replay writes the same format, so its output feeds validate directly.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "validation/measurement.h"

namespace dtsim::validation {

// Throws InputError naming `source`, the line and the column on any malformed row.
std::vector<MeasurementSet> read_measurement_csv(std::string_view text, const std::string& source);

// Writes `set` with its header lines (each prefixed "# "), the column line and one row per point.
void write_measurement_csv(std::ostream& out, const MeasurementSet& set);

}  // namespace dtsim::validation
