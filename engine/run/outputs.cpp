#include "engine/run/outputs.h"

#include <algorithm>
#include <map>
#include <utility>

#include "engine/provider/registry.h"

namespace plinth::run {
namespace {

/// The value of `name` ("a" or "a.b") of `r`: computed first, then attributes.
Json value_of(const Resource& r, const std::string& name) {
  const ResourceType* type = find_resource_type(r.type, r.provider);
  const std::string top = name.substr(0, name.find('.'));
  if (const AttributeSpec* spec = type ? type->find(top) : nullptr; spec && spec->sensitive) return nullptr;
  for (const Json* values : {&r.computed, &r.attributes})
    if (const Json* v = at_path(*values, name)) return *v;
  return nullptr;
}

}  // namespace

Json evaluate_outputs(const bp::Blueprint& blueprint, const std::vector<Resource>& resources) {
  Json out = Json::object();
  if (blueprint.outputs.empty()) return out;
  // Each pool's nodes: the resources of its provider's type for its section
  // (in any order: a value's keys are node names, sorted as JSON keys are).
  std::map<std::pair<std::string, std::string>, std::vector<const Resource*>> by_pool;  // (type, name)
  for (const auto& r : resources)
    if (r.index >= 0) by_pool[{r.type, r.name}].push_back(&r);
  std::vector<std::pair<std::string, const std::vector<const Resource*>*>> pools;  // blueprint order
  auto add = [&](const char* section, const std::string& name, const std::string& provider) {
    const SectionSpec* spec = schema_registry().section(section, provider);
    if (!spec) return;
    auto it = by_pool.find({spec->resource_type, name});
    if (it != by_pool.end()) pools.emplace_back(name, &it->second);
  };
  for (const auto& p : blueprint.node_pools) add("node_pools", p.name, p.provider);
  for (const auto& p : blueprint.burst_pools) add("burst_pools", p.name, p.provider);

  for (const auto& o : blueprint.outputs) {
    Json value = Json::object();
    for (const auto& [pool, nodes] : pools) {
      if (!o.pools.empty() && std::find(o.pools.begin(), o.pools.end(), pool) == o.pools.end()) continue;
      Json members = Json::object();
      for (const Resource* r : *nodes) {
        if (o.single) {
          members[node_name(pool, r->index)] = value_of(*r, o.attributes.front());
          continue;
        }
        Json obj = Json::object();
        for (const auto& a : o.attributes) obj[a] = value_of(*r, a);
        members[node_name(pool, r->index)] = std::move(obj);
      }
      value[pool] = std::move(members);
    }
    if (value.empty()) continue;
    out[o.name] = {{"description", o.description}, {"sensitive", o.sensitive}, {"value", std::move(value)}};
  }
  return out;
}

}  // namespace plinth::run
