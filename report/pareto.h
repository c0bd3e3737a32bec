// Pareto front: the points no other point beats on both objectives at once. A sweep marks the
// front of iteration time against capex, the only points worth a planner's attention:
//   std::vector<bool> front = report::pareto_front(times, costs);   // both minimised
#pragma once

#include <span>
#include <vector>

namespace dtsim::report {

// front[i] is true when no j has x[j] <= x[i] and y[j] <= y[i] with one of them strictly less.
// Equal points are all on the front. A NaN in either objective keeps a point off it.
std::vector<bool> pareto_front(std::span<const double> x, std::span<const double> y);

}  // namespace dtsim::report
