#include "sim/block_arena.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace dtsim::sim {
namespace {

// The arena's memory: aligned, disjoint and kept until it goes; ordinary heap up to kPlainBytes,
// then whole blocks aligned to their size.
TEST(BlockArena, TakesAreAlignedDisjointAndBlocksFollowThePlainPart) {
  BlockArena arena;
  std::vector<std::pair<uint8_t*, size_t>> taken;
  size_t total = 0;
  for (size_t i = 0; total < 3 * BlockArena::kBlock; ++i) {
    const size_t bytes = 1 + (i * 7919 % 300'000);
    auto* p = static_cast<uint8_t*>(arena.take(bytes));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    if (total >= BlockArena::kPlainBytes && (taken.empty() || taken.back().first + taken.back().second != p)) {
      // Past the plain part, a take that does not follow the last one starts a block.
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % BlockArena::kBlock, 0u) << i;
    }
    std::fill(p, p + bytes, static_cast<uint8_t>(i));
    taken.emplace_back(p, (bytes + 63) / 64 * 64);
    total += bytes;
  }
  for (size_t i = 0; i < taken.size(); ++i) {
    const auto [p, room] = taken[i];
    const size_t bytes = 1 + (i * 7919 % 300'000);
    EXPECT_EQ(std::count(p, p + bytes, static_cast<uint8_t>(i)), static_cast<std::ptrdiff_t>(bytes)) << i;
  }
  EXPECT_THROW(arena.take(BlockArena::kBlock + 1), std::length_error);
}

// A vector on BlockAllocator keeps its elements as it grows from the heap into huge-page blocks
// (aligned to a block) and back when it shrinks.
TEST(BlockAllocator, AVectorKeepsItsElementsAcrossTheHeapAndTheBlocks) {
  BlockVector<uint64_t> v;
  for (uint64_t i = 0; i < 300'000; ++i) {
    v.push_back(i * 2654435761u);
    if (v.capacity() * sizeof(uint64_t) >= BlockAllocator<uint64_t>::kMinBytes) {
      ASSERT_EQ(reinterpret_cast<uintptr_t>(v.data()) % BlockArena::kBlock, 0u) << i;
    }
  }
  for (uint64_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i * 2654435761u) << i;
  v.resize(1000);
  v.shrink_to_fit();
  for (uint64_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i * 2654435761u) << i;
}

// Lists on one SizeClassPool, pushed and popped at random, hold what vectors beside them hold:
// arrays given back on growth are reused by other lists without overlapping a live one, from
// the slabs, whole from the arena and past a block, and a list moved keeps its elements.
TEST(SizeClassPool, ListsHoldWhatVectorsHoldAsTheyGrowAndShrink) {
  BlockArena arena;
  SizeClassPool pool(arena);
  constexpr size_t kLists = 64;
  std::vector<PoolList<uint32_t>> lists(kLists);
  std::vector<std::vector<uint32_t>> oracle(kLists);
  uint64_t x = 88172645463325252u;
  for (uint32_t step = 0; step < 400'000; ++step) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const size_t i = x % kLists;
    if (oracle[i].empty() || x % 5 != 0) {
      lists[i].push_back(step, pool);
      oracle[i].push_back(step);
    } else {
      ASSERT_EQ(lists[i].back(), oracle[i].back());
      lists[i].pop_back();
      oracle[i].pop_back();
    }
  }
  // One list past a 2 MiB block (arrays of 4 MiB and more).
  for (uint32_t v = 0; v < 700'000; ++v) {
    lists[0].push_back(v, pool);
    oracle[0].push_back(v);
  }
  // Moved into a growing vector (each reallocation moves them again), they keep their arrays.
  std::vector<PoolList<uint32_t>> moved;
  for (PoolList<uint32_t>& l : lists) {
    moved.push_back(std::move(l));
    EXPECT_TRUE(l.empty());
  }
  for (size_t i = 0; i < kLists; ++i) {
    ASSERT_EQ(moved[i].size(), oracle[i].size()) << i;
    EXPECT_TRUE(std::equal(moved[i].begin(), moved[i].end(), oracle[i].begin())) << i;
  }
  EXPECT_EQ(SizeClassPool::rounded(1), SizeClassPool::kMinBytes);
  EXPECT_EQ(SizeClassPool::rounded(17), 32u);
  EXPECT_EQ(SizeClassPool::rounded(4096), 4096u);
}

}  // namespace
}  // namespace dtsim::sim
