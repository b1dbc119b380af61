#pragma once
// The duration syntax of flags and options: 500ms, 30s, 2m, 1h, 1m30s.
#include <chrono>
#include <string>

#include "engine/core/result.h"

namespace plinth {

/// Parses "30s", "2m", "500ms", "1h", "1m30s", "0". The error says what is accepted.
Result<std::chrono::milliseconds> parse_duration(const std::string& text);

/// "30s", "2m", "1m30s", "500ms": the inverse of parse_duration, for messages.
std::string format_duration(std::chrono::milliseconds d);

}  // namespace plinth
