// BlockArena: memory for arrays that live as long as their owner and never move (a flow model's
// slots and crossings, the event queue's chunks), taken in order from blocks of 2 MiB once the
// owner is large. A fresh 4 KiB page costs a fault when first touched (microseconds each on a
// paravirtualized VM, enough to be most of a run that fills large tables once: bench/peers.md);
// past the first kPlainBytes, which come from the ordinary heap so that a small owner touches no
// more than it uses, the blocks are aligned to 2 MiB and advised as huge-page candidates (Linux's
// madvise MADV_HUGEPAGE: with transparent huge pages on "madvise" or "always", touching a block
// faults once, not 512 times).
//   sim::BlockArena arena;
//   auto* chunk = static_cast<Slot*>(arena.take(sizeof(Slot) * 1024));  // freed with the arena
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace dtsim::sim {

// Whole 2 MiB blocks for `bytes`, aligned to 2 MiB and advised as huge-page candidates (as the
// arena's blocks); give_blocks returns them.
void* take_blocks(size_t bytes);
void give_blocks(void* p, size_t bytes);

// A vector's allocator that takes an array of at least kMinBytes as take_blocks' huge-page
// blocks (where 32 fresh 4 KiB pages, faulted one by one, cost more than one huge page), and a
// smaller one from the ordinary heap: for a model's per-flow tables that a large run fills at
// once (the start-order index, the transfer table, the drain heap).
template <typename T>
struct BlockAllocator {
  using value_type = T;
  static constexpr size_t kMinBytes = size_t{128} << 10;
  BlockAllocator() = default;
  template <typename U>
  BlockAllocator(const BlockAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator's
  T* allocate(size_t n) {
    if (n * sizeof(T) >= kMinBytes) return static_cast<T*>(take_blocks(n * sizeof(T)));
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) >= kMinBytes) {
      give_blocks(p, n * sizeof(T));
    } else {
      std::allocator<T>().deallocate(p, n);
    }
  }
  friend bool operator==(const BlockAllocator&, const BlockAllocator&) { return true; }
};
template <typename T>
using BlockVector = std::vector<T, BlockAllocator<T>>;

class BlockArena {
 public:
  static constexpr size_t kBlock = size_t{2} << 20;
  // What comes from the ordinary heap before the blocks start: past it, a huge page costs less
  // than the 4 KiB pages of a block that the owner would fill anyway.
  static constexpr size_t kPlainBytes = size_t{256} << 10;

  BlockArena() = default;
  BlockArena(const BlockArena&) = delete;
  BlockArena& operator=(const BlockArena&) = delete;
  ~BlockArena();

  // `bytes` (at most kBlock) of untouched memory aligned to 64 bytes, valid until the arena goes.
  void* take(size_t bytes);

 private:
  std::vector<void*> plain_;   // from the ordinary heap
  std::vector<void*> blocks_;  // of kBlock each
  size_t plain_bytes_ = 0;
  size_t used_ = kBlock;  // of the last block
};

// SizeClassPool: arrays of 2^k bytes (at least kMinBytes) carved from an arena's memory, each one
// given back kept for the next of its size: for many small lists that grow one element at a time
// (a flow model's per-link flow lists), whose heap copies would fault in a fresh 4 KiB page at a
// time where the arena's blocks fault once per 2 MiB. Memory goes back only with the pool (a
// class's arrays are reused, never merged), so it holds at most each class's peak use.
class SizeClassPool {
 public:
  static constexpr size_t kMinBytes = 16;
  // Arrays up to this size come from slabs of it; larger ones are taken whole.
  static constexpr size_t kSlab = size_t{64} << 10;

  // `arena` outlives the pool.
  explicit SizeClassPool(BlockArena& arena) : arena_(arena) {}
  SizeClassPool(const SizeClassPool&) = delete;
  SizeClassPool& operator=(const SizeClassPool&) = delete;
  ~SizeClassPool();

  // An array of at least `bytes` (untouched memory, aligned to 16 bytes); its size is
  // rounded(bytes).
  void* take(size_t bytes);
  // `p` from take(bytes), for the next array of its size.
  void give(void* p, size_t bytes);
  static size_t rounded(size_t bytes) { return std::bit_ceil(bytes < kMinBytes ? kMinBytes : bytes); }

 private:
  static size_t class_of(size_t bytes) { return static_cast<size_t>(std::countr_zero(rounded(bytes) / kMinBytes)); }

  BlockArena& arena_;
  std::array<void*, 64> free_{};  // per class: a freed array, holding the next one's address
  char* slab_ = nullptr;
  size_t slab_left_ = 0;
  std::vector<std::pair<void*, size_t>> whole_;  // arrays larger than a block, from take_blocks
};

// A list of trivially copyable elements whose arrays come from a SizeClassPool: grows by doubling
// as a vector does, but in 16 bytes (a pointer and two 32-bit counts) and without a heap page per
// growth. The pool is passed to what allocates; the list's array is the pool's until it goes. It
// moves (its array with it; one moved onto drops its own until the pool goes) but does not copy:
// two lists on one array would overwrite each other.
template <typename T>
class PoolList {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  PoolList() = default;
  PoolList(const PoolList&) = delete;
  PoolList& operator=(const PoolList&) = delete;
  PoolList(PoolList&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  PoolList& operator=(PoolList&& o) noexcept {
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    return *this;
  }
  ~PoolList() = default;  // the array stays the pool's: it goes with the pool

  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& back() const { return data_[size_ - 1]; }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }  // keeps the array
  void push_back(const T& v, SizeClassPool& pool) {
    if (size_ == capacity_) grow(pool);
    data_[size_++] = v;
  }

 private:
  void grow(SizeClassPool& pool) {
    const size_t bytes = SizeClassPool::rounded(sizeof(T) * (capacity_ == 0 ? 1 : size_t{2} * capacity_));
    T* next = static_cast<T*>(pool.take(bytes));
    if (size_ > 0) std::memcpy(next, data_, sizeof(T) * size_);
    if (data_) pool.give(data_, sizeof(T) * capacity_);
    data_ = next;
    capacity_ = static_cast<uint32_t>(bytes / sizeof(T));
  }

  T* data_ = nullptr;
  uint32_t size_ = 0;
  uint32_t capacity_ = 0;
};

}  // namespace dtsim::sim
