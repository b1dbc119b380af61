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

/// Where the first byte that is not valid UTF-8 is: its byte offset, or
/// nullopt when all of `text` is valid UTF-8 (overlong forms, surrogates and
/// code points above U+10FFFF are invalid, as RFC 3629 says).
std::optional<size_t> invalid_utf8_offset(std::string_view text);

/// `text` made safe to print to a terminal or a log: C0 control characters
/// (except tab and newline when `keep_tab_newline`), DEL and C1 controls
/// (U+0080-U+009F, which terminals also obey) become `\xNN` / `\u{NN}`, and
/// bytes that are not valid UTF-8 become `\xNN`. Printable text, including
/// non-ASCII, is kept as it is. So an ANSI escape sequence in a blueprint
/// prints as `\x1b[31m` instead of colouring the terminal.
std::string escape_control(std::string_view text, bool keep_tab_newline = true);

/// Compares dotted version strings numerically component by component
/// ("550.54.15" < "550.100"); non-numeric parts compare as strings.
int compare_versions(std::string_view a, std::string_view b);

}  // namespace plinth
