#!/usr/bin/env bash
# Builds the scenario-loader fuzzer with the `fuzz` preset (clang, ASan, UBSan, libFuzzer) and runs
# it on a corpus seeded from scenarios/*.yaml and tests/config/malformed/*.yaml.
#   scripts/fuzz.sh            # 60 seconds
#   scripts/fuzz.sh 600 -jobs=2 -workers=2   # 10 minutes, extra libFuzzer flags after the time
# Findings (crash-*, timeout-*, oom-* files) land in build/fuzz/findings/; the script exits non-zero
# when there is one. Reproduce one with: build/fuzz/fuzz/scenario_loader_fuzzer FILE
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true

# Warnings stay errors in the normal builds; here a clang-only warning elsewhere must not stop fuzzing.
cmake --preset fuzz -DDTSIM_WERROR=OFF >/dev/null
cmake --build --preset fuzz --target scenario_loader_fuzzer -j "$(nproc)"

corpus=build/fuzz/corpus
findings=build/fuzz/findings
mkdir -p "$corpus" "$findings"
cp -n scenarios/*.yaml tests/config/malformed/*.yaml "$corpus"/ 2>/dev/null || true

build/fuzz/fuzz/scenario_loader_fuzzer "$corpus" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
  -artifact_prefix="$findings/" -print_final_stats=1 "$@"
