#include "report/collective_sweep_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "report/csv_field.h"
#include "report/port_columns.h"

namespace dtsim::report {
namespace {

// Which rows on flows or packets took the closed form's time rather than the network model's
// (SweepRow::floor_from), one line a reason: a user who chose a network model sees where it did
// not set the time.
void write_floor_note(const std::vector<workloads::SweepRow>& rows, std::ostream& out) {
  std::vector<std::string_view> reasons;
  for (const auto& r : rows) {
    if (!r.floor_from.empty() && std::find(reasons.begin(), reasons.end(), r.floor_from) == reasons.end())
      reasons.push_back(r.floor_from);
  }
  for (std::string_view reason : reasons) {
    int n = 0;
    Bytes lo, hi;
    for (const auto& r : rows) {
      if (r.floor_from != reason) continue;
      if (n++ == 0) lo = r.bytes;
      hi = r.bytes;
    }
    out << fmt::format("# {} of {} rows ({} to {} B) take the closed form's time: {}; csv and json give the "
                       "network model's own (network_time_us)\n",
                       n, rows.size(), lo.count(), hi.count(), reason);
  }
}

void write_table(const std::vector<workloads::SweepRow>& rows, std::ostream& out) {
  if (!rows.empty()) {
    const workloads::SweepRow& first = rows.front();
    out << fmt::format("# {} on {} ranks", collectives::name(first.collective), first.ranks);
    if (first.neighbour_copies > 0) {
      out << fmt::format(", beside {} {} on the GPUs after them, in step", first.neighbour_copies,
                         first.neighbour_copies == 1 ? "copy" : "copies");
    }
    out << '\n';
  }
  out << fmt::format("#{:>12} {:>13} {:>9} {:>6} {:>5} {:>11} {:>8} {:>8} {:>16} {:>8}\n", "size",
                     "count", "type", "redop", "root", "time", "algbw", "busbw", "algorithm",
                     "protocol");
  out << fmt::format("#{:>12} {:>13} {:>9} {:>6} {:>5} {:>11} {:>8} {:>8} {:>16} {:>8}\n", "(B)",
                     "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "");
  for (const auto& r : rows) {
    out << fmt::format(
        " {:>12} {:>13} {:>9} {:>6} {:>5} {:>11.2f} {:>8.2f} {:>8.2f} {:>16} {:>8}\n",
        r.bytes.count(), r.count, workloads::nccl_type_name(r.dtype),
        workloads::redop_name(r.collective), r.root, r.time.us(), r.algbw_gbytes, r.busbw_gbytes,
        collectives::name(r.algorithm), collectives::name(r.protocol));
  }
  write_floor_note(rows, out);
}

void write_csv(const std::vector<workloads::SweepRow>& rows, std::ostream& out) {
  out << "collective,size_bytes,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,network_time_us,floor_from\n";
  for (const auto& r : rows) {
    out << fmt::format("{},{},{:.3f},{:.3f},{:.3f},{},{},{},{}\n", collectives::name(r.collective),
                       r.bytes.count(), r.time.us(), r.algbw_gbytes, r.busbw_gbytes,
                       collectives::name(r.algorithm), collectives::name(r.protocol),
                       r.network_time.ps() > 0 ? fmt::format("{:.3f}", r.network_time.us()) : std::string(),
                       csv_field(r.floor_from));
  }
}

void write_json(const std::vector<workloads::SweepRow>& rows, std::ostream& out) {
  nlohmann::json j;
  j["schema_version"] = 1;
  j["kind"] = "collective_sweep";
  auto& arr = j["rows"] = nlohmann::json::array();
  for (const auto& r : rows) {
    arr.push_back({{"collective", collectives::name(r.collective)},
                   {"size_bytes", r.bytes.count()},
                   {"count", r.count},
                   {"type", workloads::nccl_type_name(r.dtype)},
                   {"redop", workloads::redop_name(r.collective)},
                   {"root", r.root},
                   {"ranks", r.ranks},
                   {"time_us", r.time.us()},
                   {"algbw_GBps", r.algbw_gbytes},
                   {"busbw_GBps", r.busbw_gbytes},
                   {"algorithm", collectives::name(r.algorithm)},
                   {"protocol", collectives::name(r.protocol)},
                   {"channels", r.channels},
                   {"neighbour_copies", r.neighbour_copies}});
    if (r.network_time.ps() > 0) arr.back()["network_time_us"] = r.network_time.us();
    if (!r.floor_from.empty()) arr.back()["floor_from"] = std::string(r.floor_from);
  }
  out << j.dump(2) << "\n";
}

}  // namespace

void write_sweep(const std::vector<workloads::SweepRow>& rows, SweepFormat format,
                 std::ostream& out) {
  switch (format) {
    case SweepFormat::table:
      write_table(rows, out);
      return;
    case SweepFormat::csv:
      write_csv(rows, out);
      return;
    case SweepFormat::json:
      write_json(rows, out);
      return;
  }
}

void write_sweep_links(const std::vector<workloads::SweepRow>& rows, const std::vector<SweepLinkLoad>& links,
                       SweepFormat format, std::ostream& out) {
  // The packet model's port columns come with any row that has them; a flow run's table keeps its
  // seven columns.
  const bool ports = std::any_of(links.begin(), links.end(), [](const SweepLinkLoad& l) { return l.load.port.has_value(); });
  if (format == SweepFormat::csv) {
    out << "collective,size_bytes,link,kind,bandwidth_GBps,bytes,utilisation";
    out << (ports ? kPortCsvHeader : "") << '\n';
    for (const auto& l : links) {
      const auto& r = rows.at(l.row);
      out << fmt::format("{},{},{},{},{:.3f},{},{:.5f}", collectives::name(r.collective), r.bytes.count(),
                         csv_field(l.load.name), topology::name(l.load.kind), l.load.bandwidth.gbytes_per_s(),
                         l.load.bytes.count(), l.load.utilisation);
      out << port_csv_cells(l.load.port, ports) << '\n';
    }
  } else if (format == SweepFormat::json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& l : links) {
      const auto& r = rows.at(l.row);
      nlohmann::json row = {{"collective", std::string(collectives::name(r.collective))},
                            {"size_bytes", r.bytes.count()},
                            {"link", l.load.name},
                            {"kind", std::string(topology::name(l.load.kind))},
                            {"bandwidth_GBps", l.load.bandwidth.gbytes_per_s()},
                            {"bytes", l.load.bytes.count()},
                            {"utilisation", l.load.utilisation}};
      add_port_json(row, l.load.port);
      arr.push_back(std::move(row));
    }
    out << nlohmann::json{{"schema_version", 1}, {"links", arr}}.dump(2) << '\n';
  } else {
    throw std::invalid_argument("the link table is written as csv or json");
  }
}

}  // namespace dtsim::report
