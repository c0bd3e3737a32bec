#include "config/overrides.h"

#include <cctype>

namespace dtsim::config {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

void relocate(YamlNode& node, const SourceLocation& where) {
  node.where = where;
  for (auto& item : node.items) relocate(item, where);
  for (auto& e : node.entries) {
    e.key_where = where;
    relocate(e.value, where);
  }
}

YamlNode make_map(const SourceLocation& where) {
  YamlNode m;
  m.kind = YamlNode::Kind::map;
  m.where = where;
  return m;
}

void apply_one(YamlNode& root, const Override& o) {
  const SourceLocation where{override_source(o), 0, 0};
  std::vector<std::string> parts;
  std::string_view rest = o.key;
  while (true) {
    size_t dot = rest.find('.');
    std::string_view part = trim(rest.substr(0, dot));
    if (part.empty()) {
      throw InputError(where, "", "expected a dotted key like cluster.nodes, got \"" + o.key + "\"");
    }
    parts.emplace_back(part);
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }

  YamlNode value = parse_yaml_tree(o.value, where.file);
  relocate(value, where);

  YamlNode* node = &root;
  std::string path;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (node->is_null()) *node = make_map(where);
    if (node->is_scalar() && i > 0) {
      // A preset name on the way to one of its fields: refine the preset.
      YamlNode preset = *node;
      *node = make_map(where);
      node->entries.push_back(YamlEntry{"preset", preset.where, preset});
    }
    if (!node->is_map()) {
      throw InputError(where, path, "cannot set " + o.key + ": " + (path.empty() ? "the scenario" : path) +
                                        " is " + describe(*node) + ", not a map");
    }
    path = path.empty() ? parts[i] : path + "." + parts[i];
    YamlNode* next = node->find(parts[i]);
    if (next == nullptr) {
      node->entries.push_back(YamlEntry{parts[i], where, i + 1 == parts.size() ? YamlNode{} : make_map(where)});
      next = &node->entries.back().value;
    }
    node = next;
  }
  *node = std::move(value);
}

}  // namespace

std::string override_source(const Override& o) { return "--set " + o.key + "=" + o.value; }

Override parse_override(std::string_view text) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    throw InputError(SourceLocation{"--set " + std::string(text), 0, 0}, "",
                     "expected KEY=VALUE, like cluster.nodes=64");
  }
  Override o{std::string(trim(text.substr(0, eq))), std::string(trim(text.substr(eq + 1)))};
  if (o.key.empty()) {
    throw InputError(SourceLocation{"--set " + std::string(text), 0, 0}, "",
                     "expected KEY=VALUE, like cluster.nodes=64; the key is missing");
  }
  return o;
}

void apply_overrides(YamlNode& root, const std::vector<Override>& overrides) {
  for (const auto& o : overrides) apply_one(root, o);
}

}  // namespace dtsim::config
