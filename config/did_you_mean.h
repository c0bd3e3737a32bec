// Suggestions for misspelled names: the closest of the valid names by edit distance, when it is
// close enough to be what the user meant.
//   closest_name("nodez", {"nodes", "gpu"}) == "nodes";   // did you mean 'nodes'?
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dtsim::config {

// Levenshtein distance, counting a swap of two neighbouring letters as one edit.
int edit_distance(std::string_view a, std::string_view b);

// The valid name nearest to `given`, or "" when none is within a third of its length (at least
// 2 edits), so that unrelated names are not offered.
std::string closest_name(std::string_view given, const std::vector<std::string_view>& valid);

// "; did you mean 'nodes'?" or "" when nothing is close: appended to error messages.
std::string did_you_mean(std::string_view given, const std::vector<std::string_view>& valid);

// "a, b or c": for messages that list what is accepted.
std::string join_names(const std::vector<std::string_view>& names);

}  // namespace dtsim::config
