// Writers for validate's results: a per-size table for people, CSV and JSON for scripts. Each
// prints every comparison and the mean and worst error, overall and per measurement set.
//   write_comparison(std::cout, comparisons, ComparisonFormat::table);
#pragma once

#include <iosfwd>
#include <span>

#include "validation/comparison.h"

namespace dtsim::validation {

enum class ComparisonFormat { table, csv, json };

void write_comparison(std::ostream& out, std::span<const Comparison> comparisons,
                      ComparisonFormat format);

// "1KiB", "8MiB", "512B": how sizes read in tables and plots.
std::string format_size(int64_t bytes);

}  // namespace dtsim::validation
