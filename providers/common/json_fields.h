#pragma once
// Reading fields of a cloud API's JSON answer without trusting its shape, and
// the small conventions the cloud providers share.
#include <string>
#include <vector>

#include "engine/core/wire.h"
#include "engine/core/result.h"

namespace plinth::cloud {

/// j[key] when j is an object that has that field, else null: for reading
/// nested answers (field(field(op, "error"), "errors")) whatever their shape.
const Json& field(const Json& j, const char* key);

/// j[key] when j is an object and that field is a string, else "".
std::string str(const Json& j, const char* key);

/// The non-empty strings of the array j[key]; empty when j is not an object or
/// the field is not an array.
std::vector<std::string> strings(const Json& j, const char* key);

/// `e` with its message prefixed by the resource address ("ADDRESS: ...").
Error at(const std::string& address, Error e);

/// 16 hex digits of the SHA-256 of the attributes' JSON: what a provider tags
/// an object with to tell whether it still matches the blueprint.
std::string attributes_hash(const Json& attributes);

}  // namespace plinth::cloud
