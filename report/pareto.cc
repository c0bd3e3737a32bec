#include "report/pareto.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace dtsim::report {

std::vector<bool> pareto_front(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size()) throw std::logic_error("pareto_front: objectives differ in length");
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isnan(x[i]) && !std::isnan(y[i])) order.push_back(i);
  }
  // Cheapest first; within a cost the fastest first. A group of equal cost is on the front when
  // its best time beats every cheaper group's.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return y[a] != y[b] ? y[a] < y[b] : x[a] < x[b];
  });
  std::vector<bool> front(x.size(), false);
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t g = 0; g < order.size();) {
    std::size_t end = g;
    while (end < order.size() && y[order[end]] == y[order[g]]) ++end;
    const double group_best = x[order[g]];
    if (group_best < best) {
      for (std::size_t k = g; k < end && x[order[k]] == group_best; ++k) front[order[k]] = true;
      best = group_best;
    }
    g = end;
  }
  return front;
}

}  // namespace dtsim::report
