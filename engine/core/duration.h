#pragma once
// The duration syntax of flags and options: 500ms, 30s, 2m, 1h, 1m30s.
#include <chrono>
#include <optional>
#include <string>

#include "engine/core/result.h"

namespace plinth {

/// Parses "30s", "2m", "500ms", "1h", "1m30s", "0". The error says what is accepted.
Result<std::chrono::milliseconds> parse_duration(const std::string& text);

/// "30s", "2m", "1m30s", "500ms": the inverse of parse_duration, for messages.
std::string format_duration(std::chrono::milliseconds d);

/// An RFC 3339 / ISO 8601 UTC time, "2026-12-06T10:00:00Z" (fractional
/// seconds and "+00:00" accepted), as a time; nullopt for anything else.
/// Times past 2200 are read as 2200 (system_clock ends in 2262).
std::optional<std::chrono::system_clock::time_point> parse_utc_time(const std::string& text);

}  // namespace plinth
