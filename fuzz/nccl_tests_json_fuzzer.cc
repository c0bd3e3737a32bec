// libFuzzer target for nccl-tests' -J JSON reader (validation/nccl_tests_json.h): any bytes are
// read into a measurement set or refused with an InputError.
//   scripts/fuzz.sh 600 nccl_tests_json
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/measurement_fuzzer_checks.h"
#include "validation/nccl_tests_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace dtsim;
  validation::MeasurementSet set;
  if (fuzz::reads_or_refuses("parse_nccl_tests_json", [&] { set = validation::parse_nccl_tests_json(text, "fuzz.json"); })) {
    fuzz::check_sets({set});
  }
  return 0;
}
