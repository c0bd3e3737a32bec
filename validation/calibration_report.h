// calibrate's reports: how each fit ended, the per-dataset table of a cross-validation (default
// parameters, in-sample, held out) and the table of every fit's values, as markdown, and the
// rewrite of a marked section of a document that holds them among prose.
//   replace_marked_section("docs/validation.md", markdown_table(cv, options, fitted.size()));
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "validation/calibration_fit.h"

namespace dtsim::validation {

// "converged", or "stopped at the cap of N".
std::string how_it_ended(const FitResult& r, const FitOptions& o);

// The stopping rule and how many iterations each fit took, in one sentence.
std::string iterations_note(const CrossValidation& cv, const FitOptions& o);

// The fitted values, one row a fit: the hand-set values (the model before any fit), the fit on
// every dataset, then each fit with one dataset left out.
std::string fits_table(const CrossValidation& cv, std::span<const FitParameter> fitted, const FitOptions& o);

// Each dataset's mean |error| with the default parameters, in-sample and left out, the means over
// datasets (and over rows, where `points` is "rows": training tables of very different sizes),
// and a note on the fit. `points` names what a dataset's errors are over: "sizes" or "rows".
std::string markdown_table(const CrossValidation& cv, const FitOptions& o, size_t parameters,
                           std::string_view points = "sizes");

// Replaces the text between `<!-- MARKER:begin -->` and `<!-- MARKER:end -->` in the document at
// `path` with `body`; InputError naming --markdown where the markers are missing.
void replace_marked_section(const std::string& path, const std::string& body,
                            std::string_view marker = "calibration-table");

}  // namespace dtsim::validation
