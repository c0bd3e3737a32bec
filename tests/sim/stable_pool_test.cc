#include "sim/stable_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace dtsim::sim {
namespace {

// A slot over-aligned as the packet model's routes record is.
struct alignas(64) Record {
  uint64_t id = 7;
};

struct Small {
  uint32_t value = 3;
};

// Over several chunks: new slots are default-constructed and numbered in order, a slot never moves
// while more are taken, and a slot given back is the next one taken.
template <typename T>
void check_pool() {
  StablePool<T> pool;
  const uint32_t n = 3 * StablePool<T>::kChunk + 5;
  std::vector<T*> at;
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(pool.take(), i);
    at.push_back(&pool[i]);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(at.back()) % alignof(T), 0u) << i;
  }
  for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(&pool[i], at[i]) << i;
  EXPECT_EQ(pool.in_use(), n);
  pool.give_back(17);
  pool.give_back(StablePool<T>::kChunk + 1);
  EXPECT_EQ(pool.in_use(), n - 2);
  EXPECT_EQ(pool.take(), StablePool<T>::kChunk + 1);
  EXPECT_EQ(pool.take(), 17u);
  EXPECT_EQ(pool.take(), n);
}

TEST(StablePool, SlotsStayPutAlignedAndComeBackFirst) {
  check_pool<Record>();
  check_pool<Small>();
  StablePool<Record> records;
  EXPECT_EQ(records[records.take()].id, 7u);
  StablePool<Small> smalls;
  EXPECT_EQ(smalls[smalls.take()].value, 3u);
}

}  // namespace
}  // namespace dtsim::sim
