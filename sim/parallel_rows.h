// Parallel rows: runs independent pieces of work (the rows of a collective sweep) on a chosen
// number of threads, with errors reported as a serial loop would report them.
//   sim::for_each_row(rows.size(), options.threads, [&](size_t i) { results[i] = run(rows[i]); });
#pragma once

#include <cstddef>
#include <functional>

namespace dtsim::sim {

// The order rows start in: largest index first (in a sweep the last rows are the largest, so they
// start first and do not all land last on one worker), or smallest first (under a wall-clock
// limit, so that the rows done by then are the sweep's first ones).
enum class RowOrder { largest_first, smallest_first };

// The workers `threads` asks for: itself, or every core for 0.
size_t worker_count(int threads);

// Calls row(i) for every i in [0, n) on `threads` worker threads (0: all cores; more than the
// cores runs that many anyway; one runs on the caller's thread), starting them in `order`. The calls may run in any order and
// concurrently, so row(i) must touch only what is its own (its slot of a results vector) or shared
// read only. When rows throw, the exception of the lowest such index is rethrown after the loop,
// as a serial loop would have thrown it; rows above a failed one may be skipped.
void for_each_row(size_t n, int threads, const std::function<void(size_t)>& row,
                  RowOrder order = RowOrder::largest_first);

}  // namespace dtsim::sim
