// YamlTree: a scenario's YAML as a plain tree whose every node and key remembers where it came
// from (file:line:column, or the --set flag that put it there). The loader reads YAML into it,
// applies --set overrides to it, then converts it to typed values:
//   YamlNode root = parse_yaml_tree(text, "scenarios/default.yaml");
//   const YamlNode* nodes = root.find("cluster")->find("nodes");
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/error.h"

namespace dtsim::config {

struct YamlEntry;

struct YamlNode {
  enum class Kind { null, scalar, sequence, map };
  Kind kind = Kind::null;
  std::string scalar;              // the text of a scalar, as written (unquoted)
  std::vector<YamlNode> items;     // a sequence's elements
  std::vector<YamlEntry> entries;  // a map's keys, in the order written, without duplicates
  SourceLocation where;

  bool is_null() const { return kind == Kind::null; }
  bool is_map() const { return kind == Kind::map; }
  bool is_scalar() const { return kind == Kind::scalar; }
  bool is_sequence() const { return kind == Kind::sequence; }

  const YamlNode* find(std::string_view key) const;
  YamlNode* find(std::string_view key);
  const YamlEntry* find_entry(std::string_view key) const;
};

struct YamlEntry {
  std::string key;
  SourceLocation key_where;
  YamlNode value;
};

// "a map", "a list", "nothing" or the quoted scalar: what error messages say they got.
std::string describe(const YamlNode& node);

// Parses one YAML document. Syntax errors, duplicate keys, keys that are not plain names, more
// than one document, and nesting deeper than is sensible all throw InputError with the position.
// `source` names the file (or flag) in those messages and in every node's location.
YamlNode parse_yaml_tree(std::string_view text, const std::string& source);

}  // namespace dtsim::config
