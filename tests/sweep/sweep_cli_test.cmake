# The `sweep` command end to end, on the 405B layout sweep shrunk to 32 nodes (six points).
#   cmake -DSWEEP=... -DSOURCE_DIR=... -DWORK=... -DMODE=... [-DMPIEXEC=...] -P sweep_cli_test.cmake
# MODE: threads | shards | resume | mpi | slurm | scenarios. Each compares files byte for byte.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(LAYOUTS "${SOURCE_DIR}/scenarios/sweeps/llama3-405b-layouts.yaml")
set(SMALL --set cluster.nodes=32 --set workload.batch.global=64)

function(sweep)
  execute_process(COMMAND "${SWEEP}" ${ARGN} RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out
                  WORKING_DIRECTORY "${SOURCE_DIR}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "sweep ${ARGN} exited with ${rc}:\n${err}")
  endif()
endfunction()

function(expect_same a b)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${a}" "${b}" RESULT_VARIABLE differ)
  if(differ)
    file(READ "${a}" ta)
    file(READ "${b}" tb)
    message(FATAL_ERROR "${a} and ${b} differ:\n--- ${a}\n${ta}\n--- ${b}\n${tb}")
  endif()
endfunction()

# Data rows (not comments, not the header) of a results table.
# Semicolons and brackets (in messages, in the scenario) would split or glue CMake list items.
function(data_rows file out_var)
  file(READ "${file}" text)
  string(REGEX REPLACE "[];[]" "_" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  list(FILTER lines EXCLUDE REGEX "^$")
  list(FILTER lines EXCLUDE REGEX "^#")
  list(FILTER lines EXCLUDE REGEX "^point,")
  set(${out_var} "${lines}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "threads")
  sweep("${LAYOUTS}" ${SMALL} --jobs 1 --out "${WORK}/one.csv")
  sweep("${LAYOUTS}" ${SMALL} --jobs 2 --out "${WORK}/two.csv")
  expect_same("${WORK}/one.csv" "${WORK}/two.csv")

elseif(MODE STREQUAL "shards")
  # Shards cover every point exactly once; merged, they are the unsharded table byte for byte.
  sweep("${LAYOUTS}" ${SMALL} --out "${WORK}/all.csv")
  set(parts "")
  set(total 0)
  foreach(i 0 1 2 3)
    sweep("${LAYOUTS}" ${SMALL} --shard ${i}/4 --out "${WORK}/part${i}.csv")
    data_rows("${WORK}/part${i}.csv" rows)
    list(LENGTH rows n)
    math(EXPR total "${total} + ${n}")
    list(APPEND parts "${WORK}/part${i}.csv")
  endforeach()
  data_rows("${WORK}/all.csv" all_rows)
  list(LENGTH all_rows n_all)
  if(NOT total EQUAL n_all)
    message(FATAL_ERROR "shards hold ${total} rows, the unsharded table ${n_all}")
  endif()
  sweep("${LAYOUTS}" ${SMALL} --merge ${parts} --out "${WORK}/merged.csv")
  expect_same("${WORK}/all.csv" "${WORK}/merged.csv")

elseif(MODE STREQUAL "resume")
  # A table cut short (an interrupted run) is completed to the same bytes as a full run.
  sweep("${LAYOUTS}" ${SMALL} --out "${WORK}/all.csv")
  # Drop the last three rows (as text: the table holds brackets and semicolons CMake lists mangle).
  file(READ "${WORK}/all.csv" text)
  foreach(i 1 2 3)
    string(LENGTH "${text}" len)
    math(EXPR len "${len} - 1")
    string(SUBSTRING "${text}" 0 ${len} text)
    string(FIND "${text}" "\n" at REVERSE)
    math(EXPR at "${at} + 1")
    string(SUBSTRING "${text}" 0 ${at} text)
  endforeach()
  file(WRITE "${WORK}/resumed.csv" "${text}")
  sweep("${LAYOUTS}" ${SMALL} --out "${WORK}/resumed.csv")
  expect_same("${WORK}/all.csv" "${WORK}/resumed.csv")
  # Another base (other --set values) must not be resumed from.
  execute_process(COMMAND "${SWEEP}" "${LAYOUTS}" --set cluster.nodes=64 --out "${WORK}/resumed.csv"
                  RESULT_VARIABLE rc ERROR_VARIABLE err WORKING_DIRECTORY "${SOURCE_DIR}")
  if(NOT rc EQUAL 2 OR NOT err MATCHES "another base scenario")
    message(FATAL_ERROR "resuming from another base: exit ${rc}, ${err}")
  endif()

elseif(MODE STREQUAL "mpi")
  sweep("${LAYOUTS}" ${SMALL} --out "${WORK}/all.csv")
  # Open MPI keeps allocations to exit; LeakSanitizer (the ASan build) would fail the ranks for it.
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env ASAN_OPTIONS=detect_leaks=0
                          "${MPIEXEC}" --allow-run-as-root --oversubscribe -np 2
                          "${SWEEP}" "${LAYOUTS}" ${SMALL} --mpi --jobs 1 --out "${WORK}/mpi.csv"
                  RESULT_VARIABLE rc ERROR_VARIABLE err WORKING_DIRECTORY "${SOURCE_DIR}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "mpirun exited with ${rc}:\n${err}")
  endif()
  expect_same("${WORK}/all.csv" "${WORK}/mpi.csv")

elseif(MODE STREQUAL "slurm")
  sweep("${LAYOUTS}" ${SMALL} --emit-slurm "${WORK}/job.sh" --tasks 4 --out "${WORK}/r.csv")
  file(READ "${WORK}/job.sh" script)
  foreach(want "#SBATCH --array=0-3" "--shard \"\${SLURM_ARRAY_TASK_ID}/4\"" "--set 'cluster.nodes=32'" "--merge")
    string(FIND "${script}" "${want}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "job.sh lacks ${want}:\n${script}")
    endif()
  endforeach()
  execute_process(COMMAND bash -n "${WORK}/job.sh" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "job.sh is not valid bash")
  endif()

elseif(MODE STREQUAL "scenarios")
  # Every sweep in scenarios/sweeps/ runs shrunk, and every point succeeds.
  function(check_sweep path want)
    get_filename_component(file "${path}" NAME)
    sweep("${SOURCE_DIR}/${path}" ${ARGN} --out "${WORK}/${file}.csv" --html "${WORK}/${file}.html")
    data_rows("${WORK}/${file}.csv" rows)
    list(LENGTH rows got)
    if(NOT got EQUAL want)
      message(FATAL_ERROR "${file}: ${got} points, expected ${want}")
    endif()
    foreach(row IN LISTS rows)
      if(NOT row MATCHES ",$")
        message(FATAL_ERROR "${file}: a point failed: ${row}")
      endif()
    endforeach()
  endfunction()
  check_sweep(scenarios/sweeps/llama3-70b-fabric.yaml 6 --set cluster.nodes=8 --set workload.batch.global=16)
  check_sweep(scenarios/sweeps/llama3-405b-layouts.yaml 6 ${SMALL})
  check_sweep(scenarios/sweeps/llama3-70b-scaling.yaml 24)  # already small: 256 to 2,048 GPUs, analytical in seconds
  check_sweep(scenarios/sweeps/deepseek-v3-expert-layouts.yaml 16)  # 256 GPUs, well under a second
  check_sweep(scenarios/sweeps/two-jobs-oversubscription.yaml 3)  # 2 jobs, 32 GPUs: about a second
  # The planner's benchmark sweep parses and its points run: one in 50 of its 5,056, with merged
  # layers as bench/workloads.md times them.
  check_sweep(bench/workloads/planner-sweep.yaml 102 --shard 0/50 --set workload.layers_per_block=auto)
else()
  message(FATAL_ERROR "unknown MODE ${MODE}")
endif()
