// One CSV field as RFC 4180 writes it: as is, or quoted (inner quotes doubled) when it holds a
// comma, a quote or a line break. Op names from traces and sweep values can hold any of them.
//   out << csv_field("aten::mm, fused") << ',';   // "aten::mm, fused"
#pragma once

#include <string>
#include <string_view>

namespace dtsim::report {

inline std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace dtsim::report
