// take_free: a slot pool's allocation, for the models that keep their objects (flows, packets,
// transfers) in a vector and their freed indices in another, so that an id stays a small index.
//   const uint32_t id = take_free(packets_, free_packets_);  // ... free_packets_.push_back(id);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "sim/block_arena.h"

namespace dtsim::network {

// An index into `items` (a std::vector or ChunkedSlots) for a new element: one freed earlier, else
// a default one appended.
template <typename Items>
uint32_t take_free(Items& items, std::vector<uint32_t>& freed) {
  if (freed.empty()) {
    items.emplace_back();
    return static_cast<uint32_t>(items.size() - 1);
  }
  const uint32_t id = freed.back();
  freed.pop_back();
  return id;
}

// A slot pool's elements in chunks of kChunk that never move: appending one touches only its
// chunk's memory and copies no other, where a vector's growth copies every element and the pages
// of each larger copy are faulted in anew (a million flow slots of about a hundred bytes).
template <typename T>
class ChunkedSlots {
 public:
  static constexpr size_t kChunk = 1024;
  ChunkedSlots() = default;
  // Chunks taken from `arena`, which outlives the pool (its huge-page blocks, for a large pool).
  explicit ChunkedSlots(sim::BlockArena& arena) : arena_(&arena) {
    static_assert(std::is_trivially_destructible_v<T>, "the arena frees its memory without destroying");
  }
  T& operator[](size_t i) { return chunks_[i / kChunk][i % kChunk]; }
  const T& operator[](size_t i) const { return chunks_[i / kChunk][i % kChunk]; }
  size_t size() const { return size_; }
  // Appends a default element.
  void emplace_back() {
    if (size_ == chunks_.size() * kChunk) {
      if (arena_) {
        T* chunk = static_cast<T*>(arena_->take(sizeof(T) * kChunk));
        std::uninitialized_value_construct_n(chunk, kChunk);
        chunks_.push_back(chunk);
      } else {
        owned_.push_back(std::make_unique<T[]>(kChunk));
        chunks_.push_back(owned_.back().get());
      }
    }
    ++size_;
  }

 private:
  std::vector<T*> chunks_;  // each of kChunk default elements
  std::vector<std::unique_ptr<T[]>> owned_;  // the chunks, where no arena holds them
  sim::BlockArena* arena_ = nullptr;
  size_t size_ = 0;
};

}  // namespace dtsim::network
