// One entry point for every measurement format: looks at a file's content (not its extension)
// and hands it to the CSV, nccl-tests text or nccl-tests JSON reader.
//   std::vector<MeasurementSet> sets = read_measurements("logs/allreduce_2node.txt");
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "validation/nccl_tests_parser.h"

namespace dtsim::validation {

enum class MeasurementFormat { csv, nccl_tests_text, nccl_tests_json };

MeasurementFormat detect_measurement_format(std::string_view text);

// Throws InputError when the file cannot be read or is in none of the formats.
std::vector<MeasurementSet> read_measurements(const std::string& path,
                                              const NcclTestsParseOptions& options = {});
std::vector<MeasurementSet> parse_measurements(std::string_view text, const std::string& source,
                                               const NcclTestsParseOptions& options = {});

// Reads a whole file; InputError naming the path when it cannot.
std::string read_text_file(const std::string& path);

}  // namespace dtsim::validation
