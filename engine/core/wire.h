#pragma once
// The one JSON wire format of Plinth's value types (nlohmann adl_serializer
// functions next to each type) and the typed field access their from_json
// functions share. A document that does not match throws WireError naming
// the field; callers at a boundary (state, plan files, plugins) catch it and
// add where the document came from.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/diagnostic.h"
#include "engine/core/result.h"
#include "engine/core/source_location.h"

namespace plinth {

using Json = nlohmann::json;

/// How deeply arrays and objects may nest in JSON that plinth reads from
/// outside (state and plan files, BMC, cloud and plugin answers). Real
/// documents nest a few dozen levels at most; deeper input is refused before
/// it is parsed, so it can neither overflow the stack of the recursive code
/// that walks, copies and prints values nor cost memory out of proportion to
/// its size (docs/security.md).
inline constexpr size_t kMaxJsonDepth = 256;

/// At most one array or object per this many bytes of input (beyond the
/// first 4,096): real documents hold one per 40 bytes or more (a plan or a
/// state about 90, a Redfish resource about 100), while "[[],[],...]" holds
/// one per 3 and would cost some 25 times its size once parsed.
inline constexpr size_t kMinJsonBytesPerContainer = 24;

/// The offset of the quote that closes the JSON string whose opening quote
/// is at `open` (a quote after an odd number of backslashes is part of the
/// string), or npos when the text ends first. Quotes are found with memchr:
/// strings are most of the bytes of a state or plan file.
size_t json_string_end(std::string_view text, size_t open);

/// Why `text`, JSON from outside, is refused before it is parsed: it opens
/// its (kMaxJsonDepth + 1)-th nested array or object ("nests arrays or
/// objects deeper than 256 levels (at byte N)"), or holds more arrays and
/// objects than kMinJsonBytesPerContainer allows ("holds N arrays and
/// objects in M bytes, ..."); nullopt when neither. Counts only brackets
/// outside strings; one pass, no allocation.
std::optional<std::string> json_shape_problem(std::string_view text);

/// Json::parse(text, nullptr, false) for input from outside: a discarded
/// value (is_discarded()) for text that is not JSON or that
/// json_shape_problem refuses.
Json parse_json_or_discard(std::string_view text);

/// A JSON document that does not have the expected shape; what() names the
/// field ("'index' is not an integer").
struct WireError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace wire {

/// The value of `key` in object `j`; throws WireError when `j` is not an
/// object or the key is missing.
const Json& field(const Json& j, const char* key);
std::string str(const Json& j, const char* key);
std::string str_or(const Json& j, const char* key, const std::string& fallback);
bool boolean_or(const Json& j, const char* key, bool fallback);
int64_t integer(const Json& j, const char* key);
int64_t integer_or(const Json& j, const char* key, int64_t fallback);
uint64_t unsigned_integer(const Json& j, const char* key);
const Json& object(const Json& j, const char* key);
const Json& array(const Json& j, const char* key);
std::vector<std::string> strings(const Json& j, const char* key);
std::vector<std::string> strings_or(const Json& j, const char* key);
/// Runs `f` and prefixes a WireError's message with `where` ("resources[3]: ").
template <typename F>
auto within(const std::string& where, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const WireError& e) {
    throw WireError(where + ": " + e.what());
  }
}

}  // namespace wire

/// SourceLoc as "file:line:column"; reads that string or {file, line, column}.
void to_json(Json& j, const SourceLoc& loc);
void from_json(const Json& j, SourceLoc& loc);
/// "error" | "warning" | "info".
void to_json(Json& j, const Severity& s);
void from_json(const Json& j, Severity& s);
/// {code, severity, message, location?, address?, hint?}
void to_json(Json& j, const Diagnostic& d);
void from_json(const Json& j, Diagnostic& d);
/// {kind, message, retry_after_ms?}; kind is "fatal", "retryable",
/// "throttled", "not_found", "conflict", "invalid", "cancelled" or
/// "deadline_exceeded".
const char* to_string(Error::Kind k);
void to_json(Json& j, const Error& e);
void from_json(const Json& j, Error& e);

/// The value at a dotted path ("bmc.credentials", "bios.SriovEnable") of
/// `obj`, or nullptr when a part is missing or not an object.
const Json* at_path(const Json& obj, std::string_view dotted);

}  // namespace plinth
