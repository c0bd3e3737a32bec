#include "config/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace dtsim::config {

int edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance with three rolling rows.
  const size_t n = a.size(), m = b.size();
  std::vector<int> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= m; ++j) {
      const auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
      int cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      }
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::string closest_name(std::string_view given, const std::vector<std::string_view>& valid) {
  if (given.size() > 64) return "";  // not a typo of a key name; keep the work bounded
  const int limit = std::max(2, static_cast<int>(given.size()) / 3);
  std::string_view best;
  int best_distance = limit + 1;
  size_t best_length_gap = 0;
  for (std::string_view v : valid) {
    int d = edit_distance(given, v);
    // On a tie, a name of the same length is the likelier typo ("nodez" -> "nodes", not "node").
    size_t gap = v.size() > given.size() ? v.size() - given.size() : given.size() - v.size();
    if (d < best_distance || (d == best_distance && !best.empty() && gap < best_length_gap)) {
      best_distance = d;
      best = v;
      best_length_gap = gap;
    }
  }
  return std::string(best);
}

std::string did_you_mean(std::string_view given, const std::vector<std::string_view>& valid) {
  std::string best = closest_name(given, valid);
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

std::string join_names(const std::vector<std::string_view>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace dtsim::config
