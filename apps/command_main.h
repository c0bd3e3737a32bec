// The exit-status contract every dtsim command keeps: 0 done (or the command's own status),
// 2 bad input (an InputError, printed as one line naming the place and key), 1 internal error.
//   int main(int argc, char** argv) { return command_main("validate", [&] { return run(argc, argv); }); }
#pragma once

#include <exception>
#include <iostream>
#include <string_view>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "sim/error.h"

namespace dtsim::apps {

// A run makes and frees large arrays again and again (a collective's schedule, a flow model's
// tables for each collective it prices). glibc maps each array above its mmap threshold afresh, its
// pages faulted in anew on every use, and moves that threshold only once such an array is freed,
// so how often a run pays the faults would depend on the order it frees things in. Fixed thresholds
// keep arrays up to 32 MiB in the heap for reuse and up to 64 MiB of free heap mapped.
inline void keep_large_arrays_for_reuse() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

template <class Run>
int command_main(std::string_view program, Run&& run) {
  keep_large_arrays_for_reuse();
  try {
    return run();
  } catch (const InputError& e) {
    std::cerr << program << ": " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": internal error: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace dtsim::apps
