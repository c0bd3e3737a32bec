#include "report/sweep_table.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <istream>
#include <ostream>
#include <set>
#include <sstream>

#include "report/csv_field.h"
#include "report/pareto.h"
#include "sim/error.h"

namespace dtsim::report {
namespace {

// Shortest text that reads back to the same double, so a resumed or merged table is identical.
std::string number(double v) {
  if (std::isnan(v)) return "nan";
  return fmt::format("{}", v);
}

// Splits one CSV record; `in` supplies continuation lines for quoted fields with newlines.
std::vector<std::string> split_record(std::string line, std::istream& in, int& line_no,
                                      const std::string& source) {
  std::vector<std::string> fields;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0;; ++i) {
    if (i == line.size()) {
      if (!quoted) break;
      std::string more;
      if (!std::getline(in, more)) {
        throw InputError(SourceLocation{source, line_no, 0}, "", "a quoted field is not closed");
      }
      ++line_no;
      cur += '\n';
      line = std::move(more);
      i = static_cast<std::size_t>(-1);
      continue;
    }
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(cur));
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  fields.push_back(std::move(cur));
  return fields;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  int line_no = 0;
  if (!s.empty()) out = split_record(s, in, line_no, "");
  return out;
}

}  // namespace

std::vector<std::string> SweepTable::metric_names() const {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const SweepRow& r : rows) {
    for (const auto& [name, value] : r.metrics) {
      if (seen.insert(name).second) names.push_back(name);
    }
  }
  return names;
}

std::optional<std::string> time_metric(const std::vector<std::string>& metric_names) {
  for (const std::string& n : metric_names) {
    if (n.find("time") != std::string::npos) return n;
  }
  if (metric_names.empty()) return std::nullopt;
  return metric_names.front();
}

void mark_pareto(SweepTable& table) {
  const std::optional<std::string> t = time_metric(table.metric_names());
  std::vector<double> time(table.rows.size(), std::nan(""));
  std::vector<double> cost(table.rows.size(), std::nan(""));
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const SweepRow& r = table.rows[i];
    if (!r.error.empty() || !t) continue;
    bool fits = true;  // a training point whose memory estimate exceeds HBM cannot be on the front
    for (const auto& [name, value] : r.metrics) {
      if (name == *t) time[i] = value;
      if (name == "memory_fits" && value == 0) fits = false;
    }
    if (!fits) time[i] = std::nan("");
    cost[i] = r.capex_usd;
  }
  const std::vector<bool> front = pareto_front(time, cost);
  for (std::size_t i = 0; i < table.rows.size(); ++i) table.rows[i].pareto = front[i];
}

void write_sweep_csv(const SweepTable& table, std::ostream& out) {
  out << "# schema_version: " << kSweepSchemaVersion << "\n";
  out << "# sweep: " << table.sweep_file << "\n";
  out << "# base: " << table.base_file << "\n";
  if (table.shard) out << "# shard: " << *table.shard << "\n";
  std::string keys;
  for (const std::string& k : table.varied_keys) {
    if (!keys.empty()) keys += ',';
    keys += csv_field(k);
  }
  out << "# varied_keys: " << keys << "\n";
  out << "# scenario: the resolved base scenario; each row overrides its varied keys\n";
  std::istringstream scenario(table.base_scenario);
  for (std::string line; std::getline(scenario, line);) out << "#   " << line << "\n";

  const std::vector<std::string> metrics = table.metric_names();
  out << "point";
  for (const std::string& k : table.varied_keys) out << ',' << csv_field(k);
  for (const std::string& m : metrics) out << ',' << csv_field(m);
  out << ",capex_usd,power_w,pareto,error\n";
  for (const SweepRow& r : table.rows) {
    out << r.index;
    for (const std::string& v : r.values) out << ',' << csv_field(v);
    for (const std::string& m : metrics) {
      out << ',';
      for (const auto& [name, value] : r.metrics) {
        if (name == m) {
          out << number(value);
          break;
        }
      }
    }
    out << ',' << number(r.capex_usd) << ',' << number(r.power_w) << ',' << (r.pareto ? 1 : 0)
        << ',' << csv_field(r.error) << '\n';
  }
}

void write_sweep_csv_file(const SweepTable& table, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(SourceLocation{path, 0, 0}, "", "cannot write the results file");
    write_sweep_csv(table, out);
    out.flush();
    if (!out) throw InputError(SourceLocation{path, 0, 0}, "", "writing the results file failed");
  }
  std::filesystem::rename(tmp, path);
}

SweepTable read_sweep_csv(std::istream& in, const std::string& source) {
  SweepTable t;
  int line_no = 0;
  bool in_scenario = false;
  bool have_keys = false;
  std::vector<std::string> header;
  auto fail = [&](const std::string& key, const std::string& what) {
    throw InputError(SourceLocation{source, line_no, 0}, key, what);
  };
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      auto field = [&](std::string_view name) -> std::optional<std::string> {
        const std::string prefix = "# " + std::string(name) + ": ";
        if (line.rfind(prefix, 0) != 0) return std::nullopt;
        return line.substr(prefix.size());
      };
      if (in_scenario && line.rfind("#   ", 0) == 0) {
        t.base_scenario += line.substr(4) + "\n";
        continue;
      }
      in_scenario = false;
      if (auto v = field("schema_version")) {
        if (*v != std::to_string(kSweepSchemaVersion)) {
          fail("schema_version", "this table has schema version " + *v + "; this sweep reads " +
                                     std::to_string(kSweepSchemaVersion));
        }
      } else if (auto sweep = field("sweep")) {
        t.sweep_file = *sweep;
      } else if (auto base = field("base")) {
        t.base_file = *base;
      } else if (auto shard = field("shard")) {
        t.shard = *shard;
      } else if (auto keys = field("varied_keys")) {
        t.varied_keys = split_list(*keys);
        have_keys = true;
      } else if (field("scenario")) {
        in_scenario = true;
      }
      continue;
    }
    std::vector<std::string> fields = split_record(line, in, line_no, source);
    if (header.empty()) {
      header = std::move(fields);
      if (!have_keys)
        fail("varied_keys", "missing the '# varied_keys:' line a sweep table starts with");
      const std::size_t k = t.varied_keys.size();
      if (header.size() < k + 5 || header[0] != "point" ||
          std::vector<std::string>(header.begin() + 1, header.begin() + 1 + static_cast<long>(k)) !=
              t.varied_keys ||
          header[header.size() - 4] != "capex_usd" || header.back() != "error") {
        fail("",
             "not a sweep results header (point, varied keys, metrics, capex_usd, power_w, "
             "pareto, error)");
      }
      continue;
    }
    if (fields.size() != header.size()) {
      fail("", "expected " + std::to_string(header.size()) + " fields, got " +
                   std::to_string(fields.size()));
    }
    SweepRow r;
    const std::size_t k = t.varied_keys.size();
    try {
      std::size_t used = 0;
      r.index = std::stoul(fields[0], &used);
      if (used != fields[0].size()) throw std::invalid_argument("");
      for (std::size_t i = 1; i <= k; ++i) r.values.push_back(fields[i]);
      for (std::size_t i = k + 1; i + 4 < header.size(); ++i) {
        if (!fields[i].empty()) r.metrics.emplace_back(header[i], std::stod(fields[i]));
      }
      r.capex_usd = std::stod(fields[header.size() - 4]);
      r.power_w = std::stod(fields[header.size() - 3]);
      r.pareto = fields[header.size() - 2] == "1";
      r.error = fields.back();
    } catch (const std::exception&) {
      fail("", "a number field does not parse");
    }
    t.rows.push_back(std::move(r));
  }
  if (header.empty()) fail("", "no header row: not a sweep results table");
  return t;
}

SweepTable read_sweep_csv_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "", "cannot open the results file");
  return read_sweep_csv(in, path);
}

}  // namespace dtsim::report
