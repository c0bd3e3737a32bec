// Timeline: what happened when, in a form every trace and plot writer reads: spans on named
// tracks (a GPU's compute stream, a communicator's stream, a busy link) and sampled counters
// (link utilisation, queue depth). Models append to it; report/ writers turn it into a
// Chrome/Perfetto trace or an HTML page.
//   report::Timeline t;
//   auto track = t.track("node0/gpu0", "compute");
//   t.span(track, "attn_fwd", Time::us(10), Time::us(35));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/units.h"

namespace dtsim::report {

struct Track {
  std::string process;  // groups tracks in the viewer, e.g. "node0/gpu3" or "links"
  std::string thread;   // the track itself, e.g. "compute", "tp-comm", "leaf0->spine1"
};

struct Span {
  uint32_t track = 0;
  std::string name;
  Time start;
  Time end;
  std::string category;  // e.g. "compute", "tp", "dp", "pp", "ep"
};

struct CounterSample {
  uint32_t track = 0;
  std::string name;  // e.g. "utilisation"
  Time at;
  double value = 0;
};

class Timeline {
 public:
  uint32_t track(std::string process, std::string thread) {
    tracks_.push_back({std::move(process), std::move(thread)});
    return static_cast<uint32_t>(tracks_.size() - 1);
  }
  void span(uint32_t track, std::string name, Time start, Time end, std::string category = {}) {
    spans_.push_back({track, std::move(name), start, end, std::move(category)});
  }
  void counter(uint32_t track, std::string name, Time at, double value) {
    counters_.push_back({track, std::move(name), at, value});
  }

  const std::vector<Track>& tracks() const { return tracks_; }
  const std::vector<Span>& spans() const { return spans_; }
  const std::vector<CounterSample>& counters() const { return counters_; }

 private:
  std::vector<Track> tracks_;
  std::vector<Span> spans_;
  std::vector<CounterSample> counters_;
};

}  // namespace dtsim::report
