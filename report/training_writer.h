// Training writer: prints one training evaluation (workloads::TrainingResult) as the table a
// user reads, as one JSON object (with "schema_version"), or as a one-row CSV. `simulate` calls
// it for workload kind `training` and `trace`.
//   report::write_training(result, "json", std::cout);
#pragma once

#include <ostream>
#include <string_view>

#include "report/timeline.h"
#include "workloads/training.h"

namespace dtsim::report {

inline constexpr int kTrainingSchemaVersion = 1;

// format: "table", "json" or "csv"; throws std::invalid_argument for anything else.
void write_training(const workloads::TrainingResult& result, std::string_view format, std::ostream& out);

// Appends one track per simulated GPU and stream ("gpu3/stage1", "tp") with a span per op,
// categorised compute / tp / cp / ep / dp / pp, for the Chrome/Perfetto and HTML writers.
void add_training_timeline(const workloads::TrainingTrace& trace, Timeline& timeline);

}  // namespace dtsim::report
