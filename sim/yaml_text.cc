#include "sim/yaml_text.h"

#include <fmt/format.h>

#include "sim/error.h"

namespace dtsim {

// yaml-cpp 0.7 loops forever (allocating) when a ',' stands where a document's root node or the
// end of the document belongs: ",a", "[a],", "'a' ,", "&x ,", "a: 1\n---\n,". No valid YAML
// has a ',' there (a plain scalar cannot start with one, and nothing may follow a complete root
// node, and no line of a scenario starts with one), so such a comma is reported as a syntax error before yaml-cpp sees the text. The scan
// tracks only what decides "root position": flow depth, quotes, comments, document markers and
// node properties. It can misfire only inside a block scalar (| or >) whose content line starts
// with ',' right after a line ending in ']' or a quote, which no scenario needs. It also refuses
// text glued to a closing quote ('a'b), which is never valid YAML and which yaml-cpp can loop on,
// and a '[' or '{' after other text of a plain scalar ("n {"), valid YAML that yaml-cpp mis-scans.
void check_yaml_text(std::string_view text, const std::string& source) {
  enum class Last { start, property, closed, other };
  Last last = Last::start;
  int depth = 0;
  int line = 1;
  size_t line_start = 0;
  bool token_start = true;  // at the start of a line or after whitespace or a flow indicator
  // A quoted scalar closed outside flow collections on this line, with no ':' after it yet: only
  // a comment or ':' may follow it, and yaml-cpp loops on a ',' there too ("""",).
  bool quote_closed_on_line = false;
  // A flow collection closed outside others on this line: only ':' (it was a key) or a comment
  // may follow it; yaml-cpp 0.7 loops on a property and a ',' glued after one ("[a]!b,").
  bool flow_closed_on_line = false;
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
      flow_closed_on_line = false;
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
    // A complex key ('?' indicator): no dtsim file has one, and yaml-cpp 0.7 loops on one after a
    // root node with a property ("!a b\n?\n").
    if (token_start && c == '?' &&
        (i + 1 == text.size() || std::string_view(" \t\r\n").find(text[i + 1]) != std::string_view::npos)) {
      throw InputError(SourceLocation{source, line, static_cast<int>(i - line_start) + 1}, "",
                       "YAML syntax error: a complex key ('?'); write the key plainly or quote it");
    }
    // After a quoted scalar closed outside flow collections, only ':' (it was a key), a comment
    // or the end of the line may follow; yaml-cpp 0.7 loops on more text ("'' x'\n?").
    if (quote_closed_on_line && depth == 0 && c != ':' && c != ',') {
      throw InputError(SourceLocation{source, line, static_cast<int>(i - line_start) + 1}, "",
                       "YAML syntax error: unexpected text after a quoted scalar");
    }
    if (flow_closed_on_line && depth == 0) {
      if (c != ':') {
        throw InputError(SourceLocation{source, line, static_cast<int>(i - line_start) + 1}, "",
                         "YAML syntax error: unexpected text after a flow collection");
      }
      flow_closed_on_line = false;
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
      if (--depth == 0) {
        last = Last::closed;
        flow_closed_on_line = true;
      }
      token_start = true;
      continue;
    }
    if (depth > 0 && c == ',') {
      token_start = true;
      continue;
    }
    if (token_start && depth == 0 && (c == '&' || c == '!') && (last == Last::start || node_start || last == Last::property)) {
      // A node may carry a tag and an anchor, so a property may follow a property ("!a &b,",
      // on which yaml-cpp 0.7 loops as on "&b,"). A property ends at whitespace or a flow
      // indicator (YAML 1.2 anchors exclude ,[]{}). A
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

}  // namespace dtsim
