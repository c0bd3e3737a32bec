#include "validation/nccl_tests_parser.h"

#include <fmt/format.h>

#include <algorithm>
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

// A collective named by a word of a file's stem ("nccl_allgather.log", "alltoall-8gpu.txt",
// "reduce_scatter_perf.out"): the one collective the words name, if exactly one.
std::optional<CollectiveKind> file_name_hint(const std::string& source) {
  if (auto k = collective_hint(std::filesystem::path(source).filename().string())) return k;
  std::string stem = std::filesystem::path(source).stem().string();
  std::vector<std::string> words;
  std::string w;
  for (char c : stem) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      w += c;
    } else {
      words.push_back(std::move(w));
      w.clear();
    }
  }
  words.push_back(std::move(w));
  std::set<CollectiveKind> named;
  for (size_t i = 0; i < words.size(); ++i) {
    // "all_gather" splits into two words; try each word and each pair.
    for (size_t n = 1; n <= 2 && i + n <= words.size(); ++n) {
      std::string joined;
      for (size_t j = i; j < i + n; ++j) joined += words[j];
      if (joined.size() < 6) continue;  // "reduce" alone, "p2p", "a2a": too common as parts of other words
      if (auto k = parse_collective_name(joined)) named.insert(*k);
    }
  }
  if (named.size() == 1) return *named.begin();
  return std::nullopt;
}

// What an NCCL_DEBUG=INFO log line glued onto a row leaves of it: the part before NCCL's
// "host:pid:tid [dev] NCCL INFO" prefix (empty for a line that is all log).
std::string_view cut_nccl_log(std::string_view line) {
  static const std::regex log_re(R"(([A-Za-z][A-Za-z0-9_.-]*:\d+:\d+ \[\d+\] )?NCCL (INFO|WARN|TRACE))");
  std::cmatch m;
  if (!std::regex_search(line.data(), line.data() + line.size(), m, log_re)) return line;
  return trim(line.substr(0, static_cast<size_t>(m.position(0))));
}

// busbw / algbw of a collective on n ranks, as nccl-tests computes it.
double bus_factor(CollectiveKind k, int n) {
  switch (k) {
    case CollectiveKind::all_reduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all:
    case CollectiveKind::gather:
    case CollectiveKind::scatter: return static_cast<double>(n - 1) / n;
    default: return 1.0;
  }
}

// The columns of a pasted row whose header was left out: "size count type [redop] [root]" and
// one or two groups of "time algbw busbw #wrong", told apart by the words and the field count.
std::optional<Layout> layout_of_row(const std::vector<std::string_view>& tok) {
  static const std::set<std::string_view> types = {"float", "half", "double", "bfloat16", "int8", "uint8", "int32",
                                                   "uint32", "int64", "uint64", "float16", "float32", "float64",
                                                   "fp8_e4m3", "fp8_e5m2", "f8e4m3", "f8e5m2"};
  static const std::set<std::string_view> ops = {"sum", "prod", "max", "min", "avg", "none", "premulsum", "mulsum"};
  if (tok.size() < 7 || !parse_int(tok[0]) || !parse_int(tok[1]) || !types.count(tok[2])) return std::nullopt;
  Layout l;
  l.leading = {"size", "count", "type"};
  size_t at = 3;
  if (ops.count(tok[at])) {
    l.leading.emplace_back("redop");
    ++at;
  }
  const size_t rest = tok.size() - at;
  if (rest % 4 == 1 && parse_int(tok[at])) {
    l.leading.emplace_back("root");
    ++at;
  }
  const size_t groups = (tok.size() - at) / 4;
  if ((tok.size() - at) % 4 != 0 || groups < 1 || groups > 2) return std::nullopt;
  for (size_t g = 0; g < groups; ++g) {
    l.groups.push_back(Group{{"time", "algbw", "busbw", "#wrong"}, g == 0 ? Placement::out_of_place : Placement::in_place});
  }
  return l;
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
  bool redop_empty = false;             // rows leave the redop field blank (old alltoall_perf)
  std::set<std::string> types, redops;  // the data types and reduction operators of the rows
};

}  // namespace

std::string_view strip_launcher_prefix(std::string_view line) {
  static const std::regex prefix_re(
      R"(^(\[\d+,\d+\]<(stdout|stderr)>:\s?|\[\d+\]\s|\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d([.,]\d+)?(Z|[+-]\d\d:?\d\d)?\]?\s+|\s*\d+:\s|[A-Za-z][A-Za-z0-9_.-]*:\s))");
  for (int i = 0; i < 4; ++i) {
    std::cmatch m;
    if (!std::regex_search(line.data(), line.data() + line.size(), m, prefix_re)) break;
    line.remove_prefix(static_cast<size_t>(m.length(0)));
  }
  return line;
}

bool looks_like_nccl_tests_output(std::string_view text) {
  int rows = 0;
  for (std::string_view raw : detail::split_lines(text)) {
    std::string_view line = trim(strip_launcher_prefix(raw));
    if (line.starts_with("#") && parse_column_header(line.substr(1), false, false)) return true;
    // A paste of the rows alone: whitespace-separated rows in nccl-tests' columns.
    if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0])) && layout_of_row(split_whitespace(line))) ++rows;
  }
  return rows >= 2;
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

  std::vector<std::string> pending;  // the pieces of the row being gathered
  int pending_line = 0;
  // Reads one whole row of the current table.
  auto process_row = [&](std::vector<std::string_view> tok, int row_line) {
    Table& t = tables.back();
    const Layout& L = t.layout;
    auto err = [&](const std::string& key, const std::string& msg) {
      return InputError(SourceLocation{source, row_line, 0}, key, msg);
    };
    size_t width = L.width();
    // Old alltoall_perf leaves its redop field blank: the row is one field short where the redop
    // column would hold a word.
    size_t redop_at = L.leading.size();
    for (size_t c = 0; c < L.leading.size(); ++c)
      if (field_of(L.leading[c]) == Field::redop) redop_at = c;
    if (redop_at < L.leading.size() && tok.size() + 1 == width && redop_at < tok.size() &&
        parse_number(tok[redop_at])) {
      tok.insert(tok.begin() + static_cast<ptrdiff_t>(redop_at), std::string_view());
      t.redop_empty = true;
    }
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
    base.line = row_line;
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
          if (v.empty()) break;
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
  };
  // A table whose rows follow, with what the lines before it said.
  auto start_table = [&](Layout layout, int at_line, bool preamble) -> Table& {
    Table& t = tables.emplace_back();
    t.layout = std::move(layout);
    t.header_line = at_line;
    t.hint = hint;
    t.rank_lines = rank_lines;
    t.hosts = hosts;
    t.threads_times_gpus = threads_times_gpus;
    t.gpus_per_thread = gpus_per_thread;
    t.preamble = preamble;
    t.set.source = source;
    t.set.header = preamble_header;
    t.set.nccl_env = nccl_env;
    in_rows = true;
    return t;
  };
  auto flush_row = [&] {
    if (pending.empty()) return;
    std::vector<std::string_view> tok(pending.begin(), pending.end());
    process_row(std::move(tok), pending_line);
    pending.clear();
  };

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
    // NCCL_DEBUG=INFO output interleaves with the table, sometimes in the middle of a row (the
    // row's pieces then sit on several lines between log lines): keep what precedes the log.
    if (in_rows) {
      line = cut_nccl_log(line);
      if (line.empty()) continue;
    }
    if (auto h = collective_hint(line)) {
      hint = h;
      if (!any_hint) any_hint = h;
    }
    if (line.front() == '#') {
      flush_row();
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
        start_table(std::move(*layout), line_no, saw_nthread);
        banner_out = banner_in = false;
        continue;
      }
      // The units line under the column header does not end the rows.
      if (in_rows && tables.back().set.points.empty() && body.starts_with("(")) continue;
      if (in_rows && !tables.back().set.points.empty()) in_rows = false;
      if (!in_rows && !body.empty() && tables.empty()) preamble_header.emplace_back(body);
      continue;
    }
    if (!in_rows && std::isdigit(static_cast<unsigned char>(line[0]))) {
      // Rows pasted without their column header: the columns are read off the row.
      if (auto layout = layout_of_row(split_whitespace(line))) {
        Table& t = start_table(std::move(*layout), line_no, false);  // no trailer is owed
        t.set.warnings.push_back(fmt::format("no column header: the columns were read off the row at line {} ({} {})",
                                             line_no, fmt::join(t.layout.leading, " "),
                                             t.layout.groups.size() == 2 ? "and two placements" : "and one placement"));
      }
    }
    if (!in_rows) continue;  // launcher or NCCL chatter outside a table
    if (is_noise(line)) continue;
    const std::vector<std::string_view> tok = split_whitespace(line);
    const size_t width = tables.back().layout.width();
    if (pending.empty() && !std::isdigit(static_cast<unsigned char>(tok[0][0])))
      throw InputError(SourceLocation{source, line_no, 0}, "row",
                       fmt::format("expected a result row starting with the size in bytes, got "
                                   "\"{}\" (garbled output?)",
                                   line.substr(0, 40)));
    // A row's pieces are gathered until they make a whole row; a piece that would overfill it
    // starts the next row.
    if (!pending.empty() && pending.size() + tok.size() > width) flush_row();
    if (pending.empty()) pending_line = line_no;
    for (std::string_view t : tok) pending.emplace_back(t);
    if (pending.size() >= width) flush_row();
  }
  flush_row();
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
    // Which collective: what the output or the file name says, else what the columns and the
    // ratio of bus to algorithm bandwidth (nccl-tests' factor for the collective on n ranks)
    // allow, else the caller's choice when that ratio bears it out.
    const int ranks = !t.rank_lines.empty() ? static_cast<int>(t.rank_lines.size()) : t.threads_times_gpus;
    std::vector<double> ratios;
    for (const MeasuredPoint& p : t.set.points)
      if (p.algbw_gbps >= 1.0) ratios.push_back(p.busbw_gbps / p.algbw_gbps);  // two decimals: enough digits
    std::optional<double> factor;
    if (!ratios.empty()) {
      std::nth_element(ratios.begin(), ratios.begin() + static_cast<ptrdiff_t>(ratios.size() / 2), ratios.end());
      factor = ratios[ratios.size() / 2];
    }
    auto fits = [&](CollectiveKind k) {
      if (!factor || ranks < 2) return true;
      const double want = bus_factor(k, ranks);
      return std::abs(*factor - want) <= 0.03 * want + 0.01;
    };
    std::optional<CollectiveKind> kind = t.hint;
    if (!kind) kind = file_name_hint(source);
    if (!kind) kind = any_hint;
    if (!kind && t.redop_empty) kind = CollectiveKind::all_to_all;  // old alltoall_perf's blank op
    if (!kind && !t.layout.has(Field::redop) && !t.layout.has(Field::root) && factor && ranks >= 2 &&
        fits(CollectiveKind::all_gather)) {
      kind = CollectiveKind::all_gather;  // the oldest all_gather_perf prints neither column
      t.set.warnings.push_back("the output does not name its program; read as all_gather (no reduction, no root, "
                               "bus bandwidth (n-1)/n of the algorithm bandwidth)");
    }
    if (!kind && options.collective) {
      if (!fits(*options.collective)) {
        throw InputError(SourceLocation{source, t.header_line, 0}, "collective",
                         fmt::format("the output does not name its program and its bus bandwidth is {:.3f} of the "
                                     "algorithm bandwidth, where {} on {} ranks has {:.3f} ({}): name the "
                                     "collective with --collective or put the program name in the file name",
                                     *factor, collectives::name(*options.collective), ranks,
                                     bus_factor(*options.collective, ranks), options.collective_from));
      }
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
      for (CollectiveKind k : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter}) {
        if (kind || !fits(k)) continue;
        kind = k;
        t.set.warnings.push_back(fmt::format("the output does not name its program; read as {} (a reduction "
                                             "without root{})",
                                             collectives::name(k), factor ? ", by its bus bandwidth factor" : ""));
      }
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
    t.set.ranks = ranks;
    // A script that runs one size a run (nccl-tests -b S -e S in a loop) writes one table a
    // size: runs of one collective on the same ranks whose sizes do not repeat are one sweep.
    if (!out.empty()) {
      MeasurementSet& prev = out.back();
      const bool same_run = prev.collective == t.set.collective && prev.ranks == t.set.ranks &&
                            prev.gpus_per_thread == t.set.gpus_per_thread && prev.nodes == t.set.nodes;
      const bool sizes_new = std::none_of(t.set.points.begin(), t.set.points.end(), [&](const MeasuredPoint& p) {
        return std::any_of(prev.points.begin(), prev.points.end(),
                           [&](const MeasuredPoint& q) { return q.size_bytes == p.size_bytes; });
      });
      if (same_run && sizes_new) {
        prev.points.insert(prev.points.end(), t.set.points.begin(), t.set.points.end());
        prev.avg_busbw_gbps.reset();  // each run's trailer averages its own sizes only
        for (std::string& w : t.set.warnings) {
          if (std::find(prev.warnings.begin(), prev.warnings.end(), w) == prev.warnings.end()) prev.warnings.push_back(w);
        }
        continue;
      }
    }
    out.push_back(std::move(t.set));
  }
  return out;
}

}  // namespace dtsim::validation
