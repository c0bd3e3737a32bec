#include "network/block_arena.h"

#include <cstdint>
#include <cstdlib>
#include <new>
#include <stdexcept>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace dtsim::network {
namespace {

constexpr size_t kAlign = 64;

size_t rounded(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// A block of kBlock bytes aligned to kBlock, advised as a huge-page candidate where the system
// takes such advice.
void* new_block() {
#if defined(__linux__)
  // Mapped with a block's slack and trimmed to the aligned block inside.
  const size_t span = 2 * BlockArena::kBlock;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + BlockArena::kBlock - 1) & ~(uintptr_t{BlockArena::kBlock} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = aligned + BlockArena::kBlock;
  if (start + span > end) munmap(reinterpret_cast<void*>(end), start + span - end);
  void* block = reinterpret_cast<void*>(aligned);
  madvise(block, BlockArena::kBlock, MADV_HUGEPAGE);  // advice only: refused, the block still serves
  return block;
#else
  void* block = std::aligned_alloc(BlockArena::kBlock, BlockArena::kBlock);
  if (!block) throw std::bad_alloc();
  return block;
#endif
}

void free_block(void* block) {
#if defined(__linux__)
  munmap(block, BlockArena::kBlock);
#else
  std::free(block);
#endif
}

}  // namespace

BlockArena::~BlockArena() {
  for (void* p : plain_) ::operator delete(p, std::align_val_t{kAlign});
  for (void* b : blocks_) free_block(b);
}

void* BlockArena::take(size_t bytes) {
  if (bytes > kBlock) throw std::length_error("BlockArena: more than a block at once");
  bytes = rounded(bytes);
  if (blocks_.empty() && plain_bytes_ + bytes <= kPlainBytes) {
    plain_.reserve(plain_.size() + 1);
    void* p = ::operator new(bytes, std::align_val_t{kAlign});
    plain_.push_back(p);
    plain_bytes_ += bytes;
    return p;
  }
  if (used_ + bytes > kBlock) {
    blocks_.reserve(blocks_.size() + 1);
    blocks_.push_back(new_block());
    used_ = 0;
  }
  void* p = static_cast<char*>(blocks_.back()) + used_;
  used_ += bytes;
  return p;
}

}  // namespace dtsim::network
