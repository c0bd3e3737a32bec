#!/usr/bin/env bash
# The measurements that need a machine with an NVIDIA GPU and many cores, in one run, for the goals
# of bench/README.md that a 2-core machine cannot show: the CUDA max-min solver against its CPU
# twin (rates bit for bit, then time per solve at 10k, 100k and 1M flows), and one packet run on
# 1, 2, 4, 8 and 16 threads (the 1,024-GPU ring on a 3-tier fat-tree and a training iteration:
# fingerprints equal, wall time and speed-up over one thread).
#   bench/device_checks.sh PROGRAMS OUT          # on the GPU machine, from the repository root
#   bench/device_checks.sh --quick PROGRAMS OUT  # small sizes: a check of the script itself
# PROGRAMS holds bin/simulate, bin/flow_solver_benchmark and bin/gpu_accel_max_min_solver_test
# (Release builds, CUDA for sm_90) and, under lib/, the shared libraries they link that the GPU
# machine lacks (oneTBB, yaml-cpp, Boost, protobuf, fmt, ...). OUT gets one log per step and
# summary.txt; the script prints the summary and exits non-zero when a check fails (a test, or a
# fingerprint that differs from one thread's). Each step has a time limit (300 s for each solver
# step, 400 s for each packet run), so a slow one leaves the others their time.
set -uo pipefail
quick=0
if [[ "${1:-}" == --quick ]]; then
  quick=1
  shift
fi
[[ $# -eq 2 ]] || { echo "usage: $0 [--quick] PROGRAMS OUT" >&2; exit 2; }
programs=$(cd "$1" && pwd) || exit 2
out=$2
mkdir -p "$out"
export LD_LIBRARY_PATH="$programs/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
summary="$out/summary.txt"
: >"$summary"
status=0
say() { echo "$*" | tee -a "$summary"; }

say "machine: $(nproc) cores; $(nvidia-smi -L 2>/dev/null | head -1 || echo 'no GPU found')"

# The CUDA solver against the CPU one: its tests skip themselves without a GPU.
if timeout 300 "$programs/bin/gpu_accel_max_min_solver_test" >"$out/gpu_tests.log" 2>&1; then
  say "CUDA solver tests: $(grep -E '^\[  (PASSED  \]|SKIPPED \]) [0-9]+ tests?' "$out/gpu_tests.log" | tr '\n' ' ')"
else
  say "CUDA solver tests: FAILED (gpu_tests.log)"
  status=1
fi

# Time per solve, CPU and CUDA, on the benchmark's random fat-tree instances.
sizes='10000|100000|1000000'
[[ $quick -eq 1 ]] && sizes='1000|10000'
timeout 300 "$programs/bin/flow_solver_benchmark" --benchmark_filter="(Cpu|Cuda)Solve(Sprayed)?/($sizes)(/|\$)" \
  --benchmark_min_time=0.2 >"$out/flow_solver.log" 2>&1 || say "flow_solver_benchmark: stopped (flow_solver.log)"
# Each row's time, and for the CUDA rows what a solve does and moves (rounds, bytes through device
# memory, bytes uploaded: counted by the kernel's host twin).
say "$(grep -E 'Solve' "$out/flow_solver.log" | awk '{ row = "  " $1 " " $2 " " $3
  for (i = 4; i <= NF; ++i) if ($1 ~ /Cuda/ && $i ~ /^(rounds|bytes|upload_bytes)=/) row = row " " $i
  print row }')"

# One packet run on 1..16 threads: the same fingerprint on each, and the speed-up over one.
threads() {
  local name=$1
  shift
  local base_wall="" base_print=""
  for n in 1 2 4 8 16; do
    local log="$out/$name.$n.log"
    local start end
    start=$(date +%s.%N)
    if ! timeout 400 "$programs/bin/simulate" "$@" -q --stats --fingerprint --partitions "$n" >"$log" 2>&1; then
      say "$name on $n threads: failed or past 400 s ($name.$n.log)"
      status=1
      continue
    fi
    end=$(date +%s.%N)
    local wall print
    wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
    print=$(grep -oE 'fingerprint [0-9a-f]+' "$log" | head -1 | cut -d' ' -f2)
    if [[ -z "$base_wall" ]]; then
      base_wall=$wall
      base_print=$print
    fi
    local same=same
    if [[ "$print" != "$base_print" ]]; then
      same="DIFFERS from 1 thread's $base_print"
      status=1
    fi
    say "$(printf '%s on %2d threads: %7.1f s wall, %5.2fx, fingerprint %s (%s)' "$name" "$n" "$wall" \
      "$(awk -v a="$base_wall" -v b="$wall" 'BEGIN { printf "%.4f", a / b }')" "$print" "$same")"
  done
}
nodes=128
[[ $quick -eq 1 ]] && nodes=8
threads ring scenarios/default.yaml --model packet --set cluster.nodes=$nodes --set cluster.fabric.tiers=3 \
  --set cluster.fabric.radix=32 --set workload.min_bytes=4MiB --set workload.max_bytes=4MiB \
  --set collectives.algorithm=ring
layers=2
[[ $quick -eq 1 ]] && layers=1
threads iteration scenarios/llama3-8b-64gpu.yaml --model packet --set cluster.nodes=8 \
  --set workload.model.layers=$layers --set workload.batch.global=16 --set output.formats=[table]

exit $status
