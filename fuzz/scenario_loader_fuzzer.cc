// libFuzzer target for the scenario loader. Any bytes must either load or be rejected with an
// InputError; any other exception, a crash, a hang or a sanitizer report is a finding. A scenario
// that loads must also survive dump_scenario -> load -> dump unchanged.
//   scripts/fuzz.sh 300        # build with the `fuzz` preset and run for 5 minutes
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/loader.h"
#include "fuzz/finding.h"
#include "sim/error.h"

using dtsim::fuzz::finding;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  dtsim::config::Scenario scenario;
  try {
    scenario = dtsim::config::load_scenario_text(text, "fuzz.yaml");
  } catch (const dtsim::InputError&) {
    return 0;  // rejected with a message: the expected answer to bad input
  } catch (const std::exception& e) {
    finding("load threw something other than InputError", e.what());
  }
  const std::string dumped = dtsim::config::dump_scenario(scenario);
  try {
    const std::string again = dtsim::config::dump_scenario(dtsim::config::load_scenario_text(dumped, "fuzz.yaml"));
    if (again != dumped) finding("dump does not round-trip", dumped + "\n---\n" + again);
  } catch (const std::exception& e) {
    finding("a dumped scenario does not load", std::string(e.what()) + "\n" + dumped);
  }
  return 0;
}
