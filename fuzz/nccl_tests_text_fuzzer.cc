// libFuzzer target for the nccl-tests text reader (validation/nccl_tests_parser.h): any bytes are
// read into measurement sets or refused with an InputError, with no collective named and with one
// named as validate names the scenario's.
//   scripts/fuzz.sh 600 nccl_tests_text
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/measurement_fuzzer_checks.h"
#include "validation/nccl_tests_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace dtsim;
  validation::NcclTestsParseOptions named;
  named.collective = collectives::CollectiveKind::all_reduce;
  for (const validation::NcclTestsParseOptions& options : {validation::NcclTestsParseOptions{}, named}) {
    std::vector<validation::MeasurementSet> sets;
    if (fuzz::reads_or_refuses("parse_nccl_tests_output",
                               [&] { sets = validation::parse_nccl_tests_output(text, "fuzz.txt", options); })) {
      fuzz::check_sets(sets);
    }
  }
  (void)validation::looks_like_nccl_tests_output(text);
  return 0;
}
