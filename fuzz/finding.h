// What a fuzz target does on a finding: print it on one line and abort, so that libFuzzer saves
// the input. reads_or_refuses runs a reader on fuzz input: an InputError is the expected answer to
// bad input; any other exception is a finding.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "sim/error.h"

namespace dtsim::fuzz {

[[noreturn]] inline void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Runs read(); true when it returned, false when it refused the input with an InputError.
template <class Read>
bool reads_or_refuses(const char* reader, Read&& read) {
  try {
    read();
    return true;
  } catch (const InputError&) {
    return false;
  } catch (const std::exception& e) {
    finding((std::string(reader) + " threw something other than InputError").c_str(), e.what());
  }
}

// A figure a reader handed on must be a finite number of at least zero.
inline void check_figure(const char* what, double v) {
  if (!std::isfinite(v) || v < 0) finding("a read figure is negative or not finite", what + (": " + std::to_string(v)));
}

}  // namespace dtsim::fuzz
