// Parallel rows: every row runs once, on as many threads as asked for, and errors come out as a
// serial loop would throw them.
#include "sim/parallel_rows.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace dtsim::sim {
namespace {

TEST(ParallelRows, RunsEveryRowOnce) {
  for (int threads : {0, 1, 2, 4}) {
    std::vector<std::atomic<int>> calls(100);
    for_each_row(calls.size(), threads, [&](size_t i) { ++calls[i]; });
    for (size_t i = 0; i < calls.size(); ++i)
      EXPECT_EQ(calls[i].load(), 1) << i << " on " << threads;
  }
}

TEST(ParallelRows, NoRowsIsNothingToDo) {
  int calls = 0;
  for_each_row(0, 4, [&](size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelRows, OneThreadRunsOnTheCallersThread) {
  const auto caller = std::this_thread::get_id();
  for_each_row(8, 1, [&](size_t) { EXPECT_EQ(std::this_thread::get_id(), caller); });
}

// Four threads are four rows at once, even on a machine with fewer cores: each row waits until
// the four are running (or gives up after a while, when they never would be).
// On one thread the rows run in the order asked for: largest index first by default, smallest first
// when asked (a sweep under a wall-clock limit).
TEST(ParallelRows, OneThreadRunsTheRowsInTheOrderAskedFor) {
  std::vector<size_t> order;
  for_each_row(4, 1, [&](size_t i) { order.push_back(i); });
  EXPECT_EQ(order, (std::vector<size_t>{3, 2, 1, 0}));
  order.clear();
  for_each_row(4, 1, [&](size_t i) { order.push_back(i); }, RowOrder::smallest_first);
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(ParallelRows, RunsAsManyRowsAtOnceAsThreadsAskedFor) {
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  for_each_row(4, 4, [&](size_t) {
    const int now = ++running;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (most.load() < 4 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    --running;
  });
  EXPECT_EQ(most.load(), 4);
}

// Rows 3 and 7 fail: whichever thread fails first, the caller sees row 3's exception, of its own
// type, and every row before it ran.
TEST(ParallelRows, RethrowsTheFirstFailingRowsError) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::vector<std::atomic<int>> calls(10);
    try {
      for_each_row(calls.size(), 4, [&](size_t i) {
        ++calls[i];
        if (i == 3 || i == 7) throw std::out_of_range("row " + std::to_string(i));
      });
      ADD_FAILURE() << "nothing thrown";
    } catch (const std::out_of_range& e) {
      EXPECT_EQ(std::string(e.what()), "row 3");
    }
    for (size_t i = 0; i <= 3; ++i) EXPECT_EQ(calls[i].load(), 1) << i;
  }
}

}  // namespace
}  // namespace dtsim::sim
