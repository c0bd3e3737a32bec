#include "report/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <ostream>
#include <vector>

namespace dtsim::report {
namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Splits a track's spans into lanes in which every pair of spans is disjoint or nested.
std::vector<int> assign_lanes(const std::vector<const Span*>& spans) {
  std::vector<std::size_t> order(spans.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (spans[a]->start != spans[b]->start) return spans[a]->start < spans[b]->start;
    return spans[a]->end > spans[b]->end;  // the enclosing span first
  });
  std::vector<std::vector<Time>> open;  // per lane: ends of the spans still open, innermost last
  std::vector<int> lane(spans.size(), 0);
  for (const std::size_t i : order) {
    const Span& s = *spans[i];
    std::size_t l = 0;
    for (; l < open.size(); ++l) {
      auto& stack = open[l];
      while (!stack.empty() && stack.back() <= s.start) stack.pop_back();
      if (stack.empty() || s.end <= stack.back()) break;
    }
    if (l == open.size()) open.emplace_back();
    open[l].push_back(s.end);
    lane[i] = static_cast<int>(l);
  }
  return lane;
}

}  // namespace

std::string trace_microseconds(Time t) {
  const int64_t ps = t.ps();
  const bool negative = ps < 0;
  const uint64_t mag = negative ? 0 - static_cast<uint64_t>(ps) : static_cast<uint64_t>(ps);
  std::string out = fmt::format("{}{}", negative ? "-" : "", mag / 1000000);
  uint64_t frac = mag % 1000000;
  if (frac != 0) {
    std::string digits = fmt::format("{:06}", frac);
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out;
}

void write_chrome_trace(const Timeline& timeline, const TraceInfo& info, std::ostream& out) {
  const auto& tracks = timeline.tracks();
  std::vector<std::vector<const Span*>> spans(tracks.size());
  std::vector<bool> busy(tracks.size(), false);
  for (const Span& s : timeline.spans()) {
    if (s.track < tracks.size()) {
      spans[s.track].push_back(&s);
      busy[s.track] = true;
    }
  }
  for (const CounterSample& c : timeline.counters()) {
    if (c.track < tracks.size()) busy[c.track] = true;
  }

  // Processes numbered in order of first appearance; threads numbered within the whole trace so
  // a tid never repeats across processes.
  std::map<std::string, int> pid_of;
  std::vector<std::string> process_names;
  for (std::size_t t = 0; t < tracks.size(); ++t) {
    if (busy[t] &&
        pid_of.emplace(tracks[t].process, static_cast<int>(process_names.size()) + 1).second) {
      process_names.push_back(tracks[t].process);
    }
  }

  std::vector<std::string> events;
  for (std::size_t p = 0; p < process_names.size(); ++p) {
    const int pid = static_cast<int>(p) + 1;
    events.push_back(
        fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})",
                    pid, json_string(process_names[p])));
    events.push_back(fmt::format(
        R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
        pid, pid));
  }
  int next_tid = 1;
  for (std::size_t t = 0; t < tracks.size(); ++t) {
    if (!busy[t]) continue;
    const int pid = pid_of.at(tracks[t].process);
    const std::vector<int> lanes = assign_lanes(spans[t]);
    const int lane_count = spans[t].empty() ? 1 : *std::max_element(lanes.begin(), lanes.end()) + 1;
    const int first_tid = next_tid;
    next_tid += lane_count;
    for (int l = 0; l < lane_count; ++l) {
      const std::string name =
          l == 0 ? tracks[t].thread : fmt::format("{} ({})", tracks[t].thread, l + 1);
      events.push_back(
          fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})",
                      pid, first_tid + l, json_string(name)));
      events.push_back(fmt::format(
          R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
          pid, first_tid + l, first_tid + l));
    }
    for (std::size_t i = 0; i < spans[t].size(); ++i) {
      const Span& s = *spans[t][i];
      const Time dur = s.end > s.start ? s.end - s.start : Time::zero();
      events.push_back(fmt::format(
          R"({{"ph":"X","name":{},"cat":{},"ts":{},"dur":{},"pid":{},"tid":{}}})",
          json_string(s.name), json_string(s.category.empty() ? "span" : s.category),
          trace_microseconds(s.start), trace_microseconds(dur), pid, first_tid + lanes[i]));
    }
  }
  for (const CounterSample& c : timeline.counters()) {
    if (c.track >= tracks.size() || !std::isfinite(c.value)) continue;  // JSON has no NaN
    const Track& tr = tracks[c.track];
    events.push_back(fmt::format(R"({{"ph":"C","name":{},"ts":{},"pid":{},"args":{{{}:{}}}}})",
                                 json_string(tr.thread + " " + c.name), trace_microseconds(c.at),
                                 pid_of.at(tr.process), json_string(c.name),
                                 fmt::format("{}", c.value)));
  }

  out << "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"schema_version\":" << kTraceSchemaVersion
      << ",\"generator\":\"dtsim\",\"name\":" << json_string(info.name)
      << ",\"scenario\":" << json_string(info.scenario) << "},\n\"traceEvents\":[\n";
  for (std::size_t i = 0; i < events.size(); ++i)
    out << events[i] << (i + 1 < events.size() ? ",\n" : "\n");
  out << "]}\n";
}

}  // namespace dtsim::report
