#include "sim/block_arena.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace dtsim::sim {
namespace {

constexpr size_t kAlign = 64;

size_t rounded(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

size_t whole_blocks(size_t bytes) { return (bytes + BlockArena::kBlock - 1) / BlockArena::kBlock * BlockArena::kBlock; }

}  // namespace

void* take_blocks(size_t bytes) {
  const size_t size = whole_blocks(bytes);
#if defined(__linux__)
  // Mapped with a block's slack and trimmed to the aligned blocks inside.
  const size_t span = size + BlockArena::kBlock;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + BlockArena::kBlock - 1) & ~(uintptr_t{BlockArena::kBlock} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = aligned + size;
  if (start + span > end) munmap(reinterpret_cast<void*>(end), start + span - end);
  void* blocks = reinterpret_cast<void*>(aligned);
  madvise(blocks, size, MADV_HUGEPAGE);  // advice only: refused, the blocks still serve
  return blocks;
#else
  void* blocks = std::aligned_alloc(BlockArena::kBlock, size);
  if (!blocks) throw std::bad_alloc();
  return blocks;
#endif
}

void give_blocks(void* p, size_t bytes) {
#if defined(__linux__)
  munmap(p, whole_blocks(bytes));
#else
  (void)bytes;
  std::free(p);
#endif
}

BlockArena::~BlockArena() {
  for (void* p : plain_) ::operator delete(p, std::align_val_t{kAlign});
  for (void* b : blocks_) give_blocks(b, kBlock);
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
    blocks_.push_back(take_blocks(kBlock));
    used_ = 0;
  }
  void* p = static_cast<char*>(blocks_.back()) + used_;
  used_ += bytes;
  return p;
}

SizeClassPool::~SizeClassPool() {
  for (const auto& [p, bytes] : whole_) give_blocks(p, bytes);
}

void* SizeClassPool::take(size_t bytes) {
  const size_t size = rounded(bytes);
  void*& freed = free_[class_of(size)];
  if (freed) {
    void* p = freed;
    std::memcpy(&freed, p, sizeof(void*));
    return p;
  }
  if (size > BlockArena::kBlock) {
    whole_.reserve(whole_.size() + 1);
    whole_.emplace_back(take_blocks(size), size);
    return whole_.back().first;
  }
  if (size > kSlab) return arena_.take(size);
  if (slab_left_ < size) {  // a slab's rest smaller than this array stays unused
    slab_ = static_cast<char*>(arena_.take(kSlab));
    slab_left_ = kSlab;
  }
  void* p = slab_;
  slab_ += size;
  slab_left_ -= size;
  return p;
}

void SizeClassPool::give(void* p, size_t bytes) {
  void*& freed = free_[class_of(bytes)];
  std::memcpy(p, &freed, sizeof(void*));
  freed = p;
}

}  // namespace dtsim::sim
