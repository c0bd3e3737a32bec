// nccl-tests' -J JSON report: {"version", "args", "config": {..., "devices": [...]},
// "results": [{"size", "count", "type", "redop", "root", "out_of_place": {"time", "alg_bw",
// "bus_bw", "nwrong"}, "in_place": {...}}], "average_bus_bandwidth": {...}}.
//   MeasurementSet set = parse_nccl_tests_json(text, "allreduce.json");
#pragma once

#include <string>
#include <string_view>

#include "validation/nccl_tests_parser.h"

namespace dtsim::validation {

// Throws InputError with the line and column of a syntax error, or the result index and key of
// a missing or mistyped value.
MeasurementSet parse_nccl_tests_json(std::string_view text, const std::string& source,
                                     const NcclTestsParseOptions& options = {});

}  // namespace dtsim::validation
