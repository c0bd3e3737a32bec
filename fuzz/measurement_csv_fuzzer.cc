// libFuzzer target for the measured CSV reader (validation/measurement_csv.h) and the format
// detection in front of every measurement reader: any bytes are read or refused with an InputError.
//   scripts/fuzz.sh 600 measurement_csv
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/measurement_fuzzer_checks.h"
#include "validation/measurement_csv.h"
#include "validation/measurement_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace dtsim;
  std::vector<validation::MeasurementSet> sets;
  if (fuzz::reads_or_refuses("read_measurement_csv", [&] { sets = validation::read_measurement_csv(text, "fuzz.csv"); })) {
    fuzz::check_sets(sets);
  }
  if (fuzz::reads_or_refuses("parse_measurements", [&] { sets = validation::parse_measurements(text, "fuzz.csv"); })) {
    fuzz::check_sets(sets);
  }
  return 0;
}
