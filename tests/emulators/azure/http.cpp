#include "tests/emulators/azure/http.h"

#include <cctype>
#include <cstdio>
#include <ctime>

namespace plinth::azure_emulator {
namespace {

std::tm utc(std::chrono::system_clock::time_point t) {
  std::time_t s = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  return tm;
}

long long fraction(std::chrono::system_clock::time_point t, long long per_second) {
  auto since = t.time_since_epoch();
  auto sub = since - std::chrono::duration_cast<std::chrono::seconds>(since);
  return std::chrono::duration_cast<std::chrono::nanoseconds>(sub).count() / (1000000000LL / per_second);
}

}  // namespace

std::string Request::param(const std::string& name) const {
  for (const auto& [k, v] : params)
    if (iequals(k, name)) return v;
  return "";
}

bool Request::has_param(const std::string& name) const {
  for (const auto& kv : params)
    if (iequals(kv.first, name)) return true;
  return false;
}

std::string Request::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

void Response::set_header(const std::string& name, const std::string& value) {
  for (auto& [k, v] : headers)
    if (iequals(k, name)) {
      v = value;
      return;
    }
  headers.emplace_back(name, value);
}

Response json_response(int status, const json& body) {
  Response r;
  r.status = status;
  r.body = body.dump();
  return r;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool iequals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::string arm_time(std::chrono::system_clock::time_point t) {
  std::tm tm = utc(t);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%07lld+00:00", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, fraction(t, 10000000));
  return buf;
}

std::string iso_millis(std::chrono::system_clock::time_point t) {
  std::tm tm = utc(t);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, fraction(t, 1000));
  return buf;
}

std::string entra_time(std::chrono::system_clock::time_point t) {
  std::tm tm = utc(t);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

std::string us_time(std::chrono::system_clock::time_point t) {
  std::tm tm = utc(t);
  int hour12 = tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%d/%d/%04d %d:%02d:%02d %s", tm.tm_mon + 1, tm.tm_mday, tm.tm_year + 1900, hour12,
                tm.tm_min, tm.tm_sec, tm.tm_hour < 12 ? "AM" : "PM");
  return buf;
}

std::string new_guid(std::mt19937_64& rng) {
  uint64_t a = rng(), b = rng();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx", static_cast<unsigned long long>(a >> 32),
                static_cast<unsigned long long>((a >> 16) & 0xffff), static_cast<unsigned long long>(a & 0xffff),
                static_cast<unsigned long long>(b >> 48), static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

}  // namespace plinth::azure_emulator
