// take_free: a slot pool's allocation, for the models that keep their objects (flows, packets,
// transfers) in a vector and their freed indices in another, so that an id stays a small index.
//   const uint32_t id = take_free(packets_, free_packets_);  // ... free_packets_.push_back(id);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

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
// of each larger copy are faulted in anew (a flow model's slot holds its links inline: a few
// hundred bytes, and a million of them).
template <typename T>
class ChunkedSlots {
 public:
  static constexpr size_t kChunk = 1024;
  T& operator[](size_t i) { return chunks_[i / kChunk][i % kChunk]; }
  const T& operator[](size_t i) const { return chunks_[i / kChunk][i % kChunk]; }
  size_t size() const { return size_; }
  // Appends a default element.
  void emplace_back() {
    if (size_ == chunks_.size() * kChunk) chunks_.push_back(std::make_unique<T[]>(kChunk));
    ++size_;
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;  // each of kChunk default elements
  size_t size_ = 0;
};

}  // namespace dtsim::network
