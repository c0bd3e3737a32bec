#include "config/yaml_tree.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/yaml_text.h"

namespace dtsim::config {
namespace {

// A scenario is a few levels deep; anything deeper is a mistake or hostile input (an alias that
// refers to itself makes an endless tree). The node budget stops "billion laughs" alias bombs.
constexpr int kMaxDepth = 32;
constexpr long kMaxNodes = 200'000;

SourceLocation location(const std::string& source, const YAML::Mark& mark) {
  SourceLocation at{source, 0, 0};
  if (mark.line >= 0) at.line = mark.line + 1;
  if (mark.column >= 0) at.column = mark.column + 1;
  return at;
}

class Converter {
 public:
  explicit Converter(const std::string& source) : source_(source) {}

  YamlNode convert(const YAML::Node& in, const std::string& path, int depth) {
    YamlNode out;
    out.where = location(source_, in.Mark());
    if (++nodes_ > kMaxNodes) {
      throw InputError(out.where, path, "the document is too large (more than 200000 nodes)");
    }
    if (depth > kMaxDepth) {
      throw InputError(out.where, path, "nested too deeply (more than 32 levels)");
    }
    switch (in.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out.kind = YamlNode::Kind::null;
        break;
      case YAML::NodeType::Scalar:
        out.kind = YamlNode::Kind::scalar;
        out.scalar = in.Scalar();
        break;
      case YAML::NodeType::Sequence: {
        out.kind = YamlNode::Kind::sequence;
        size_t i = 0;
        for (const auto& item : in) {
          out.items.push_back(convert(item, path + "[" + std::to_string(i++) + "]", depth + 1));
        }
        break;
      }
      case YAML::NodeType::Map:
        out.kind = YamlNode::Kind::map;
        for (const auto& kv : in) {
          SourceLocation key_at = location(source_, kv.first.Mark());
          if (!kv.first.IsScalar()) {
            throw InputError(key_at, path, "expected a key name, got " +
                             std::string(kv.first.IsMap() ? "a map" : kv.first.IsSequence() ? "a list" : "nothing"));
          }
          std::string key = kv.first.Scalar();
          std::string child = path.empty() ? key : path + "." + key;
          if (const YamlEntry* first = out.find_entry(key)) {
            throw InputError(key_at, child, "duplicate key (first given at line " +
                                                std::to_string(first->key_where.line) + ")");
          }
          out.entries.push_back(YamlEntry{key, key_at, convert(kv.second, child, depth + 1)});
        }
        break;
    }
    return out;
  }

 private:
  const std::string& source_;
  long nodes_ = 0;
};

}  // namespace

const YamlEntry* YamlNode::find_entry(std::string_view key) const {
  for (const auto& e : entries) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

const YamlNode* YamlNode::find(std::string_view key) const {
  const YamlEntry* e = find_entry(key);
  return e ? &e->value : nullptr;
}

YamlNode* YamlNode::find(std::string_view key) {
  for (auto& e : entries) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

std::string describe(const YamlNode& node) {
  switch (node.kind) {
    case YamlNode::Kind::null: return "nothing";
    case YamlNode::Kind::map: return "a map";
    case YamlNode::Kind::sequence: return "a list";
    case YamlNode::Kind::scalar: break;
  }
  std::string shown = node.scalar.size() > 60 ? node.scalar.substr(0, 57) + "..." : node.scalar;
  std::string out = "\"";
  for (char c : shown) {
    // Keep the message on one line whatever the input held.
    if (c == '\n' || c == '\r') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) out += ' ';
    else out += c;
  }
  return out + "\"";
}

YamlNode parse_yaml_tree(std::string_view text, const std::string& source) {
  check_yaml_text(text, source);
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    std::string msg = e.msg;
    for (char& c : msg) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    throw InputError(location(source, e.mark), "", "YAML syntax error: " + msg);
  }
  if (docs.size() > 1) {
    throw InputError(location(source, docs[1].Mark()), "",
                     "expected one YAML document, found a second one (---)");
  }
  if (docs.empty()) return YamlNode{YamlNode::Kind::null, {}, {}, {}, SourceLocation{source, 1, 1}};
  try {
    return Converter(source).convert(docs.front(), "", 0);
  } catch (const YAML::Exception& e) {
    throw InputError(location(source, e.mark), "", "YAML error: " + e.msg);
  }
}

}  // namespace dtsim::config
