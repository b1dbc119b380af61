#include "engine/provider/resource.h"

#include <algorithm>
#include <charconv>

#include "engine/core/strings.h"

namespace plinth {

std::string node_name(const std::string& pool, int index) { return pool + "-" + std::to_string(index); }

std::string make_address(const std::string& type, const std::string& name, int index) {
  std::string a;
  a.reserve(type.size() + name.size() + 8);
  a += type;
  a += '.';
  a += name;
  if (index >= 0) {
    a += '[';
    a += std::to_string(index);
    a += ']';
  }
  return a;
}

std::optional<AddressParts> parse_address(const std::string& address) {
  // TYPE is two dot-separated words (provider.kind); NAME may not contain '['.
  size_t first = address.find('.');
  if (first == std::string::npos) return std::nullopt;
  size_t second = address.find('.', first + 1);
  if (second == std::string::npos || second == first + 1) return std::nullopt;
  AddressParts p;
  p.type = address.substr(0, second);
  std::string rest = address.substr(second + 1);
  size_t br = rest.find('[');
  if (br == std::string::npos) {
    p.name = rest;
  } else {
    if (rest.back() != ']') return std::nullopt;
    p.name = rest.substr(0, br);
    std::string idx = rest.substr(br + 1, rest.size() - br - 2);
    int v = 0;
    auto r = std::from_chars(idx.data(), idx.data() + idx.size(), v);
    if (r.ec != std::errc{} || r.ptr != idx.data() + idx.size() || v < 0) return std::nullopt;
    p.index = v;
  }
  if (p.name.empty()) return std::nullopt;
  return p;
}

void to_json(Json& j, const Resource& r) {
  j = Json::object();
  j["address"] = r.address;
  j["type"] = r.type;
  j["name"] = r.name;
  j["index"] = r.index;
  j["provider"] = r.provider;
  j["source"] = r.source;
  j["depends_on"] = r.depends_on;
  j["attributes"] = r.attributes;
  j["computed"] = r.computed;
}

namespace {

/// Names read back from a state, a plan file or a plugin are printed as they
/// are: one holding a control character, an escape sequence or a line break
/// (a forged "Apply complete" line) is refused as damage.
std::string printable(const char* field, std::string s) {
  // Every name plinth writes is printable ASCII, which safe_text leaves as it
  // is: only other text pays for a copy (this runs for every resource of a
  // state, four times).
  const bool ascii = std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  if (!ascii && safe_text(s, false) != s)
    throw WireError("'" + std::string(field) + "' \"" + safe_text(s, false) +
                    "\" holds control characters or invalid UTF-8, which plinth never writes");
  return s;
}

}  // namespace

void from_json(const Json& j, Resource& r) {
  r = Resource{};
  r.address = printable("address", wire::str(j, "address"));
  if (r.address.empty()) throw WireError("'address' is empty");
  r.type = printable("type", wire::str(j, "type"));
  r.name = printable("name", wire::str(j, "name"));
  int64_t index = wire::integer(j, "index");
  if (index < -1 || index > 100000000) throw WireError("'index' " + std::to_string(index) + " is out of range");
  r.index = static_cast<int>(index);
  r.provider = printable("provider", wire::str(j, "provider"));
  if (j.contains("source") && !j.at("source").is_null()) r.source = j.at("source").get<SourceLoc>();
  r.depends_on = wire::strings(j, "depends_on");
  r.attributes = wire::object(j, "attributes");
  r.computed = wire::object(j, "computed");
}

Resource take_resource(Json& j) {
  Json taken[2];
  const char* fields[2] = {"attributes", "computed"};
  if (j.is_object())
    for (int i = 0; i < 2; ++i)
      if (auto it = j.find(fields[i]); it != j.end() && it->is_object()) {
        taken[i] = std::move(*it);
        *it = Json::object();  // what from_json checks, without the copy
      }
  Resource r = j.get<Resource>();
  if (!taken[0].is_null()) r.attributes = std::move(taken[0]);
  if (!taken[1].is_null()) r.computed = std::move(taken[1]);
  return r;
}

}  // namespace plinth
