// take_free: a slot pool's allocation, for the models that keep their objects (flows, packets,
// transfers) in a vector and their freed indices in another, so that an id stays a small index.
//   const uint32_t id = take_free(packets_, free_packets_);  // ... free_packets_.push_back(id);
#pragma once

#include <cstdint>
#include <vector>

namespace dtsim::network {

// An index into `items` for a new element: one freed earlier, else a default one appended.
template <typename T>
uint32_t take_free(std::vector<T>& items, std::vector<uint32_t>& freed) {
  if (freed.empty()) {
    items.emplace_back();
    return static_cast<uint32_t>(items.size() - 1);
  }
  const uint32_t id = freed.back();
  freed.pop_back();
  return id;
}

}  // namespace dtsim::network
