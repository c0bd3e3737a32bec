// StablePool<T>: slots that never move once made, in chunks, each slot reused after it is given
// back. One thread takes and gives back slots; other threads may read a slot it handed them (by
// an event between partitions, whose window barrier orders the accesses) while it takes more,
// because taking never moves or reallocates what exists: the chunk table has a fixed size.
//   sim::StablePool<State> pool;
//   const uint32_t id = pool.take();  pool[id] = ...;  pool.give_back(id);
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

namespace dtsim::sim {

template <class T>
class StablePool {
 public:
  static constexpr int kChunkBits = 12;
  static constexpr uint32_t kChunk = uint32_t{1} << kChunkBits;
  static constexpr uint32_t kMaxChunks = uint32_t{1} << 14;
  static constexpr uint32_t kCapacity = kChunk * kMaxChunks;  // 2^26 slots

  StablePool() : chunks_(std::make_unique<std::unique_ptr<T[]>[]>(kMaxChunks)) {}

  T& operator[](uint32_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  const T& operator[](uint32_t i) const { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }

  // A slot given back earlier, else a new one (default-constructed when its chunk is made).
  uint32_t take() {
    if (!free_.empty()) {
      const uint32_t id = free_.back();
      free_.pop_back();
      return id;
    }
    if (size_ == kCapacity) throw std::length_error("StablePool: more than 2^26 slots in use");
    if ((size_ & (kChunk - 1)) == 0) chunks_[size_ >> kChunkBits] = std::make_unique<T[]>(kChunk);
    return size_++;
  }
  void give_back(uint32_t id) { free_.push_back(id); }
  size_t in_use() const { return size_ - free_.size(); }

 private:
  std::unique_ptr<std::unique_ptr<T[]>[]> chunks_;
  uint32_t size_ = 0;
  std::vector<uint32_t> free_;
};

}  // namespace dtsim::sim
