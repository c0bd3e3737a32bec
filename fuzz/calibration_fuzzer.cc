// libFuzzer target for the calibration file reader (collectives/model_parameters.h): any bytes
// are read or refused with an InputError; parameters that read write out and read back to the
// same values.
//   scripts/fuzz.sh 600 calibration
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string_view>

#include "collectives/model_parameters.h"
#include "fuzz/finding.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace dtsim;
  collectives::ModelParameters p;
  if (!fuzz::reads_or_refuses("parse_calibration", [&] { p = collectives::parse_calibration(text, "fuzz-calibration.yaml"); }))
    return 0;
  std::ostringstream out;
  collectives::write_calibration(p, out);
  collectives::ModelParameters again;
  if (!fuzz::reads_or_refuses("parse_calibration (written back)",
                              [&] { again = collectives::parse_calibration(out.str(), "written.yaml"); })) {
    fuzz::finding("a written calibration does not read back", out.str());
  }
  std::ostringstream twice;
  collectives::write_calibration(again, twice);
  if (twice.str() != out.str()) fuzz::finding("a calibration does not round-trip", out.str() + "\n---\n" + twice.str());
  return 0;
}
