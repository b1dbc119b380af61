#include "engine/core/wire.h"

#include <charconv>
#include <cstring>

#include "engine/core/json_reader.h"

namespace plinth {
namespace wire {

const Json& field(const Json& j, const char* key) {
  if (!j.is_object()) throw WireError("expected an object with '" + std::string(key) + "'");
  auto it = j.find(key);
  if (it == j.end()) throw WireError("'" + std::string(key) + "' is missing");
  return *it;
}

namespace {
[[noreturn]] void wrong(const char* key, const char* what) {
  throw WireError("'" + std::string(key) + "' is not " + what);
}
}  // namespace

std::string str(const Json& j, const char* key) {
  const Json& v = field(j, key);
  if (!v.is_string()) wrong(key, "a string");
  return v.get<std::string>();
}

std::string str_or(const Json& j, const char* key, const std::string& fallback) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return fallback;
  return str(j, key);
}

bool boolean_or(const Json& j, const char* key, bool fallback) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return fallback;
  const Json& v = j.at(key);
  if (!v.is_boolean()) wrong(key, "true or false");
  return v.get<bool>();
}

int64_t integer(const Json& j, const char* key) {
  const Json& v = field(j, key);
  if (!v.is_number_integer()) wrong(key, "an integer");
  return v.get<int64_t>();
}

int64_t integer_or(const Json& j, const char* key, int64_t fallback) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return fallback;
  return integer(j, key);
}

uint64_t unsigned_integer(const Json& j, const char* key) {
  const Json& v = field(j, key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) wrong(key, "a non-negative integer");
  return v.get<uint64_t>();
}

const Json& object(const Json& j, const char* key) {
  const Json& v = field(j, key);
  if (!v.is_object()) wrong(key, "an object");
  return v;
}

const Json& array(const Json& j, const char* key) {
  const Json& v = field(j, key);
  if (!v.is_array()) wrong(key, "an array");
  return v;
}

std::vector<std::string> strings(const Json& j, const char* key) {
  std::vector<std::string> out;
  const Json& a = array(j, key);
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string()) throw WireError("'" + std::string(key) + "[" + std::to_string(i) + "]' is not a string");
    out.push_back(a[i].get<std::string>());
  }
  return out;
}

std::vector<std::string> strings_or(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return {};
  return strings(j, key);
}

}  // namespace wire

void to_json(Json& j, const SourceLoc& loc) { j = loc.str(); }

void from_json(const Json& j, SourceLoc& loc) {
  loc = SourceLoc{};
  if (j.is_object()) {  // plan files of 0.1 wrote {file, line, column}
    loc.file = wire::str_or(j, "file", "");
    loc.line = static_cast<int>(wire::integer_or(j, "line", 0));
    loc.column = static_cast<int>(wire::integer_or(j, "column", 0));
    // What str() cannot write, it does not keep either: a position without a
    // file, a column without a line, anything below 1 means unknown.
    if (loc.file.empty() || loc.line <= 0) loc.line = loc.column = 0;
    if (loc.column < 0) loc.column = 0;
    return;
  }
  if (!j.is_string()) throw WireError("a source location is neither \"file:line:column\" nor an object");
  // "file", "file:line" or "file:line:column"; a file name may itself hold ':'.
  std::string s = j.get<std::string>();
  int nums[2] = {0, 0};
  int found = 0;
  for (int k = 0; k < 2; ++k) {
    size_t c = s.rfind(':');
    if (c == std::string::npos || c == 0) break;
    int n = 0;
    std::string tail = s.substr(c + 1);
    auto [p, ec] = std::from_chars(tail.data(), tail.data() + tail.size(), n);
    // Only a positive decimal is a line or column ("x.yaml:25:-7" is a file named
    // "x.yaml:25:-7"), so that str() writes back exactly what was read.
    if (tail.empty() || tail.front() < '0' || tail.front() > '9' || ec != std::errc() ||
        p != tail.data() + tail.size() || n <= 0)
      break;
    nums[1] = nums[0];
    nums[0] = n;
    ++found;
    s.resize(c);
  }
  loc.file = s;
  if (found >= 1) loc.line = nums[0];
  if (found >= 2) loc.column = nums[1];
}

void to_json(Json& j, const Severity& s) { j = to_string(s); }

void from_json(const Json& j, Severity& s) {
  if (!j.is_string()) throw WireError("a severity is not a string");
  const std::string v = j.get<std::string>();
  if (v == "error") s = Severity::Error;
  else if (v == "warning") s = Severity::Warning;
  else if (v == "info") s = Severity::Info;
  else throw WireError("severity '" + v + "' is not error, warning or info");
}

void to_json(Json& j, const Diagnostic& d) {
  j = {{"code", d.code}, {"severity", d.severity}, {"message", d.message}};
  if (d.loc.known()) j["location"] = d.loc;
  if (!d.address.empty()) j["address"] = d.address;
  if (!d.hint.empty()) j["hint"] = d.hint;
}

void from_json(const Json& j, Diagnostic& d) {
  d = Diagnostic{};
  d.code = wire::str(j, "code");
  d.severity = wire::field(j, "severity").get<Severity>();
  d.message = wire::str(j, "message");
  if (j.contains("location")) d.loc = j.at("location").get<SourceLoc>();
  d.address = wire::str_or(j, "address", "");
  d.hint = wire::str_or(j, "hint", "");
}

const char* to_string(Error::Kind k) {
  switch (k) {
    case Error::Kind::Fatal: return "fatal";
    case Error::Kind::Retryable: return "retryable";
    case Error::Kind::Throttled: return "throttled";
    case Error::Kind::NotFound: return "not_found";
    case Error::Kind::Conflict: return "conflict";
    case Error::Kind::Invalid: return "invalid";
    case Error::Kind::Cancelled: return "cancelled";
    case Error::Kind::DeadlineExceeded: return "deadline_exceeded";
  }
  return "fatal";
}

void to_json(Json& j, const Error& e) {
  j = {{"kind", to_string(e.kind)}, {"message", e.message}};
  if (e.retry_after_ms > 0) j["retry_after_ms"] = e.retry_after_ms;
}

void from_json(const Json& j, Error& e) {
  static const Error::Kind kinds[] = {Error::Kind::Fatal,    Error::Kind::Retryable, Error::Kind::Throttled,
                                      Error::Kind::NotFound, Error::Kind::Conflict,  Error::Kind::Invalid,
                                      Error::Kind::Cancelled, Error::Kind::DeadlineExceeded};
  const std::string kind = wire::str(j, "kind");
  bool known = false;
  for (auto k : kinds)
    if (kind == to_string(k)) {
      e.kind = k;
      known = true;
    }
  if (!known)
    throw WireError("error kind '" + kind +
                    "' is not one of fatal, retryable, throttled, not_found, conflict, invalid, cancelled, "
                    "deadline_exceeded");
  e.message = wire::str(j, "message");
  int64_t after = wire::integer_or(j, "retry_after_ms", 0);
  e.retry_after_ms = after < 0 ? 0 : static_cast<int>(std::min<int64_t>(after, 24LL * 3600 * 1000));
}

size_t json_string_end(std::string_view text, size_t open) {
  for (size_t from = open + 1; from < text.size();) {
    const void* hit = std::memchr(text.data() + from, '"', text.size() - from);
    if (!hit) break;
    const size_t quote = static_cast<size_t>(static_cast<const char*>(hit) - text.data());
    size_t backslashes = 0;
    while (quote - backslashes > open + 1 && text[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return quote;
    from = quote + 1;
  }
  return std::string_view::npos;
}

std::optional<std::string> json_shape_problem(std::string_view text) {
  size_t depth = 0, containers = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      i = json_string_end(text, i);
      if (i == std::string_view::npos) break;
    } else if (c == '[' || c == '{') {
      ++containers;
      if (++depth > kMaxJsonDepth)
        return "nests arrays or objects deeper than " + std::to_string(kMaxJsonDepth) + " levels (at byte " +
               std::to_string(i + 1) + ")";
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  if (containers > 4096 + text.size() / kMinJsonBytesPerContainer)
    return "holds " + std::to_string(containers) + " arrays and objects in " + std::to_string(text.size()) +
           " bytes, more than one per " + std::to_string(kMinJsonBytesPerContainer) +
           " bytes (real documents hold one per 40 or more)";
  return std::nullopt;
}

// Read with simdjson (json_reader.h): Json::parse(text, nullptr, false)'s value.
Json parse_json_or_discard(std::string_view text) {
  if (json_shape_problem(text)) return Json(Json::value_t::discarded);
  try {
    return parse_json_text(text);
  } catch (const Json::exception&) {
    return Json(Json::value_t::discarded);
  }
}

const Json* at_path(const Json& obj, std::string_view dotted) {
  const Json* v = &obj;
  size_t start = 0;
  while (v) {
    const size_t dot = dotted.find('.', start);
    const std::string key(dotted.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (!v->is_object()) return nullptr;
    auto it = v->find(key);
    v = it == v->end() ? nullptr : &*it;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return v;
}

}  // namespace plinth
