// Chrome/Perfetto trace: a report::Timeline as the Trace Event Format JSON that ui.perfetto.dev
// and chrome://tracing open. Each Timeline process (a GPU, "links") becomes a process, each track
// a thread, spans become complete ("X") events and counter samples counter ("C") events, with
// metadata ("M") events naming them. Timestamps are microseconds, exact to the picosecond.
//   report::write_chrome_trace(timeline, {.name = s.name, .scenario = config::dump_scenario(s)},
//   out);
#pragma once

#include <iosfwd>
#include <string>

#include "report/timeline.h"

namespace dtsim::report {

inline constexpr int kTraceSchemaVersion = 1;

struct TraceInfo {
  std::string name;      // the scenario's name
  std::string scenario;  // the resolved scenario (YAML) that produced the trace
};

// Perfetto draws slices on one thread only when they nest (one ends before the next starts, or
// lies inside it). Spans of a track that overlap without nesting (two transfers sharing a link)
// go to extra threads of the same process, named "<track> (2)", "<track> (3)", ... Tracks with
// neither spans nor counters are left out: only busy links get a track.
void write_chrome_trace(const Timeline& timeline, const TraceInfo& info, std::ostream& out);

// Microseconds with up to six decimals, exact: 1'500'000 ps -> "1.5".
std::string trace_microseconds(Time t);

}  // namespace dtsim::report
