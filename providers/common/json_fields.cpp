#include "providers/common/json_fields.h"

#include "engine/core/hash.h"

namespace plinth::cloud {

const Json& field(const Json& j, const char* key) {
  static const Json none;
  if (!j.is_object()) return none;
  auto it = j.find(key);
  return it == j.end() ? none : *it;
}

std::string str(const Json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> strings(const Json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.is_object()) return out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it)
    if (v.is_string() && !v.get<std::string>().empty()) out.push_back(v.get<std::string>());
  return out;
}

Error at(const std::string& address, Error e) {
  e.message = address + ": " + e.message;
  return e;
}

std::string attributes_hash(const Json& attributes) { return sha256_hex(attributes.dump()).substr(0, 16); }

}  // namespace plinth::cloud
