#include "sim/parallel_rows.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace dtsim::sim {

size_t worker_count(int threads) {
  return threads > 0 ? static_cast<size_t>(threads) : std::max(1u, std::thread::hardware_concurrency());
}

// Plain threads pulling row numbers from one counter: a sweep's rows are few and long, so a
// work-stealing pool would buy nothing, and every synchronisation here is one ThreadSanitizer
// sees (it cannot see into an uninstrumented pool library).
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
  auto index = [&](size_t k) { return order == RowOrder::largest_first ? n - 1 - k : k; };
  const size_t workers = std::min(n, worker_count(threads));
  if (workers <= 1) {
    for (size_t k = 0; k < n; ++k) guarded(index(k));
  } else {
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t k = next.fetch_add(1); k < n; k = next.fetch_add(1)) guarded(index(k));
    };
    std::vector<std::jthread> pool;
    pool.reserve(workers - 1);
    for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
    work();  // the caller is a worker too
  }  // the pool joins here
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace dtsim::sim
