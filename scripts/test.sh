#!/usr/bin/env bash
# Runs the whole test suite: sets up what is missing, builds Release and runs every test.
#   scripts/test.sh           # Release build, all tests
#   scripts/test.sh --asan    # also the ASan+UBSan build and its tests
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-run
if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
status=0
if [ "${1:-}" = "--asan" ]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$(nproc)"
  ctest --preset asan || status=$?
fi
log=$(mktemp)
ctest --preset release 2>&1 | tee "$log" || status=$?
# ctest lists skipped tests (the CUDA ones, without a GPU) after its summary; the summary is
# repeated so that it is the last line.
grep -E '^[0-9]+% tests passed' "$log" | tail -n 1 || true
rm -f "$log"
exit $status
