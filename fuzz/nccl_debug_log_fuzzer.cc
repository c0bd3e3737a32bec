// libFuzzer target for the NCCL_DEBUG=INFO log reader (validation/nccl_debug_log.h), which reads
// the lines it recognises and skips the rest: it must never throw.
//   scripts/fuzz.sh 600 nccl_debug_log
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>

#include "fuzz/finding.h"
#include "validation/nccl_debug_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace dtsim;
  try {
    const validation::NcclDebugLog log = validation::parse_nccl_debug_log(text);
    for (const auto& choice : log.choices) (void)choice;
  } catch (const std::exception& e) {
    fuzz::finding("parse_nccl_debug_log threw", e.what());
  }
  return 0;
}
