#include "engine/core/duration.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <string>

namespace plinth {

using std::chrono::milliseconds;

Result<milliseconds> parse_duration(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return Error::invalid("invalid duration '" + text + "': " + why +
                          "; write a number with a unit: 500ms, 30s, 2m, 1h or 1m30s");
  };
  if (text.empty()) return bad("it is empty");
  if (text == "0") return milliseconds(0);
  long long total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start) return bad("expected a number at '" + text.substr(start) + "'");
    if (i - start > 9) return bad("the number is too large");
    long long n = std::stoll(text.substr(start, i - start));
    size_t ustart = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string unit = text.substr(ustart, i - ustart);
    long long scale = 0;
    if (unit == "ms") scale = 1;
    else if (unit == "s") scale = 1000;
    else if (unit == "m") scale = 60 * 1000;
    else if (unit == "h") scale = 60 * 60 * 1000;
    else if (unit.empty()) return bad("the number " + std::to_string(n) + " has no unit");
    else return bad("unknown unit '" + unit + "'");
    total += n * scale;
  }
  return milliseconds(total);
}

std::string format_duration(milliseconds d) {
  long long ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  auto part = [&](long long unit, const char* suffix) {
    if (ms >= unit) {
      out += std::to_string(ms / unit) + suffix;
      ms %= unit;
    }
  };
  part(3600000, "h");
  part(60000, "m");
  part(1000, "s");
  part(1, "ms");
  return out;
}

std::optional<std::chrono::system_clock::time_point> parse_utc_time(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end) return std::nullopt;
  if (*end == '.')
    while (std::isdigit(static_cast<unsigned char>(*++end))) {
    }
  const std::string zone = end;
  if (zone != "Z" && zone != "z" && zone != "+00:00") return std::nullopt;
  const time_t t = timegm(&tm);
  if (t == static_cast<time_t>(-1)) return std::nullopt;
  // system_clock counts nanoseconds and ends in 2262: a later time means "does not expire soon".
  return std::chrono::system_clock::from_time_t(std::min<time_t>(t, 7258118400));  // 2200-01-01
}

}  // namespace plinth
