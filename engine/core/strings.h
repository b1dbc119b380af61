#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plinth {

/// Levenshtein distance (ninja's edit_distance), case-sensitive.
int edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is close enough to be a plausible
/// typo (distance <= max(2, len/3)), otherwise nullopt.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

/// "did you mean 'x'?" or "" when nothing is close; `known` lists every valid
/// name after it when there is no close match and the list is short (<= 12).
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

/// Joins with `sep`.
std::string join(const std::vector<std::string>& parts, std::string_view sep);

/// Compares dotted version strings numerically component by component
/// ("550.54.15" < "550.100"); non-numeric parts compare as strings.
int compare_versions(std::string_view a, std::string_view b);

}  // namespace plinth
