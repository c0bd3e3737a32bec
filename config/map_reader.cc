#include "config/map_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace dtsim::config {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// How enum spellings compare: case-insensitive, '-' and '_' alike.
std::string enum_key(std::string_view s) {
  std::string out = lower(s);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

std::string integer_expectation(Range r) {
  if (r.min == 1 && r.max >= 1'000'000'000) return "a positive integer";
  if (r.min == 0 && r.max >= 1'000'000'000) return "a non-negative integer";
  return fmt::format("an integer from {} to {}", r.min, r.max);
}

const std::string& scalar_text(const YamlNode& node, const std::string& key, const std::string& expected) {
  if (!node.is_scalar()) fail(node, key, "expected " + expected + ", got " + describe(node));
  return node.scalar;
}

}  // namespace

void fail(const YamlNode& node, const std::string& key, const std::string& message) {
  throw InputError(node.where, key, message);
}

int64_t to_integer(const YamlNode& node, const std::string& key, Range range) {
  const std::string expected = integer_expectation(range);
  const std::string& text = scalar_text(node, key, expected);
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc::result_out_of_range) {
    fail(node, key, "expected " + expected + ", got " + describe(node) + ", which is out of range");
  }
  if (ec != std::errc() || ptr != end) {
    std::string why;
    if (ec == std::errc() && ptr != text.data()) {
      const bool exponent_or_fraction = *ptr == '.' || *ptr == 'e' || *ptr == 'E';
      why = exponent_or_fraction ? " (not a whole number)" : " (a count takes no unit)";
    }
    fail(node, key, "expected " + expected + ", got " + describe(node) + why);
  }
  if (v < range.min || v > range.max) {
    const bool bound_shown = expected.starts_with("an integer from");
    fail(node, key, "expected " + expected + ", got " + describe(node) +
                        (v > range.max && !bound_shown ? fmt::format(" (at most {})", range.max) : ""));
  }
  return v;
}

double to_number(const YamlNode& node, const std::string& key, double min, double max) {
  const std::string expected = fmt::format("a number from {} to {}", min, max);
  const std::string& text = scalar_text(node, key, expected);
  double v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v) || v < min || v > max) {
    fail(node, key, "expected " + expected + ", got " + describe(node));
  }
  return v;
}

bool to_bool(const YamlNode& node, const std::string& key) {
  const std::string& text = scalar_text(node, key, "true or false");
  std::string l = lower(text);
  if (l == "true" || l == "yes" || l == "on") return true;
  if (l == "false" || l == "no" || l == "off") return false;
  fail(node, key, "expected true or false, got " + describe(node));
}

std::string to_string(const YamlNode& node, const std::string& key) {
  const std::string& text = scalar_text(node, key, "a string");
  if (text.empty()) fail(node, key, "expected a non-empty string");
  return text;
}

Bytes to_bytes(const YamlNode& node, const std::string& key, Bytes min) {
  const std::string& text = scalar_text(node, key, "a size in bytes (B, KB, MB, GB, KiB, MiB, GiB, ...)");
  Bytes b;
  try {
    b = parse_bytes(text);
  } catch (const std::overflow_error&) {
    fail(node, key, "expected a size below 8EiB, got " + describe(node) + ", which is out of range");
  } catch (const std::invalid_argument& e) {
    fail(node, key, e.what());
  }
  if (b < min) fail(node, key, "expected a size of at least " + dtsim::to_string(min) + ", got " + describe(node));
  return b;
}

Time to_time(const YamlNode& node, const std::string& key) {
  const std::string& text = scalar_text(node, key, "a duration with a unit (ps, ns, us, ms, s)");
  try {
    return parse_time(text);
  } catch (const std::overflow_error&) {
    fail(node, key, "expected a duration below 106 days, got " + describe(node) + ", which is out of range");
  } catch (const std::invalid_argument& e) {
    fail(node, key, e.what());
  }
}

Bandwidth to_bandwidth(const YamlNode& node, const std::string& key, bool allow_zero) {
  const std::string expected = "a bandwidth with a unit (Mbps, Gbps, Tbps, MB/s, GB/s, TB/s)";
  const std::string& text = scalar_text(node, key, expected);
  Bandwidth bw;
  try {
    bw = parse_bandwidth(text);
  } catch (const std::overflow_error&) {
    fail(node, key, "expected " + expected + " below 1EB/s, got " + describe(node) + ", which is out of range");
  } catch (const std::invalid_argument& e) {
    fail(node, key, e.what());
  }
  if (bw.is_zero() && !allow_zero) fail(node, key, "expected a positive bandwidth, got " + describe(node));
  return bw;
}

size_t to_enum_index(const YamlNode& node, const std::string& key,
                     const std::vector<std::string_view>& names, std::vector<std::string_view> shown) {
  if (shown.empty()) shown = names;
  const std::string expected = "one of " + join_names(shown);
  const std::string& text = scalar_text(node, key, expected);
  const std::string k = enum_key(text);
  for (size_t i = 0; i < names.size(); ++i) {
    if (enum_key(names[i]) == k) return i;
  }
  fail(node, key, "expected " + expected + ", got " + describe(node) + did_you_mean(text, names));
}

MapReader::MapReader(const YamlNode& node, std::string path) : node_(&node), path_(std::move(path)) {
  if (!node.is_map() && !node.is_null()) {
    fail(node, path_.empty() ? "" : path_,
         "expected a map of keys" + std::string(path_.empty() ? " (name, cluster, workload, ...)" : "") +
             ", got " + describe(node));
  }
}

std::string MapReader::key(std::string_view name) const {
  return path_.empty() ? std::string(name) : path_ + "." + std::string(name);
}

bool MapReader::has(std::string_view name) {
  known_.push_back(name);
  return node_->find(name) != nullptr;
}

const YamlNode* MapReader::get(std::string_view name) {
  known_.push_back(name);
  const YamlEntry* e = node_->find_entry(name);
  // `key:` with nothing after it is a forgotten value, not a request for the default. The
  // position is the key's: YAML places an empty value wherever the next token starts.
  if (e && e->value.is_null()) throw InputError(e->key_where, key(name), "expected a value, got nothing");
  return e ? &e->value : nullptr;
}

const YamlNode* MapReader::get_or_null(std::string_view name) {
  known_.push_back(name);
  const YamlNode* n = node_->find(name);
  return n && !n->is_null() ? n : nullptr;
}

MapReader MapReader::map(std::string_view name) {
  known_.push_back(name);
  const YamlNode* n = node_->find(name);
  if (n) return MapReader(*n, key(name));
  auto absent = std::make_shared<YamlNode>();
  absent->kind = YamlNode::Kind::map;
  absent->where = node_->where;
  MapReader empty(*absent, key(name));
  empty.absent_ = std::move(absent);
  return empty;
}

void MapReader::read(std::string_view name, int& out, Range range) {
  if (const YamlNode* n = get(name)) out = static_cast<int>(to_integer(*n, key(name), range));
}

void MapReader::read(std::string_view name, uint64_t& out) {
  if (const YamlNode* n = get(name)) {
    out = static_cast<uint64_t>(to_integer(*n, key(name), Range{0, std::numeric_limits<int64_t>::max()}));
  }
}

void MapReader::read(std::string_view name, double& out, double min, double max) {
  if (const YamlNode* n = get(name)) out = to_number(*n, key(name), min, max);
}

void MapReader::read(std::string_view name, bool& out) {
  if (const YamlNode* n = get(name)) out = to_bool(*n, key(name));
}

void MapReader::read(std::string_view name, std::string& out) {
  if (const YamlNode* n = get(name)) out = to_string(*n, key(name));
}

void MapReader::read(std::string_view name, Bytes& out, Bytes min) {
  if (const YamlNode* n = get(name)) out = to_bytes(*n, key(name), min);
}

void MapReader::read(std::string_view name, Time& out) {
  if (const YamlNode* n = get(name)) out = to_time(*n, key(name));
}

void MapReader::read(std::string_view name, Bandwidth& out, bool allow_zero) {
  if (const YamlNode* n = get(name)) out = to_bandwidth(*n, key(name), allow_zero);
}

void MapReader::finish() const {
  for (const auto& e : node_->entries) {
    if (std::find(known_.begin(), known_.end(), e.key) != known_.end()) continue;
    std::vector<std::string_view> unique;
    for (std::string_view k : known_) {
      if (std::find(unique.begin(), unique.end(), k) == unique.end()) unique.push_back(k);
    }
    std::string valid = join_names(unique);
    throw InputError(e.key_where, key(e.key),
                     "unknown key" + did_you_mean(e.key, unique) + " (valid here: " + valid + ")");
  }
}

}  // namespace dtsim::config
