#include "engine/provider/registry.h"

#include <algorithm>
#include <atomic>

namespace plinth {

Status SchemaRegistry::add(ProviderSchema schema) {
  if (auto st = check_schema(schema); !st) return st;
  for (auto& t : schema.resource_types) t.provider = schema.name;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = by_name_.find(schema.name); it != by_name_.end()) {
    if (*it->second == schema) return {};
    return Error::invalid("provider '" + schema.name + "' is defined twice: by " + it->second->source + " and by " +
                          schema.source + "; remove one of them");
  }
  for (const auto& sec : schema.sections) {
    if (!sec.is_default) continue;
    for (const auto& [name, other] : by_name_)
      for (const auto& o : other->sections)
        if (o.section == sec.section && o.is_default)
          return Error::invalid("provider '" + schema.name + "' (" + schema.source + ") wants to serve section '" +
                                sec.section + "' by default, which provider '" + name + "' already does");
  }
  std::string name = schema.name;
  by_name_[name] = std::make_unique<ProviderSchema>(std::move(schema));
  return {};
}

const ProviderSchema* SchemaRegistry::provider(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second.get();
}

std::vector<const ProviderSchema*> SchemaRegistry::providers() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const ProviderSchema*> out;
  for (const auto& [_, s] : by_name_) out.push_back(s.get());
  return out;
}

std::vector<std::string> SchemaRegistry::names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, _] : by_name_) out.push_back(name);
  return out;
}

const ResourceType* SchemaRegistry::resource_type(const std::string& type, const std::string& provider) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!provider.empty()) {
    auto it = by_name_.find(provider);
    return it == by_name_.end() ? nullptr : it->second->resource_type(type);
  }
  for (const auto& [_, s] : by_name_)
    if (const ResourceType* t = s->resource_type(type)) return t;
  return nullptr;
}

const SectionSpec* SchemaRegistry::section(const std::string& section, const std::string& provider) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, s] : by_name_) {
    if (!provider.empty() && name != provider) continue;
    for (const auto& sec : s->sections)
      if (sec.section == section && (!provider.empty() || sec.is_default)) return &sec;
  }
  return nullptr;
}

std::string SchemaRegistry::default_provider(const std::string& section) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, s] : by_name_)
    for (const auto& sec : s->sections)
      if (sec.section == section && sec.is_default) return name;
  return "";
}

std::vector<std::string> SchemaRegistry::providers_for(const std::string& section) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, s] : by_name_)
    for (const auto& sec : s->sections)
      if (sec.section == section) out.push_back(name);
  return out;
}

namespace {
SchemaRegistry& process_registry() {
  static SchemaRegistry registry;
  return registry;
}
std::atomic<SchemaRegistry*> current_registry{nullptr};  // a ScopedSchemaRegistry's, when one lives
}  // namespace

SchemaRegistry& schema_registry() {
  SchemaRegistry* scoped = current_registry.load();
  return scoped ? *scoped : process_registry();
}

ScopedSchemaRegistry::ScopedSchemaRegistry() : previous_(current_registry.exchange(&registry_)) {}

ScopedSchemaRegistry::~ScopedSchemaRegistry() { current_registry.store(previous_); }

std::vector<const ResourceType*> resource_types() {
  std::vector<const ResourceType*> out;
  for (const ProviderSchema* s : schema_registry().providers())
    for (const auto& t : s->resource_types) out.push_back(&t);
  std::stable_sort(out.begin(), out.end(), [](const ResourceType* a, const ResourceType* b) { return a->type < b->type; });
  return out;
}

const ResourceType* find_resource_type(const std::string& type, const std::string& provider) {
  return schema_registry().resource_type(type, provider);
}

}  // namespace plinth
