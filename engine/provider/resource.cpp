#include "engine/provider/resource.h"

#include <algorithm>
#include <charconv>

namespace plinth {

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

const AttributeSpec* ResourceType::find(const std::string& attr) const {
  auto it = std::find_if(attributes.begin(), attributes.end(), [&](const AttributeSpec& a) { return a.name == attr; });
  return it == attributes.end() ? nullptr : &*it;
}

const ResourceType* find_resource_type(const std::string& type) {
  const auto& all = resource_types();
  auto it = std::lower_bound(all.begin(), all.end(), type,
                             [](const ResourceType& t, const std::string& k) { return t.type < k; });
  return it != all.end() && it->type == type ? &*it : nullptr;
}

}  // namespace plinth
