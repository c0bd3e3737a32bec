#include "validation/nccl_tests_json.h"

#include <fmt/format.h>

#include <cmath>

#include <filesystem>
#include <set>
#include <nlohmann/json.hpp>

#include "sim/error.h"
#include "validation/text_fields.h"

namespace dtsim::validation {
namespace {

using nlohmann::json;

// The 1-based line and column of byte offset `pos`, for messages about syntax errors.
SourceLocation location_of(std::string_view text, size_t pos, const std::string& source) {
  SourceLocation where{source, 1, 1};
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++where.line;
      where.column = 1;
    } else {
      ++where.column;
    }
  }
  return where;
}

int int_or(const json& obj, const char* key, int fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

}  // namespace

MeasurementSet parse_nccl_tests_json(std::string_view text, const std::string& source,
                                     const NcclTestsParseOptions& options) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // e.byte is 1-based and points just past the offending character.
    size_t pos = e.byte > 0 ? e.byte - 1 : 0;
    bool truncated = pos + 1 >= text.size();
    throw InputError(location_of(text, pos, source), "",
                     truncated ? "the JSON report ends early: the file is truncated"
                               : "the JSON report is not valid JSON here");
  } catch (const json::exception& e) {
    // A number too large for a double (out_of_range 406) is found while parsing, without a place.
    throw InputError(SourceLocation{source, 0, 0}, "", std::string("the JSON report cannot be read: ") + e.what());
  }
  SourceLocation where{source, 0, 0};
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array())
    throw InputError(where, "results", "expected nccl-tests' -J report: an object with a \"results\" list");

  MeasurementSet set;
  set.source = source;

  std::optional<collectives::CollectiveKind> kind;
  if (doc.contains("args") && doc["args"].is_array() && !doc["args"].empty() &&
      doc["args"][0].is_string()) {
    std::string prog = std::filesystem::path(doc["args"][0].get<std::string>()).filename().string();
    kind = parse_collective_name(prog);
    std::string command;
    for (const json& a : doc["args"])
      if (a.is_string()) command += (command.empty() ? "" : " ") + a.get<std::string>();
    set.header.push_back("Command: " + command);
  }
  if (!kind) kind = parse_collective_name(std::filesystem::path(source).stem().string());
  if (!kind) kind = options.collective;
  if (!kind)
    throw InputError(where, "args",
                     "cannot tell which collective the report measures: args[0] does not name a "
                     "*_perf program; pass --collective");
  set.collective = *kind;

  if (doc.contains("nccl_version") && doc["nccl_version"].is_number_integer())
    set.header.push_back(fmt::format("NCCL version code {}", doc["nccl_version"].get<int>()));
  // Each "devices" entry is one process's first rank line; every process drives
  // nthreads * ngpus ranks.
  const json* config = doc.contains("config") && doc["config"].is_object() ? &doc["config"] : nullptr;
  const json* devices = nullptr;
  if (config && config->contains("devices")) devices = &(*config)["devices"];
  else if (doc.contains("devices")) devices = &doc["devices"];
  int per_process = config ? int_or(*config, "nthreads", 1) * int_or(*config, "ngpus", 1) : 1;
  if (config) set.gpus_per_thread = int_or(*config, "ngpus", 0);
  if (set.gpus_per_thread > 1)
    set.warnings.push_back(one_thread_drove_gpus_note(set.gpus_per_thread));
  if (devices && devices->is_array() && !devices->empty()) {
    set.ranks = static_cast<int>(devices->size()) * per_process;
    std::set<std::string> hosts;
    for (const json& d : *devices)
      if (d.is_object() && d.contains("hostname") && d["hostname"].is_string())
        hosts.insert(d["hostname"].get<std::string>());
    set.nodes = static_cast<int>(hosts.size());
  }

  const json& results = doc["results"];
  for (size_t i = 0; i < results.size(); ++i) {
    const json& r = results[i];
    auto key_error = [&](const std::string& key, const std::string& msg) {
      return InputError(where, fmt::format("results[{}].{}", i, key), msg);
    };
    if (!r.is_object()) throw key_error("", "expected an object");
    if (!r.contains("size") || !r["size"].is_number_integer())
      throw key_error("size", "expected an integer size in bytes");
    MeasuredPoint base;
    base.size_bytes = r["size"].get<int64_t>();
    if (r.contains("count") && r["count"].is_number_integer()) base.count = r["count"].get<int64_t>();
    if (base.size_bytes <= 0) continue;
    for (auto [key, placement] : {std::pair{"out_of_place", Placement::out_of_place},
                                  std::pair{"in_place", Placement::in_place}}) {
      if (!r.contains(key) || r[key].is_null()) continue;
      const json& half = r[key];
      if (!half.is_object()) throw key_error(key, "expected an object or null");
      MeasuredPoint p = base;
      p.placement = placement;
      auto num = [&, key = key](const char* k) -> double {
        if (!half.contains(k) || !half[k].is_number())
          throw key_error(fmt::format("{}.{}", key, k), "expected a number");
        const double v = half[k].get<double>();
        if (!(v >= 0) || !std::isfinite(v)) throw key_error(fmt::format("{}.{}", key, k), "expected a number of at least 0");
        return v;
      };
      p.time_us = half.contains("time") ? num("time") : num("cpu_time");
      p.algbw_gbps = num("alg_bw");
      p.busbw_gbps = num("bus_bw");
      if (half.contains("nwrong") && half["nwrong"].is_number())
        p.wrong = static_cast<int64_t>(half["nwrong"].get<double>());
      set.points.push_back(p);
    }
  }
  if (set.points.empty()) throw InputError(where, "results", "the report has no results");
  if (doc.contains("average_bus_bandwidth") && doc["average_bus_bandwidth"].is_object() &&
      doc["average_bus_bandwidth"].contains("bandwidth") &&
      doc["average_bus_bandwidth"]["bandwidth"].is_number())
    set.avg_busbw_gbps = doc["average_bus_bandwidth"]["bandwidth"].get<double>();
  else
    set.warnings.push_back("no average_bus_bandwidth: the run may not have finished");
  return set;
}

}  // namespace dtsim::validation
