#!/usr/bin/env bash
# Builds a libFuzzer target with the `fuzz` preset (clang, ASan, UBSan, libFuzzer) and runs it on a
# corpus seeded from the repository's own files of that kind (tests and the real files under
# tests/data/real/). Targets, one per reader of a user's file:
#   scenario (default)  the scenario loader           scenarios/, tests/config/malformed/
#   sweep_file          sweep files                   scenarios/sweeps/, bench/workloads/
#   chakra              Chakra traces and executor    fuzz/chakra_seeds/, tests/data/real/chakra/
#   nccl_tests_text     nccl-tests text output        tests/validation/data/, validation/extra/, tests/data/real/nccl_tests/
#   nccl_tests_json     nccl-tests -J JSON            tests/validation/data/*.json
#   measurement_csv     measured CSV, format sniffing validation/measured/, validation/extra/*.csv
#   nccl_debug_log      NCCL_DEBUG=INFO logs          tests/validation/data/*.log, tests/data/real/nccl_tests/
#   topology_xml        NCCL topology XML             tests/data/real/nccl_topo/
#   topology_yaml       whole-graph topology YAML     fuzz/seeds/topology_yaml/
#   calibration         calibration files             fuzz/seeds/calibration/
#   scripts/fuzz.sh                          # scenario loader, 60 seconds
#   scripts/fuzz.sh 600 -jobs=2 -workers=2   # 10 minutes, extra libFuzzer flags after the time
#   scripts/fuzz.sh 300 chakra               # trace reader, 5 minutes
#   scripts/fuzz.sh 20 all                   # every target for 20 seconds each
#   scripts/fuzz.sh ci                       # every target: its seeds, then 500 mutations from seed 1,
#                                            # from a fresh corpus: the same run on every machine (CI)
# Findings (crash-*, timeout-*, oom-*, leak-* files) land in build/fuzz/findings-TARGET/; the
# script exits non-zero when there is one. Reproduce one with: build/fuzz/fuzz/TARGET_fuzzer FILE
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == ci ]]; then
  # Deterministic: a fixed seed and a fixed number of inputs over the seeds alone, so that a
  # finding here is one anybody reproduces, not a flake of how fast the machine ran.
  shift
  exec env DTSIM_FUZZ_FRESH=1 "$0" 0 all -seed=1 -runs=500 "$@"
fi
seconds="${1:-60}"
shift || true
targets=(scenario sweep_file chakra nccl_tests_text nccl_tests_json measurement_csv nccl_debug_log topology_xml
         topology_yaml calibration)
target=scenario
if [[ -n "${1:-}" && "${1:-}" != -* ]]; then
  target="$1"
  shift
fi
if [[ "$target" == all ]]; then
  status=0
  for t in "${targets[@]}"; do "$0" "$seconds" "$t" "$@" || status=1; done
  exit $status
fi

shopt -s nullglob
case "$target" in
  scenario) program=scenario_loader seeds=(scenarios/*.yaml tests/config/malformed/*.yaml) ;;
  sweep_file) program=sweep_file seeds=(scenarios/sweeps/*.yaml bench/workloads/*.yaml) ;;
  chakra) program=chakra_reader seeds=(fuzz/chakra_seeds/*.et tests/data/real/chakra/*/*.0.et tests/data/real/chakra/*/*.json) ;;
  nccl_tests_text) program=nccl_tests_text seeds=(tests/validation/data/*.txt tests/validation/data/*.log validation/extra/*.txt
                                                  tests/data/real/nccl_tests/*.txt) ;;
  nccl_tests_json) program=nccl_tests_json seeds=(tests/validation/data/*.json) ;;
  measurement_csv) program=measurement_csv seeds=(validation/measured/*.csv validation/extra/*.csv) ;;
  nccl_debug_log) program=nccl_debug_log seeds=(tests/validation/data/*.log tests/data/real/nccl_tests/*debug*.txt) ;;
  topology_xml) program=topology_xml seeds=(tests/data/real/nccl_topo/*.xml) ;;
  topology_yaml) program=topology_yaml seeds=(fuzz/seeds/topology_yaml/*.yaml) ;;
  calibration) program=calibration seeds=(fuzz/seeds/calibration/*.yaml) ;;
  *) echo "fuzz.sh: unknown target '$target'; expected one of ${targets[*]} or all" >&2; exit 2 ;;
esac
program="${program}_fuzzer"

# Warnings stay errors in the normal builds; here a clang-only warning elsewhere must not stop fuzzing.
cmake --preset fuzz -DDTSIM_WERROR=OFF >/dev/null
corpus=build/fuzz/corpus-$target
findings=build/fuzz/findings-$target
if [[ -n "${DTSIM_FUZZ_FRESH:-}" ]]; then
  corpus=build/fuzz/ci-corpus-$target
  rm -rf "$corpus"
fi
mkdir -p "$corpus" "$findings"
# Seeds are named by their path, so that files of one name in two folders both seed.
for s in "${seeds[@]}"; do cp -n "$s" "$corpus/$(echo "$s" | tr '/' '_')" 2>/dev/null || true; done
cmake --build --preset fuzz --target "$program" -j "$(nproc)"

time_limit=()
[[ "$seconds" -gt 0 ]] && time_limit=(-max_total_time="$seconds")
build/fuzz/fuzz/"$program" "$corpus" \
  "${time_limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
  -artifact_prefix="$findings/" -print_final_stats=1 "$@"
