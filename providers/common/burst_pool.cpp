#include "providers/common/burst_pool.h"

#include <algorithm>
#include <map>

#include "engine/core/strings.h"
#include "engine/provider/resource.h"
#include "providers/common/json_fields.h"

namespace plinth::cloud {

std::vector<Resource> adopt(const std::vector<Tagged>& listed, const std::string& type, const std::string& provider,
                            const std::vector<Resource>& desired) {
  std::map<std::string, const Resource*> wanted;
  for (const auto& r : desired) wanted[r.address] = &r;
  std::vector<Resource> found;
  for (const auto& t : listed) {
    if (t.address.empty() || t.recorded) continue;
    auto parts = parse_address(t.address);
    if (!parts || parts->type != type) continue;
    Resource r;
    auto w = wanted.find(t.address);
    if (w != wanted.end() && t.attributes_hash == attributes_hash(w->second->attributes)) {
      r = *w->second;  // made from exactly what the blueprint wants: keep it
    } else {
      r.address = t.address;
      r.type = parts->type;
      r.name = parts->name;
      r.index = parts->index;
      r.provider = provider;
      r.attributes = t.attributes;
    }
    r.computed = t.computed;
    found.push_back(std::move(r));
  }
  return found;
}

std::vector<std::string> candidate_types(const Json& attributes, const char* fallback_key) {
  std::vector<std::string> types = {str(attributes, "instance_type")};
  for (const auto& t : strings(attributes, fallback_key))
    if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
  return types;
}

Result<Resource> first_with_capacity(const Resource& desired, const std::vector<std::string>& types, size_t places,
                                     const std::function<Launched(const std::string& type, size_t place)>& launch,
                                     const std::string& hint) {
  std::vector<std::string> refused;
  std::string last_message;
  for (const auto& type : types) {
    for (size_t place = 0; place < places; ++place) {
      Launched out = launch(type, place);
      if (auto* made = std::get_if<Resource>(&out)) return std::move(*made);
      if (auto* e = std::get_if<Error>(&out)) return std::move(*e);
      const auto& no = std::get<NoCapacity>(out);
      refused.push_back(no.where);
      last_message = no.message;
    }
  }
  // Every candidate named (the zone included: a spot refusal does not name
  // it), then the cloud's last answer.
  std::string msg = desired.address + ": no capacity for " + join(refused, ", then ") + ": " + last_message;
  if (types.size() == 1 && places == 1) msg += hint;
  return Error{Error::Kind::Conflict, msg, 0};
}

Result<std::vector<Resource>> discover(
    const Binding& binding, bool configured, const ProviderSchema& schema, const std::vector<Resource>& desired,
    const std::function<Result<std::vector<Tagged>>(const std::string& lineage)>& list) {
  const std::string lineage = binding.get().lineage;
  if (lineage.empty()) return std::vector<Resource>{};
  if (!configured) return Error::fatal("the " + schema.name + " provider was used before configure()");
  std::string type;
  for (const auto& sec : schema.sections)
    if (sec.section == "burst_pools") type = sec.resource_type;
  auto listed = list(lineage);
  if (!listed) return listed.error();
  return adopt(*listed, type, schema.name, desired);
}

}  // namespace plinth::cloud
