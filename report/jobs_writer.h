// Jobs writer: prints the jobs of one fabric (workloads::JobsResult) as the table a user reads, as
// one JSON object (with "schema_version") or as a CSV row per job: each job's iteration time
// alone on its nodes, together with the others, and the slowdown (together / alone).
//   report::write_jobs(result, "csv", std::cout);
#pragma once

#include <ostream>
#include <string_view>

#include "workloads/jobs.h"

namespace dtsim::report {

inline constexpr int kJobsSchemaVersion = 1;

// format: "table", "json" or "csv"; throws std::invalid_argument for anything else. CSV columns:
//   job,workload,nodes,gpus,iterations,alone_s,together_s,slowdown
// alone_s and together_s are per iteration (the mean of the job's iterations back to back).
void write_jobs(const workloads::JobsResult& result, std::string_view format, std::ostream& out);

}  // namespace dtsim::report
