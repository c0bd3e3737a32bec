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
#if defined(__linux__)
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
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

// glibc's malloc backs its heap with transparent huge pages when its tunable glibc.malloc.hugetlb
// is 1 (it advises the kernel, madvise MADV_HUGEPAGE, as the heap grows). A large run fills its
// tables once, a fresh page at a time: an online run builds every rank's ops and state before its
// first event, one fault per 4 KiB page (bench/workloads.md), where a huge page takes one fault per
// 2 MiB. glibc reads its tunables only
// when a program starts, so this starts the program again in the same process (exec keeps the
// pid, the arguments and the open files) with the tunable added to GLIBC_TUNABLES; call it first
// thing in main. Not done when the tunable is there already (set by the user, or this is the
// second start), when DTSIM_PLAIN_HEAP is set, when transparent huge pages are off ("never"),
// under valgrind (whose tools would not follow the new start) or when the program was started
// through the dynamic loader by name. Where exec fails the run goes on as it started.
inline void start_on_huge_page_heap(char** argv) {
#if defined(__GLIBC__) && defined(__linux__)
  if (std::getenv("DTSIM_PLAIN_HEAP") != nullptr) return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.hugetlb") != nullptr) return;
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload != nullptr && std::strstr(preload, "vgpreload") != nullptr) return;
  std::string modes;
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  if (std::getline(thp, modes) && modes.find("[never]") != std::string::npos) return;
  std::error_code error;
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe", error).filename().string();
  if (error || exe.starts_with("ld-linux") || exe.starts_with("ld.so")) return;
  const std::string before = tunables == nullptr ? "" : tunables;
  const std::string with = before.empty() ? "glibc.malloc.hugetlb=1" : before + ":glibc.malloc.hugetlb=1";
  if (setenv("GLIBC_TUNABLES", with.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  if (tunables == nullptr) {
    unsetenv("GLIBC_TUNABLES");
  } else {
    setenv("GLIBC_TUNABLES", before.c_str(), 1);
  }
#else
  (void)argv;
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
