// Small, strict field parsers shared by the measurement readers: each parses a whole token or
// returns nullopt, so that a reader can point at the exact field that is wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtsim::validation::detail {

std::optional<int64_t> parse_int(std::string_view s);
// Finite decimal or scientific notation ("12.5", "1.2e+06"); rejects "nan", "inf" and trailing text.
std::optional<double> parse_number(std::string_view s);
std::vector<std::string_view> split_whitespace(std::string_view s);
std::vector<std::string_view> split_char(std::string_view s, char sep);
std::string_view trim(std::string_view s);
// Splits text into lines without their '\n' or "\r\n".
std::vector<std::string_view> split_lines(std::string_view text);

}  // namespace dtsim::validation::detail
