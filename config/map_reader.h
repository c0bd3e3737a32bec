// MapReader: reads one YAML map of a scenario into typed values, key by key, and then rejects any
// key it was not asked for, with a did-you-mean suggestion. Each typed read names the dotted key
// and what was expected when the value is wrong:
//   MapReader nic(*cluster.map("nic"));
//   nic.read("count", spec.count, Range{1, 4096});
//   nic.read("bandwidth", spec.bandwidth);
//   nic.finish();   // "cluster.nic.bandwith: unknown key; did you mean 'bandwidth'?"
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/did_you_mean.h"
#include "config/yaml_tree.h"
#include "sim/units.h"

namespace dtsim::config {

// Inclusive bounds for integers a user writes.
struct Range {
  int64_t min = 1;
  int64_t max = 1'000'000'000;
};

// The spelled names of one enum, canonical spelling first for each value. Matching ignores case
// and treats '-' and '_' alike, so `fat_tree` and `all-reduce` are accepted too.
template <class E>
using EnumNames = std::vector<std::pair<std::string_view, E>>;

[[noreturn]] void fail(const YamlNode& node, const std::string& key, const std::string& message);

int64_t to_integer(const YamlNode& node, const std::string& key, Range range);
double to_number(const YamlNode& node, const std::string& key, double min, double max);
bool to_bool(const YamlNode& node, const std::string& key);
std::string to_string(const YamlNode& node, const std::string& key);
Bytes to_bytes(const YamlNode& node, const std::string& key, Bytes min);
Time to_time(const YamlNode& node, const std::string& key);
Bandwidth to_bandwidth(const YamlNode& node, const std::string& key, bool allow_zero = false);

// Finds `node`'s text among `names`; throws listing `shown` (default: all of `names`) otherwise.
size_t to_enum_index(const YamlNode& node, const std::string& key,
                     const std::vector<std::string_view>& names, std::vector<std::string_view> shown = {});

// Messages list each value once, by its canonical name; suggestions consider every spelling.
template <class E>
E to_enum(const YamlNode& node, const std::string& key, const EnumNames<E>& names) {
  std::vector<std::string_view> spelled, shown;
  std::vector<E> seen;
  for (const auto& [n, v] : names) {
    spelled.push_back(n);
    bool first = true;
    for (const E& s : seen) first = first && !(s == v);
    if (first) {
      seen.push_back(v);
      shown.push_back(n);
    }
  }
  return names[to_enum_index(node, key, spelled, shown)].second;
}

template <class E>
std::string_view enum_name(E value, const EnumNames<E>& names) {
  for (const auto& [n, v] : names) {
    if (v == value) return n;
  }
  return "?";
}

class MapReader {
 public:
  // `node` must be a map, or null (an empty section); `path` is its dotted key ("" at the root).
  MapReader(const YamlNode& node, std::string path);

  const std::string& path() const { return path_; }
  const YamlNode& node() const { return *node_; }
  std::string key(std::string_view name) const;

  // The value of `name`, or nullptr when absent; `name:` without a value throws. Marks `name` as
  // known.
  const YamlNode* get(std::string_view name);
  // The same, but `name: null` (or `name:`) reads as absent: for optional paths.
  const YamlNode* get_or_null(std::string_view name);
  // Whether `name` is present (even as null). Marks `name` as known.
  bool has(std::string_view name);
  // A sub-map (absent or null reads as an empty map).
  MapReader map(std::string_view name);

  void read(std::string_view name, int& out, Range range);
  void read(std::string_view name, uint64_t& out);
  void read(std::string_view name, double& out, double min, double max);
  void read(std::string_view name, bool& out);
  void read(std::string_view name, std::string& out);
  void read(std::string_view name, Bytes& out, Bytes min);
  void read(std::string_view name, Time& out);
  // Bandwidths must be positive unless `allow_zero` (a link that does not exist).
  void read(std::string_view name, Bandwidth& out, bool allow_zero = false);
  template <class E>
  void read(std::string_view name, E& out, const EnumNames<E>& names) {
    if (const YamlNode* n = get(name)) out = to_enum(*n, key(name), names);
  }

  // Throws for the first key that no read asked for.
  void finish() const;

 private:
  std::shared_ptr<const YamlNode> absent_;  // the empty section standing in for a missing one
  const YamlNode* node_;
  std::string path_;
  std::vector<std::string_view> known_;
};

}  // namespace dtsim::config
