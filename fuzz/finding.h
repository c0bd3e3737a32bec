// What a fuzz target does on a finding: print it on one line and abort, so that libFuzzer saves
// the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace dtsim::fuzz {

[[noreturn]] inline void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace dtsim::fuzz
