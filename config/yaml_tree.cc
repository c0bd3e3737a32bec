#include "config/yaml_tree.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

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

// yaml-cpp 0.7 loops forever (allocating) when a ',' stands where a document's root node or the
// end of the document belongs: ",a", "[a],", "'a' ,", "&x ,", "a: 1\n---\n,". No valid YAML
// has a ',' there (a plain scalar cannot start with one, and nothing may follow a complete root
// node, and no line of a scenario starts with one), so such a comma is reported as a syntax error before yaml-cpp sees the text. The scan
// tracks only what decides "root position": flow depth, quotes, comments, document markers and
// node properties. It can misfire only inside a block scalar (| or >) whose content line starts
// with ',' right after a line ending in ']' or a quote, which no scenario needs. It also refuses
// text glued to a closing quote ('a'b), which is never valid YAML and which yaml-cpp can loop on,
// and a '[' or '{' after other text of a plain scalar ("n {"), valid YAML that yaml-cpp mis-scans.
void reject_stray_root_comma(std::string_view text, const std::string& source) {
  enum class Last { start, property, closed, other };
  Last last = Last::start;
  int depth = 0;
  int line = 1;
  size_t line_start = 0;
  bool token_start = true;  // at the start of a line or after whitespace or a flow indicator
  // A quoted scalar closed outside flow collections on this line, with no ':' after it yet: only
  // a comment or ':' may follow it, and yaml-cpp loops on a ',' there too ("""",).
  bool quote_closed_on_line = false;
  // YAML allows no control characters, and yaml-cpp takes a NUL for the end of the text (and
  // loops on one inside a directive line); it also loops on some invalid UTF-8 ("!\xf2 {\n'',").
  // Checked over the whole text first, so nothing hides in a comment, a directive or a quoted
  // scalar, which the scan below skips.
  for (size_t i = 0, ln = 1, ls = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const auto where = [&] { return SourceLocation{source, static_cast<int>(ln), static_cast<int>(i - ls) + 1}; };
    if (byte == '\n') {
      ++ln;
      ls = i + 1;
    } else if ((byte < 0x20 && byte != '\t' && byte != '\r') || byte == 0x7f) {
      throw InputError(where(), "", fmt::format("YAML syntax error: control character 0x{:02x} is not allowed", byte));
    } else if (byte >= 0x80) {
      // A UTF-8 sequence: a lead byte 0xc2..0xf4 and its 1-3 continuation bytes 0x80..0xbf.
      const size_t extra = byte >= 0xc2 && byte <= 0xdf ? 1 : byte >= 0xe0 && byte <= 0xef ? 2 : byte >= 0xf0 && byte <= 0xf4 ? 3 : 0;
      bool ok = extra > 0 && i + extra < text.size();
      for (size_t k = 1; ok && k <= extra; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
      if (!ok) throw InputError(where(), "", fmt::format("YAML syntax error: byte 0x{:02x} is not valid UTF-8", byte));
      i += extra;
    }
  }
  // Where a node may begin in block context: a line's first token, or the token after a ':',
  // '-' or '?' indicator. A property (&anchor, !tag) there is followed by its node, never by ','.
  bool node_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool at_line_start = i == line_start;
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      token_start = true;
      node_start = true;
      quote_closed_on_line = false;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      token_start = true;
      continue;
    }
    if (c == '#' && token_start) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (at_line_start && depth == 0 && (text.substr(i, 3) == "---" || text.substr(i, 3) == "...") &&
        (i + 3 == text.size() || text[i + 3] == ' ' || text[i + 3] == '\n' || text[i + 3] == '\r')) {
      last = Last::start;
      i += 2;
      token_start = true;
      continue;
    }
    if (at_line_start && depth == 0 && last == Last::start && c == '%') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    const bool first_on_line = text.find_first_not_of(" \t", line_start) == i;
    // yaml-cpp scans a ',' that starts a token as a flow entry even in block context, and some
    // parser states then never advance. Outside flow collections such a comma is valid only as
    // the first character of a plain scalar's continuation line; a scenario has none, and the
    // user can quote the text, so a line that starts with ',' is rejected too.
    const bool dedented_comma = c == ',' && depth == 0 && first_on_line;
    if (c == ':' && depth == 0) quote_closed_on_line = false;
    if ((c == ',' && depth == 0 && (last != Last::other || quote_closed_on_line)) || dedented_comma) {
      throw InputError(SourceLocation{source, line, static_cast<int>(i - line_start) + 1}, "",
                       "YAML syntax error: unexpected ','");
    }
    if (token_start && (c == '"' || c == '\'')) {
      // A quoted scalar: skip to its closing quote ('' is an escaped ' in single quotes).
      size_t j = i + 1;
      for (; j < text.size(); ++j) {
        if (text[j] == '\n') {
          ++line;
          line_start = j + 1;
        }
        if (c == '"' && text[j] == '\\') {
          ++j;
          continue;
        }
        if (text[j] == c) {
          if (c == '\'' && j + 1 < text.size() && text[j + 1] == '\'') {
            ++j;
            continue;
          }
          break;
        }
      }
      i = j;
      // Only a separator may follow a closed quoted scalar; yaml-cpp 0.7 loops on "'a'b\n?".
      if (j + 1 < text.size() && std::string_view(" \t\r\n:,]}").find(text[j + 1]) == std::string_view::npos) {
        throw InputError(SourceLocation{source, line, static_cast<int>(j + 1 - line_start) + 1}, "",
                         "YAML syntax error: unexpected text after a quoted scalar");
      }
      if (depth == 0) {
        last = Last::closed;
        quote_closed_on_line = true;
      }
      token_start = false;
      continue;
    }
    if (token_start && (c == '[' || c == '{')) {
      // In block context a '[' or '{' after other text on its line is part of a plain scalar
      // ("n {"); yaml-cpp 0.7 opens a flow collection there and loops on a ',' lines later
      // ("n {\n#\n,"). A scenario never needs one: the text can be quoted.
      if (depth == 0 && !node_start && last != Last::property && last != Last::start) {
        throw InputError(SourceLocation{source, line, static_cast<int>(i - line_start) + 1}, "",
                         fmt::format("YAML syntax error: '{}' inside a plain scalar (quote the text, or start the "
                                     "flow collection after ': ' or '- ')",
                                     c));
      }
      ++depth;
      token_start = true;
      continue;
    }
    if (depth > 0 && (c == ']' || c == '}')) {
      if (--depth == 0) last = Last::closed;
      token_start = true;
      continue;
    }
    if (depth > 0 && c == ',') {
      token_start = true;
      continue;
    }
    if (token_start && depth == 0 && (c == '&' || c == '!') && (last == Last::start || node_start)) {
      // A property ends at whitespace or a flow indicator (YAML 1.2 anchors exclude ,[]{}). A
      // quote is no tag character, and yaml-cpp 0.7 loops on one there ("!\"[\","): refused in
      // anchors too, which no scenario needs.
      while (i + 1 < text.size() && std::string_view(" \t\r\n,[]{}").find(text[i + 1]) == std::string_view::npos) {
        ++i;
        if (text[i] == '"' || text[i] == '\'') {
          throw InputError(SourceLocation{source, line, static_cast<int>(i - line_start) + 1}, "",
                           "YAML syntax error: a quote inside a tag or anchor");
        }
      }
      last = Last::property;
      token_start = false;
      node_start = false;
      continue;
    }
    if (depth == 0) last = Last::other;
    token_start = false;
    const bool indicator = c == ':' || c == '-' || c == '?';
    node_start = depth == 0 && indicator && (i + 1 == text.size() || std::string_view(" \t\r\n").find(text[i + 1]) != std::string_view::npos);
  }
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
  reject_stray_root_comma(text, source);
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
