#include "validation/calibration_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "sim/error.h"
#include "validation/measurement_reader.h"

namespace dtsim::validation {

std::string how_it_ended(const FitResult& r, const FitOptions& o) {
  return r.converged ? "converged" : fmt::format("stopped at the cap of {}", o.max_iterations);
}

std::string iterations_note(const CrossValidation& cv, const FitOptions& o) {
  std::string note = fmt::format(
      "Levenberg-Marquardt, stopping when a step lowers the cost by less than {:g} of itself or "
      "moves no parameter by more than {:g} (in ln units where its bounds are positive), at most {} "
      "iterations: {} "
      "for the fit on all datasets ({})",
      o.tolerance, o.step_tolerance, o.max_iterations, cv.all.iterations, how_it_ended(cv.all, o));
  int fewest = std::numeric_limits<int>::max(), most = 0, converged = 0, held = 0;
  for (const CrossValidationRow& r : cv.rows) {
    if (r.held_out.values.empty()) continue;  // no leave-one-out fits were run
    fewest = std::min(fewest, r.held_out.iterations);
    most = std::max(most, r.held_out.iterations);
    converged += r.held_out.converged ? 1 : 0;
    ++held;
  }
  if (held > 0)
    note += fmt::format("; {}{} for the fits with one dataset left out, {} of {} converged",
                        fewest == most ? "" : fmt::format("{}-", fewest), most, converged, held);
  return note + ".";
}

std::string fits_table(const CrossValidation& cv, std::span<const FitParameter> fitted, const FitOptions& o) {
  std::ostringstream md;
  md << "| fit | iterations | cost |";
  for (const FitParameter& p : fitted) md << " " << p.name << " |";
  md << "\n| --- | --- | --- |";
  for (size_t j = 0; j < fitted.size(); ++j) md << " ---: |";
  auto row = [&](const std::string& name, const std::string& iterations, const std::string& cost,
                 std::span<const double> values) {
    md << "\n| " << name << " | " << iterations << " | " << cost << " |";
    for (double v : values) md << fmt::format(" {:.4g} |", v);
  };
  std::vector<double> initial;
  for (const FitParameter& p : fitted) initial.push_back(p.initial);
  auto fit = [&](const std::string& name, const FitResult& r) {
    row(name, fmt::format("{} ({})", r.iterations, how_it_ended(r, o)),
        fmt::format("{:.4g} -> {:.4g}", r.initial_cost, r.final_cost), r.values);
  };
  row("hand-set (no fit)", "", "", initial);
  fit("on every table", cv.all);
  for (const CrossValidationRow& r : cv.rows)
    if (!r.held_out.values.empty()) fit("without " + r.dataset, r.held_out);
  md << "\n";
  return md.str();
}

std::string markdown_table(const CrossValidation& cv, const FitOptions& o, size_t parameters,
                           std::string_view points) {
  std::ostringstream md;
  md << "| dataset | " << points << " | default parameters | in-sample | leave-one-out |\n";
  md << "| --- | ---: | ---: | ---: | ---: |\n";
  double n = 0, s0 = 0, s1 = 0, s2 = 0;
  for (const CrossValidationRow& r : cv.rows) {
    md << fmt::format("| {} | {} | {:.1f}% | {:.1f}% | {:.1f}% |\n", r.dataset, r.points,
                      r.initial_pct, r.in_sample_pct, r.leave_one_out_pct);
    n += 1;
    s0 += r.initial_pct;
    s1 += r.in_sample_pct;
    s2 += r.leave_one_out_pct;
  }
  if (n > 0)
    md << fmt::format("| **mean over datasets** | | {:.1f}% | {:.1f}% | {:.1f}% |\n", s0 / n, s1 / n,
                      s2 / n);
  if (n > 0 && points == "rows") {  // tables of very different sizes: the mean over their rows too
    size_t rows = 0;
    double w0 = 0, w1 = 0, w2 = 0;
    for (const CrossValidationRow& r : cv.rows) {
      rows += r.points;
      w0 += static_cast<double>(r.points) * r.initial_pct;
      w1 += static_cast<double>(r.points) * r.in_sample_pct;
      w2 += static_cast<double>(r.points) * r.leave_one_out_pct;
    }
    if (rows > 0) {
      const auto k = static_cast<double>(rows);
      md << fmt::format("| **mean over rows** | {} | {:.1f}% | {:.1f}% | {:.1f}% |\n", rows, w0 / k, w1 / k, w2 / k);
    }
  }
  md << fmt::format("\nErrors are mean |predicted - measured| / measured of time per {}. {} "
                    "parameters fitted; Huber delta {} (ln units), prior weight {}. {}\n",
                    points == "sizes" ? "size" : "row", parameters, o.huber_delta, o.prior_weight,
                    iterations_note(cv, o));
  return md.str();
}

void replace_marked_section(const std::string& path, const std::string& body,
                            std::string_view marker) {
  const std::string begin = fmt::format("<!-- {}:begin -->", marker);
  const std::string end = fmt::format("<!-- {}:end -->", marker);
  std::string doc = read_text_file(path);
  size_t b = doc.find(begin), e = doc.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b)
    throw InputError(SourceLocation{path, 0, 0}, "--markdown",
                     "the document needs the markers " + begin + " and " + end);
  doc = doc.substr(0, b + begin.size()) + "\n" + body + doc.substr(e);
  std::ofstream out(path, std::ios::binary);
  out << doc;
}

}  // namespace dtsim::validation
