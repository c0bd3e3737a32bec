// Text checks a user's YAML gets before yaml-cpp 0.7 sees it: inputs on which that parser loops
// forever (allocating) or misreads, each refused as a YAML syntax error at its line and column.
// Every reader of a user's YAML (scenarios, sweeps, topology graphs, calibration files) calls it.
//   check_yaml_text(text, "scenario.yaml");  // throws InputError, or returns
#pragma once

#include <string>
#include <string_view>

namespace dtsim {

void check_yaml_text(std::string_view text, const std::string& source);

}  // namespace dtsim
