#include "validation/nccl_tests_parser.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "sim/error.h"
#include "validation/text_fields.h"

namespace dtsim::validation {
namespace {

using collectives::CollectiveKind;
using detail::parse_int;
using detail::parse_number;
using detail::split_whitespace;
using detail::trim;

enum class Field { size, count, type, redop, root, time, algbw, busbw, wrong, error, other };

Field field_of(std::string_view name) {
  if (name == "size" || name == "bytes") return Field::size;
  if (name == "count" || name == "N") return Field::count;
  if (name == "type") return Field::type;
  if (name == "redop" || name == "op") return Field::redop;
  if (name == "root") return Field::root;
  if (name == "time" || name == "cputime") return Field::time;
  if (name == "algbw") return Field::algbw;
  if (name == "busbw") return Field::busbw;
  if (name == "#wrong" || name == "wrong") return Field::wrong;
  if (name == "error" || name == "res") return Field::error;
  return Field::other;  // per-iteration statistics (i_min, i_p99, ...): read, not kept
}

struct Group {
  std::vector<std::string> names;
  Placement placement = Placement::out_of_place;
};

// The column header of one table: leading columns (size count type redop root), then one group
// per placement that starts at "time".
struct Layout {
  std::vector<std::string> leading;
  std::vector<Group> groups;
  bool timestamp = false;  // rows end with "YYYY-MM-DD HH:MM:SS"

  size_t width() const {
    size_t n = leading.size();
    for (const Group& g : groups) n += g.names.size();
    return n;
  }
  bool has(Field f) const {
    for (const std::string& n : leading)
      if (field_of(n) == f) return true;
    return false;
  }
};

std::optional<Layout> parse_column_header(std::string_view after_hash, bool banner_out,
                                          bool banner_in) {
  std::vector<std::string_view> tokens = split_whitespace(after_hash);
  // The header names "time algbw busbw" in that order; prose that merely mentions them does not.
  bool is_header = false;
  for (size_t i = 0; i + 2 < tokens.size(); ++i)
    is_header |= field_of(tokens[i]) == Field::time && tokens[i + 1] == "algbw" &&
                 tokens[i + 2] == "busbw";
  if (!is_header) return std::nullopt;
  Layout layout;
  for (std::string_view t : tokens) {
    if (t == "timestamp") {
      layout.timestamp = true;
    } else if (field_of(t) == Field::time) {
      layout.groups.push_back(Group{{std::string(t)}, Placement::out_of_place});
    } else if (layout.groups.empty()) {
      layout.leading.emplace_back(t);
    } else {
      layout.groups.back().names.emplace_back(t);
    }
  }
  if (layout.groups.size() == 2) {
    layout.groups[1].placement = Placement::in_place;
  } else if (layout.groups.size() == 1 && banner_in && !banner_out) {
    layout.groups[0].placement = Placement::in_place;
  }
  return layout;
}

// What the output says about which program produced it ("# Collective test starting:
// all_reduce_perf", a pasted command line "... ./build/alltoall_perf -b 8 ...").
std::optional<CollectiveKind> collective_hint(std::string_view line) {
  static const std::regex perf_re(R"(([A-Za-z_]+)_perf\b)");
  std::string s(line);
  for (auto it = std::sregex_iterator(s.begin(), s.end(), perf_re); it != std::sregex_iterator();
       ++it) {
    std::string prog = (*it)[1].str();
    // "./build/all_reduce_perf" matches as "build/all_reduce": keep the last path component.
    if (auto slash = prog.find_last_of('/'); slash != std::string::npos) prog = prog.substr(slash + 1);
    if (auto k = parse_collective_name(prog)) return k;
  }
  return std::nullopt;
}

bool is_noise(std::string_view line) {
  // NCCL's own log lines and launcher chatter can interleave with the table in multi-process runs.
  return line.find("NCCL INFO") != std::string_view::npos ||
         line.find("NCCL WARN") != std::string_view::npos ||
         line.find("NCCL TRACE") != std::string_view::npos ||
         line.find("NCCL version") != std::string_view::npos;
}

struct Table {
  Layout layout;
  MeasurementSet set;
  int header_line = 0;
  std::optional<CollectiveKind> hint;   // from output lines before the table
  std::set<int> rank_lines;             // "#  Rank N" lines of the preamble
  std::set<std::string> hosts;          // the hosts those lines name
  int threads_times_gpus = 0;           // from "# nThread T nGpus G"
  int gpus_per_thread = 0;              // G of the same line
  bool preamble = false;                // the table follows nccl-tests' "# nThread" line
  bool trailer = false;
  bool root_set = false;                // some row has root >= 0
  bool redop_none = true;               // every row's redop is "none" (or there is no redop)
  std::set<std::string> types, redops;  // the data types and reduction operators of the rows
};

}  // namespace

std::string_view strip_launcher_prefix(std::string_view line) {
  static const std::regex prefix_re(
      R"(^(\[\d+,\d+\]<(stdout|stderr)>:\s?|\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d([.,]\d+)?(Z|[+-]\d\d:?\d\d)?\]?\s+|\s*\d+:\s|[A-Za-z][A-Za-z0-9_.-]*:\s))");
  for (int i = 0; i < 4; ++i) {
    std::cmatch m;
    if (!std::regex_search(line.data(), line.data() + line.size(), m, prefix_re)) break;
    line.remove_prefix(static_cast<size_t>(m.length(0)));
  }
  return line;
}

bool looks_like_nccl_tests_output(std::string_view text) {
  for (std::string_view raw : detail::split_lines(text)) {
    std::string_view line = trim(strip_launcher_prefix(raw));
    if (!line.starts_with("#")) continue;
    if (parse_column_header(line.substr(1), false, false)) return true;
  }
  return false;
}

std::vector<MeasurementSet> parse_nccl_tests_output(std::string_view text, const std::string& source,
                                                    const NcclTestsParseOptions& options) {
  static const std::regex rank_re(R"(^#\s*Rank\s+(\d+)\s+(Group|Pid)\b.*?\bon\s+(\S+))");
  static const std::regex nthread_re(R"(^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+))");
  static const std::regex avg_re(R"(^#\s*Avg bus bandwidth\s*:\s*(\S+))");
  // NCCL_DEBUG=INFO lines interleaved with the output: "NCCL INFO NCCL_ALGO set by environment to
  // Ring".
  static const std::regex env_re(R"(NCCL INFO (NCCL_[A-Z0-9_]+) set by environment to (\S+))");
  std::map<std::string, std::string> nccl_env;

  std::vector<Table> tables;
  std::vector<std::string> preamble_header;
  std::set<int> rank_lines;
  std::set<std::string> hosts;
  int threads_times_gpus = 0;
  int gpus_per_thread = 0;
  bool saw_nthread = false;
  bool banner_out = false, banner_in = false;
  std::optional<CollectiveKind> hint;
  std::optional<CollectiveKind> any_hint;
  bool in_rows = false;  // between a column header and the '#' line that ends its rows
  int line_no = 0;
  int last_line = 0;

  for (std::string_view raw : detail::split_lines(text)) {
    ++line_no;
    std::string_view line = trim(strip_launcher_prefix(raw));
    if (line.empty()) continue;
    last_line = line_no;
    if (line.find("set by environment") != std::string_view::npos) {
      std::string sline(line);
      std::smatch m;
      if (std::regex_search(sline, m, env_re)) nccl_env[m[1].str()] = m[2].str();
    }
    if (auto h = collective_hint(line)) {
      hint = h;
      if (!any_hint) any_hint = h;
    }
    if (line.front() == '#') {
      std::string_view body = trim(line.substr(1));
      std::string sline(line);
      std::smatch m;
      if (std::regex_search(sline, m, nthread_re)) {
        // A new run starts: its preamble replaces the previous one.
        preamble_header.clear();
        nccl_env.clear();
        rank_lines.clear();
        hosts.clear();
        saw_nthread = true;
        threads_times_gpus = std::stoi(m[1].str()) * std::stoi(m[2].str());
        gpus_per_thread = std::stoi(m[2].str());
      }
      if (std::regex_search(sline, m, rank_re)) {
        rank_lines.insert(std::stoi(m[1].str()));
        hosts.insert(m[3].str());
      }
      if (std::regex_search(sline, m, avg_re) && !tables.empty()) {
        tables.back().trailer = true;
        if (auto v = parse_number(m[1].str())) tables.back().set.avg_busbw_gbps = *v;
      }
      if (body.find("out-of-place") != std::string_view::npos ||
          body.find("in-place") != std::string_view::npos) {
        banner_out = body.find("out-of-place") != std::string_view::npos;
        banner_in = body.find("in-place") != std::string_view::npos;
        in_rows = false;
        continue;
      }
      if (auto layout = parse_column_header(body, banner_out, banner_in)) {
        Table t;
        t.layout = std::move(*layout);
        t.header_line = line_no;
        t.hint = hint;
        t.rank_lines = rank_lines;
        t.hosts = hosts;
        t.threads_times_gpus = threads_times_gpus;
        t.gpus_per_thread = gpus_per_thread;
        t.preamble = saw_nthread;
        t.set.source = source;
        t.set.header = preamble_header;
        t.set.nccl_env = nccl_env;
        tables.push_back(std::move(t));
        in_rows = true;
        banner_out = banner_in = false;
        continue;
      }
      // The units line under the column header does not end the rows.
      if (in_rows && tables.back().set.points.empty() && body.starts_with("(")) continue;
      if (in_rows && !tables.back().set.points.empty()) in_rows = false;
      if (!in_rows && !body.empty() && tables.empty()) preamble_header.emplace_back(body);
      continue;
    }
    if (!in_rows) continue;  // launcher or NCCL chatter outside a table
    if (is_noise(line)) continue;

    Table& t = tables.back();
    const Layout& L = t.layout;
    std::vector<std::string_view> tok = split_whitespace(line);
    auto err = [&](const std::string& key, const std::string& msg) {
      return InputError(SourceLocation{source, line_no, 0}, key, msg);
    };
    if (!std::isdigit(static_cast<unsigned char>(tok[0][0])))
      throw err("row", fmt::format("expected a result row starting with the size in bytes, got "
                                   "\"{}\" (garbled output?)",
                                   line.substr(0, 40)));
    size_t width = L.width();
    size_t have = tok.size();
    if (L.timestamp && have == width + 2) have = width;  // trailing "date time"
    // A row with only its last group filled: nccl-tests leaves out-of-place blank when it only
    // runs in place.
    bool last_group_only = L.groups.size() == 2 &&
                           have == L.leading.size() + L.groups.back().names.size();
    if (have != width && !last_group_only)
      throw err("row", fmt::format("expected {} fields ({} leading, then time algbw busbw ... per "
                                   "placement), got {}: truncated or garbled row",
                                   width, L.leading.size(), tok.size()));

    size_t i = 0;
    MeasuredPoint base;
    base.line = line_no;
    for (const std::string& col : L.leading) {
      std::string_view v = tok[i++];
      switch (field_of(col)) {
        case Field::size: {
          auto n = parse_int(v);
          if (!n || *n < 0) throw err(col, fmt::format("expected a size in bytes, got \"{}\"", v));
          base.size_bytes = *n;
          break;
        }
        case Field::count: {
          auto n = parse_int(v);
          if (!n || *n < 0) throw err(col, fmt::format("expected an element count, got \"{}\"", v));
          base.count = *n;
          break;
        }
        case Field::root: {
          auto n = parse_int(v);
          if (!n) throw err(col, fmt::format("expected a root rank, got \"{}\"", v));
          if (*n >= 0) t.root_set = true;
          break;
        }
        case Field::redop:
          if (v != "none") t.redop_none = false;
          t.redops.emplace(v);
          break;
        case Field::type:
          t.types.emplace(v);
          break;
        default:
          break;
      }
    }
    for (size_t g = last_group_only ? 1 : 0; g < L.groups.size(); ++g) {
      MeasuredPoint p = base;
      p.placement = L.groups[g].placement;
      for (const std::string& col : L.groups[g].names) {
        std::string_view v = tok[i++];
        Field f = field_of(col);
        if (f == Field::wrong) {
          if (v == "N/A") continue;
          auto n = parse_number(v);
          if (!n || *n < 0) throw err(col, fmt::format("expected a count or N/A, got \"{}\"", v));
          p.wrong = static_cast<int64_t>(*n);
          continue;
        }
        // The old format's max-error column: N/A when validation was off (-c 0); not a count of
        // wrong elements, so not kept.
        if (f == Field::error && v == "N/A") continue;
        auto n = parse_number(v);
        if (!n || *n < 0) throw err(col, fmt::format("expected a number, got \"{}\"", v));
        if (f == Field::time) p.time_us = *n;
        if (f == Field::algbw) p.algbw_gbps = *n;
        if (f == Field::busbw) p.busbw_gbps = *n;
      }
      // nccl-tests runs a zero-byte size first for some collectives; it measures nothing.
      if (p.size_bytes > 0) t.set.points.push_back(p);
    }
  }

  if (tables.empty())
    throw InputError(SourceLocation{source, 0, 0}, "",
                     "no nccl-tests results table (the '#  size  count  type ... time  algbw  "
                     "busbw' header line) found");

  std::vector<MeasurementSet> out;
  for (Table& t : tables) {
    if (t.set.points.empty())
      throw InputError(SourceLocation{source, last_line, 0}, "rows",
                       fmt::format("the results table that starts at line {} has no rows: the "
                                   "output is truncated",
                                   t.header_line));
    if (!t.trailer) {
      if (t.preamble)
        throw InputError(SourceLocation{source, last_line, 0}, "rows",
                         fmt::format("the output ends without nccl-tests' '# Avg bus bandwidth' "
                                     "line after the table at line {}: it is truncated",
                                     t.header_line));
      t.set.warnings.push_back("no '# Avg bus bandwidth' trailer: the table may be incomplete");
    }
    std::optional<CollectiveKind> kind = t.hint;
    if (!kind) kind = collective_hint(std::filesystem::path(source).filename().string());
    if (!kind) kind = any_hint;
    if (!kind && options.collective) {
      kind = options.collective;
      t.set.warnings.push_back(fmt::format("the output does not name its program; read as {} ({})",
                                           collectives::name(*kind), options.collective_from));
    }
    if (!kind && t.layout.has(Field::root) && t.root_set) {
      kind = t.redop_none ? CollectiveKind::broadcast : CollectiveKind::reduce;
      // gather and scatter print the same columns as broadcast; their bus bandwidth is
      // (n-1)/n of the algorithm bandwidth where broadcast's is all of it.
      const MeasuredPoint* widest = nullptr;
      for (const MeasuredPoint& p : t.set.points)
        if (widest == nullptr || p.algbw_gbps > widest->algbw_gbps) widest = &p;
      if (t.redop_none && widest != nullptr && widest->algbw_gbps > 0.1 &&
          widest->busbw_gbps < 0.98 * widest->algbw_gbps)
        throw InputError(SourceLocation{source, t.header_line, 0}, "collective",
                         "a rooted table whose bus bandwidth is below its algorithm bandwidth is "
                         "gather_perf or scatter_perf output, which print the same columns: name "
                         "it with --collective or put the program name in the file name");
    }
    if (!kind && t.layout.has(Field::redop) && !t.redop_none) {
      kind = CollectiveKind::all_reduce;
      t.set.warnings.push_back(
          "the output does not name its program; read as all_reduce (a reduction without root)");
    }
    if (!kind)
      throw InputError(SourceLocation{source, t.header_line, 0}, "collective",
                       "cannot tell which collective this output measures (no *_perf program "
                       "named and the columns fit several): name it with --collective or put the "
                       "program name in the file name");
    t.set.gpus_per_thread = t.gpus_per_thread;
    if (t.gpus_per_thread > 1)
      t.set.warnings.push_back(one_thread_drove_gpus_note(t.gpus_per_thread));
    // nccl-tests -d all / -o all: rows of one size for several data types or reduction operators,
    // which are averaged like the placements; the model prices bytes, whatever their type.
    if (t.types.size() > 1 || t.redops.size() > 1) {
      t.set.warnings.push_back(fmt::format(
          "rows of {} data type{} ({}) and {} reduction operator{} ({}) share sizes "
          "and are averaged per size; the model prices the bytes, not the type or the operator",
          t.types.size(), t.types.size() == 1 ? "" : "s", fmt::join(t.types, ", "), t.redops.size(),
          t.redops.size() == 1 ? "" : "s", fmt::join(t.redops, ", ")));
    }
    t.set.collective = *kind;
    t.set.nodes = static_cast<int>(t.hosts.size());
    t.set.ranks = !t.rank_lines.empty() ? static_cast<int>(t.rank_lines.size())
                                        : t.threads_times_gpus;
    out.push_back(std::move(t.set));
  }
  return out;
}

}  // namespace dtsim::validation
