// BlockArena: memory for arrays that live as long as their owner and never move (a flow model's
// slots and crossings), taken in order from blocks of 2 MiB once the owner is large. A fresh 4
// KiB page costs a fault when first touched (about 14 us on a paravirtualized VM, where a
// 16k-flow run's faults were most of its time); past the first kPlainBytes, which come from
// the ordinary heap so that a small owner touches no more than it uses, the blocks are aligned
// to 2 MiB and advised as huge-page candidates (Linux's madvise MADV_HUGEPAGE: with transparent
// huge pages on "madvise" or "always", touching a block faults once, not 512 times).
//   network::BlockArena arena;
//   auto* chunk = static_cast<Slot*>(arena.take(sizeof(Slot) * 1024));  // freed with the arena
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace dtsim::network {

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

}  // namespace dtsim::network
