#pragma once
// Plinth's own log on stderr, by level: error and warn (the default) are what
// every command prints anyway; info, debug and trace add lines for a person
// debugging a run (docs/logging.md). Set once at start-up from --log-level or
// PLINTH_LOG; read from any thread.
#include <optional>
#include <string>
#include <string_view>

namespace plinth::log {

enum class Level { Error = 0, Warn = 1, Info = 2, Debug = 3, Trace = 4 };

/// "error", "warn", "info", "debug" or "trace" (also "warning"), any case.
std::optional<Level> parse_level(std::string_view text);
const char* to_string(Level level);

void set_level(Level level);
Level level();
/// True when lines of `at` are written.
bool enabled(Level at);

/// Writes "plinth LEVEL: COMPONENT: MESSAGE" on stderr when `at` is enabled,
/// one whole line at a time from any thread. The caller never passes a
/// secret: URLs go through redact_url first.
void write(Level at, std::string_view component, std::string_view message);

/// `url` with what could be a secret replaced by "REDACTED": a user and
/// password before the host, and the value of every query parameter whose
/// name says it holds one (signature, token, secret, password, credential,
/// key, code, sig, auth; any case), as in a pre-signed URL or an OAuth code.
std::string redact_url(const std::string& url);

}  // namespace plinth::log
