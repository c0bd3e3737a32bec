#include "sim/parallel_rows.h"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <exception>
#include <optional>
#include <vector>

namespace dtsim::sim {

void for_each_row(size_t n, int threads, const std::function<void(size_t)>& row, RowOrder order) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> first_error{n};
  auto guarded = [&](size_t i) {
    if (i > first_error.load()) return;  // a serial loop would have stopped before it
    try {
      row(i);
    } catch (...) {
      errors[i] = std::current_exception();
      size_t seen = first_error.load();
      while (i < seen && !first_error.compare_exchange_weak(seen, i)) {
      }
    }
  };
  const int workers = threads > 0 ? threads : tbb::this_task_arena::max_concurrency();
  // More threads than cores: TBB caps its pool at the cores (and says so on stderr) unless the
  // process-wide limit is raised, here for this loop only.
  std::optional<tbb::global_control> pool;
  if (static_cast<size_t>(workers) >
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)) {
    pool.emplace(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(workers));
  }
  tbb::task_arena arena(workers);
  arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, n, 1),
        [&](const tbb::blocked_range<size_t>& r) {
          for (size_t k = r.begin(); k != r.end(); ++k) guarded(order == RowOrder::largest_first ? n - 1 - k : k);
        },
        tbb::simple_partitioner());
  });
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace dtsim::sim
