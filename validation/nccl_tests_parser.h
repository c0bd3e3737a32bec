// Raw nccl-tests output, as users paste it: the '#' preamble (nThread, "Using devices", one line
// per rank), the two-line column header, the rows (out-of-place then in-place halves) and the
// "# Avg bus bandwidth" trailer. Handles every *_perf program and the column sets of older and
// newer nccl-tests (with or without redop/root, #wrong or error, cputime, per-iteration and
// timestamp columns), and lines prefixed by launchers ("[1,0]<stdout>:", "0: ", timestamps).
//   auto sets = parse_nccl_tests_output(text, "run.log");   // one set per table in the file
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "validation/measurement.h"

namespace dtsim::validation {

struct NcclTestsParseOptions {
  // Which collective the output is from when neither the output nor the file name says it (before
  // the columns are guessed from), and where that came from, for the warning ("--collective",
  // "the scenario's workload.collective").
  std::optional<collectives::CollectiveKind> collective;
  std::string collective_from = "--collective";
};

// Throws InputError with file:line when the output is garbled or cut off mid-table.
std::vector<MeasurementSet> parse_nccl_tests_output(std::string_view text, const std::string& source,
                                                    const NcclTestsParseOptions& options = {});

// True when `text` looks like nccl-tests output (has its column header line).
bool looks_like_nccl_tests_output(std::string_view text);

// Removes what launchers put in front of a program's lines: Open MPI's "[1,0]<stdout>:",
// srun -l's "0: ", pdsh's "host: ", and leading ISO timestamps. Exposed for the debug-log reader.
std::string_view strip_launcher_prefix(std::string_view line);

}  // namespace dtsim::validation
