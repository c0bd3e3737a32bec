// What every measurement reader must hand on: sets with rows, each of a positive size and finite,
// non-negative times and bandwidths.
#pragma once

#include <vector>

#include "fuzz/finding.h"
#include "validation/measurement.h"

namespace dtsim::fuzz {

inline void check_sets(const std::vector<validation::MeasurementSet>& sets) {
  for (const validation::MeasurementSet& s : sets) {
    if (s.points.empty()) finding("a measurement set without rows", s.source);
    for (const validation::MeasuredPoint& p : s.points) {
      if (p.size_bytes <= 0) finding("a row of size 0 or less", std::to_string(p.size_bytes));
      check_figure("time_us", p.time_us);
      check_figure("algbw_gbps", p.algbw_gbps);
      check_figure("busbw_gbps", p.busbw_gbps);
    }
  }
}

}  // namespace dtsim::fuzz
