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

/// `s` with ASCII letters in lower case (HTTP header names, cloud enums).
std::string ascii_lower(std::string_view s);

/// `s` without leading and trailing ASCII white space.
std::string trim(std::string_view s);

/// Joins with `sep`.
std::string join(const std::vector<std::string>& parts, std::string_view sep);

/// Indices as "[0..3, 5, 7, 8]": sorted, runs of three or more as FIRST..LAST.
std::string index_ranges(std::vector<int> indices);

/// Compares dotted version strings numerically component by component
/// ("550.54.15" < "550.100"); non-numeric parts compare as strings.
int compare_versions(std::string_view a, std::string_view b);

/// The length of the well-formed UTF-8 sequence at the start of `s` (1-4),
/// or 0 when `s` does not start with one (a stray continuation byte, an
/// overlong form, a surrogate, a code point above U+10FFFF, a cut sequence).
size_t utf8_sequence_length(std::string_view s);

/// Where the first byte that is not part of a well-formed UTF-8 sequence is
/// (see utf8_sequence_length): its byte offset, or nullopt when all of `s`
/// is valid UTF-8.
std::optional<size_t> invalid_utf8_offset(std::string_view s);

/// True when `s` is well-formed UTF-8 throughout.
bool valid_utf8(std::string_view s);

/// `s` with every byte that is not part of a well-formed UTF-8 sequence
/// replaced by U+FFFD; valid text comes back unchanged.
std::string to_valid_utf8(std::string_view s);

/// Text from an untrusted source (a policy's message, a blueprint value, a
/// file name, a BMC's answer) made safe for terminals, logs, JSON, XML and
/// Markdown: valid UTF-8 (see to_valid_utf8), and every control character
/// (C0, DEL, C1, so also ESC and the CSI that start ANSI escape sequences)
/// but tab and newline when `keep_tab_newline`, the bidirectional overrides
/// (U+202A-U+202E, U+2066-U+2069) and the non-characters U+FFFE/U+FFFF
/// written out as visible escapes: "\x1b", "\u009b", "\u202e"; so an ANSI
/// escape sequence in a blueprint prints as `\x1b[31m` instead of colouring
/// the terminal. Pass keep_tab_newline = false for text that must stay on one
/// line (a position, an address, a map key). Idempotent:
/// safe_text(safe_text(s, k), k) == safe_text(s, k).
std::string safe_text(std::string_view s, bool keep_tab_newline = true);

/// Escapes text for XML and HTML content and attributes (&, <, >, ", ')
/// after safe_text: malformed UTF-8 becomes U+FFFD and control characters
/// (but tab and LF), which XML 1.0 does not allow or which are terminal
/// escapes, become visible escapes ("\x1b").
std::string xml_escape(std::string_view text);

/// True when `text` matches `pattern`: '*' matches any run of characters
/// (none included), '?' any one character, everything else only itself.
/// Iterative ('*' backtracking, O(n*m) at worst, no recursion).
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace plinth
