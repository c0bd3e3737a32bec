#include "validation/measurement_reader.h"

#include <fstream>
#include <sstream>

#include "sim/error.h"
#include "validation/measurement_csv.h"
#include "validation/nccl_tests_json.h"
#include "validation/text_fields.h"

namespace dtsim::validation {

MeasurementFormat detect_measurement_format(std::string_view text) {
  std::string_view t = detail::trim(text);
  if (t.starts_with("{")) return MeasurementFormat::nccl_tests_json;
  // The CSV's column line is the first line not starting with '#'.
  for (std::string_view line : detail::split_lines(text)) {
    std::string_view l = detail::trim(line);
    if (l.empty() || l.starts_with("#")) continue;
    if (l.starts_with("collective,")) return MeasurementFormat::csv;
    break;
  }
  if (looks_like_nccl_tests_output(text)) return MeasurementFormat::nccl_tests_text;
  return MeasurementFormat::csv;
}

std::string read_text_file(const std::string& path) { return read_input_file(path, ""); }

std::vector<MeasurementSet> parse_measurements(std::string_view text, const std::string& source,
                                               const NcclTestsParseOptions& options) {
  switch (detect_measurement_format(text)) {
    case MeasurementFormat::nccl_tests_json:
      return {parse_nccl_tests_json(text, source, options)};
    case MeasurementFormat::nccl_tests_text:
      return parse_nccl_tests_output(text, source, options);
    case MeasurementFormat::csv:
      break;
  }
  // A measurement CSV names each row's collective (a required column): nothing to fall back on.
  return read_measurement_csv(text, source);
}

std::vector<MeasurementSet> read_measurements(const std::string& path,
                                              const NcclTestsParseOptions& options) {
  return parse_measurements(read_text_file(path), path, options);
}

}  // namespace dtsim::validation
