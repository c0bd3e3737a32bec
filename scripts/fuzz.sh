#!/usr/bin/env bash
# Builds a libFuzzer target with the `fuzz` preset (clang, ASan, UBSan, libFuzzer) and runs it:
#   scenario (default): the scenario loader, on a corpus seeded from scenarios/*.yaml and
#                       tests/config/malformed/*.yaml;
#   chakra:             the Chakra trace reader and executor, seeded from fuzz/chakra_seeds/.
#   scripts/fuzz.sh                      # scenario loader, 60 seconds
#   scripts/fuzz.sh 600 -jobs=2 -workers=2   # 10 minutes, extra libFuzzer flags after the time
#   scripts/fuzz.sh 300 chakra           # trace reader, 5 minutes
# Findings (crash-*, timeout-*, oom-* files) land in build/fuzz/findings/ (findings-chakra/); the
# script exits non-zero when there is one. Reproduce one with: build/fuzz/fuzz/TARGET_fuzzer FILE
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
target=scenario
if [[ "${1:-}" == scenario || "${1:-}" == chakra ]]; then
  target="$1"
  shift
fi

# Warnings stay errors in the normal builds; here a clang-only warning elsewhere must not stop fuzzing.
cmake --preset fuzz -DDTSIM_WERROR=OFF >/dev/null
if [[ "$target" == chakra ]]; then
  program=chakra_reader_fuzzer suffix=-chakra seeds=(fuzz/chakra_seeds/*.et)
else
  program=scenario_loader_fuzzer suffix= seeds=(scenarios/*.yaml tests/config/malformed/*.yaml)
fi
corpus=build/fuzz/corpus$suffix
findings=build/fuzz/findings$suffix
mkdir -p "$corpus" "$findings"
cp -n "${seeds[@]}" "$corpus"/ 2>/dev/null || true
cmake --build --preset fuzz --target "$program" -j "$(nproc)"

build/fuzz/fuzz/"$program" "$corpus" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
  -artifact_prefix="$findings/" -print_final_stats=1 "$@"
