#include "engine/core/log.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <mutex>

namespace plinth::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::Warn)};
std::mutex g_write;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool secret_name(std::string_view name) {
  const std::string n = lower(name);
  for (const char* word : {"signature", "token", "secret", "password", "passwd", "credential", "key", "code", "sig",
                           "auth"})
    if (n.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace

std::optional<Level> parse_level(std::string_view text) {
  const std::string t = lower(text);
  if (t == "error") return Level::Error;
  if (t == "warn" || t == "warning") return Level::Warn;
  if (t == "info") return Level::Info;
  if (t == "debug") return Level::Debug;
  if (t == "trace") return Level::Trace;
  return std::nullopt;
}

const char* to_string(Level level) {
  switch (level) {
    case Level::Error: return "error";
    case Level::Warn: return "warn";
    case Level::Info: return "info";
    case Level::Debug: return "debug";
    case Level::Trace: return "trace";
  }
  return "warn";
}

void set_level(Level level) { g_level.store(static_cast<int>(level)); }
Level level() { return static_cast<Level>(g_level.load()); }
bool enabled(Level at) { return static_cast<int>(at) <= g_level.load(std::memory_order_relaxed); }

void write(Level at, std::string_view component, std::string_view message) {
  if (!enabled(at)) return;
  std::string line = "plinth ";
  line += to_string(at);
  line += ": ";
  line += component;
  line += ": ";
  // One line each: a message's own line breaks (an error body) are escaped.
  for (char c : message) {
    if (c == '\n') line += "\\n";
    else if (c == '\r') line += "\\r";
    else line += c;
  }
  line += '\n';
  std::lock_guard<std::mutex> g(g_write);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

std::string redact_url(const std::string& url) {
  std::string out = url;
  // scheme://user:password@host -> scheme://REDACTED@host
  if (auto scheme = out.find("://"); scheme != std::string::npos) {
    const size_t start = scheme + 3;
    const size_t end = std::min(out.find_first_of("/?#", start), out.size());
    if (auto at = out.rfind('@', end); at != std::string::npos && at >= start && at < end)
      out.replace(start, at - start, "REDACTED");
  }
  const size_t q = out.find('?');
  if (q == std::string::npos) return out;
  const size_t hash = std::min(out.find('#', q), out.size());
  std::string query = out.substr(q + 1, hash - q - 1), result;
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t amp = std::min(query.find('&', pos), query.size());
    std::string part = query.substr(pos, amp - pos);
    if (auto eq = part.find('='); eq != std::string::npos && secret_name(part.substr(0, eq)))
      part = part.substr(0, eq + 1) + "REDACTED";
    if (!result.empty() || pos > 0) result += '&';
    result += part;
    pos = amp + 1;
  }
  return out.substr(0, q + 1) + result + out.substr(hash);
}

}  // namespace plinth::log
