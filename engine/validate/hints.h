// How the domain rules write numbers and name the nearest known values in
// their messages and hints (private to engine/validate).
#pragma once
#include <string>
#include <vector>

namespace plinth::validate {

/// A number as messages write it (printf's %g: 12.5, 0.5, 1200).
std::string num(double v);

/// The known versions just below and above `v`, for "closest versions" hints.
std::string nearby_versions(const std::string& v, const std::vector<std::string>& known);

/// Names the closest candidates: "did you mean 'x'?" for a plausible typo (as
/// did_you_mean decides), else the three nearest. Ties in edit distance go to the
/// longer common prefix, so 'p5.96xlarge' suggests 'p5.48xlarge', not 'g5.16xlarge'.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace plinth::validate
