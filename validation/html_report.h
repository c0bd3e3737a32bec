// The validation page: one self-contained HTML file (inline SVG, no scripts, no network) with,
// per measurement set, measured and predicted bus bandwidth against size on a log-x axis, and the
// per-size error table under it.
//   std::ofstream f("validation.html"); write_html_report(f, comparisons, "h100 2-node");
#pragma once

#include <iosfwd>
#include <span>
#include <string>

#include "validation/comparison.h"

namespace dtsim::validation {

void write_html_report(std::ostream& out, std::span<const Comparison> comparisons,
                       const std::string& title);

}  // namespace dtsim::validation
