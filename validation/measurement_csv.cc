#include "validation/measurement_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <ostream>
#include <regex>

#include "sim/error.h"
#include "validation/text_fields.h"

namespace dtsim::validation {
namespace {

using detail::parse_int;
using detail::parse_number;
using detail::split_char;
using detail::trim;

constexpr std::array<std::string_view, 5> kRequired = {"collective", "size_bytes", "time_us",
                                                       "algbw_GBps", "busbw_GBps"};

// The file's own statement of the rank count ("# Ranks: 16"), when it makes one.
int ranks_from_header(const std::vector<std::string>& header) {
  static const std::regex ranks_re(R"(\bRanks:\s*(\d+))");
  for (const std::string& h : header) {
    std::smatch m;
    if (std::regex_search(h, m, ranks_re)) return std::stoi(m[1].str());
  }
  return 0;
}

}  // namespace

std::vector<MeasurementSet> read_measurement_csv(std::string_view text, const std::string& source) {
  std::vector<std::string> header;
  std::map<std::string, int> column;  // name -> index
  std::vector<MeasurementSet> sets;
  std::map<std::string, size_t> set_of_block;
  int line_no = 0;
  bool have_columns = false;
  auto error = [&](int col, const std::string& key, const std::string& msg) {
    return InputError(SourceLocation{source, line_no, col}, key, msg);
  };

  for (std::string_view raw : detail::split_lines(text)) {
    ++line_no;
    std::string_view line = trim(raw);
    if (line.empty()) continue;
    if (line.front() == '#') {
      if (!have_columns) header.emplace_back(trim(line.substr(1)));
      continue;
    }
    std::vector<std::string_view> fields = split_char(line, ',');
    if (!have_columns) {
      for (size_t i = 0; i < fields.size(); ++i) column[std::string(trim(fields[i]))] = static_cast<int>(i);
      for (std::string_view req : kRequired)
        if (!column.contains(std::string(req)))
          throw error(1, "columns",
                      fmt::format("expected the column line collective,size_bytes,time_us,"
                                  "algbw_GBps,busbw_GBps[,placement]; '{}' is missing",
                                  req));
      have_columns = true;
      continue;
    }
    if (fields.size() < column.size())
      throw error(0, "row",
                  fmt::format("expected {} comma-separated fields, got {} (truncated row?)",
                              column.size(), fields.size()));
    // Column positions are 1-based for messages: the sum of the preceding field widths.
    auto col_of = [&](int idx) {
      int c = 1;
      for (int i = 0; i < idx; ++i) c += static_cast<int>(fields[static_cast<size_t>(i)].size()) + 1;
      return c;
    };
    auto field = [&](std::string_view key) {
      return trim(fields[static_cast<size_t>(column.at(std::string(key)))]);
    };
    auto number = [&](std::string_view key) {
      auto v = parse_number(field(key));
      if (!v || *v < 0)
        throw error(col_of(column.at(std::string(key))), std::string(key),
                    fmt::format("expected a non-negative number, got \"{}\"", field(key)));
      return *v;
    };

    std::string_view coll_text = field("collective");
    std::string label;
    if (auto colon = coll_text.find(':'); colon != std::string_view::npos) {
      label = std::string(coll_text.substr(colon + 1));
      coll_text = coll_text.substr(0, colon);
    }
    auto kind = parse_collective_name(coll_text);
    if (!kind)
      throw error(1, "collective",
                  fmt::format("unknown collective \"{}\" (expected all_reduce, all_gather, "
                              "reduce_scatter, broadcast, reduce, alltoall or sendrecv)",
                              coll_text));
    MeasuredPoint p;
    p.line = line_no;
    auto size = parse_int(field("size_bytes"));
    if (!size || *size <= 0)
      throw error(col_of(column.at("size_bytes")), "size_bytes",
                  fmt::format("expected a positive integer, got \"{}\"", field("size_bytes")));
    p.size_bytes = *size;
    p.time_us = number("time_us");
    p.algbw_gbps = number("algbw_GBps");
    p.busbw_gbps = number("busbw_GBps");
    if (column.contains("placement")) {
      std::string_view pl = field("placement");
      if (pl == "in") p.placement = Placement::in_place;
      else if (pl == "out" || pl.empty()) p.placement = Placement::out_of_place;
      else
        throw error(col_of(column.at("placement")), "placement",
                    fmt::format("expected \"in\" or \"out\", got \"{}\"", pl));
    }
    if (column.contains("wrong")) {
      std::string_view w = field("wrong");
      if (!w.empty() && w != "N/A") {
        auto v = parse_int(w);
        if (!v) throw error(col_of(column.at("wrong")), "wrong", "expected an integer or N/A");
        p.wrong = *v;
      }
    }

    std::string block = fmt::format("{}:{}", collectives::name(*kind), label);
    auto [it, fresh] = set_of_block.try_emplace(block, sets.size());
    if (fresh) {
      MeasurementSet s;
      s.source = source;
      s.label = label;
      s.collective = *kind;
      s.header = header;
      // A block label names one configuration of several in the file; the file-wide rank count
      // would be a guess for it.
      s.ranks = label.empty() ? ranks_from_header(header) : 0;
      sets.push_back(std::move(s));
    }
    sets[it->second].points.push_back(p);
  }
  if (!have_columns)
    throw InputError(SourceLocation{source, line_no, 0}, "columns",
                     "no column line (collective,size_bytes,...) found: not a measurement CSV");
  if (sets.empty())
    throw InputError(SourceLocation{source, line_no, 0}, "rows", "the file has no result rows");
  return sets;
}

void write_measurement_csv(std::ostream& out, const MeasurementSet& set) {
  for (const std::string& h : set.header) out << "# " << h << '\n';
  out << "collective,size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n";
  std::string coll(collectives::name(set.collective));
  if (!set.label.empty()) coll += ":" + set.label;
  for (const MeasuredPoint& p : set.points)
    out << fmt::format("{},{},{:.2f},{:.3f},{:.3f},{}\n", coll, p.size_bytes, p.time_us,
                       p.algbw_gbps, p.busbw_gbps, name(p.placement));
}

}  // namespace dtsim::validation
