#pragma once
// The provider schemas this process knows: the built-in providers (added at
// start-up by providers/registry) and the plugins a blueprint uses (added
// when they are started). The engine looks resource types, sections and
// options up here and nowhere else.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/provider/schema.h"

namespace plinth {

class SchemaRegistry {
 public:
  /// Adds `schema` after check_schema(). Refused: a second provider of the
  /// same name, or a second default provider for a section. Re-adding an
  /// identical schema is a no-op.
  Status add(ProviderSchema schema);
  /// The provider `name`, or nullptr.
  const ProviderSchema* provider(const std::string& name) const;
  /// Every provider, by name.
  std::vector<const ProviderSchema*> providers() const;
  std::vector<std::string> names() const;

  /// The resource type `type` as declared by `provider`; with an empty
  /// provider, by the first provider (by name) that declares it. nullptr
  /// when none does.
  const ResourceType* resource_type(const std::string& type, const std::string& provider = "") const;

  /// How provider `provider` serves `section`, or nullptr when it does not.
  /// An empty `provider` means the section's default provider.
  const SectionSpec* section(const std::string& section, const std::string& provider = "") const;
  /// The provider serving `section` by default, "" when none.
  std::string default_provider(const std::string& section) const;
  /// Names of the providers that serve `section`, sorted.
  std::vector<std::string> providers_for(const std::string& section) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<ProviderSchema>> by_name_;  // stable addresses
};

/// The process-wide registry, or the innermost live ScopedSchemaRegistry's.
SchemaRegistry& schema_registry();

/// Replaces the process-wide registry with an empty one of its own while it
/// lives (envoy's scoped test injection): a test registers exactly the
/// schemas it needs, fakes included, and every stage (load, expand, diff,
/// render, validate) sees those; the destructor puts the previous one back.
/// One at a time per process, from one thread, while no operation runs.
class ScopedSchemaRegistry {
 public:
  ScopedSchemaRegistry();
  ~ScopedSchemaRegistry();
  ScopedSchemaRegistry(const ScopedSchemaRegistry&) = delete;
  ScopedSchemaRegistry& operator=(const ScopedSchemaRegistry&) = delete;
  SchemaRegistry& registry() { return registry_; }

 private:
  SchemaRegistry registry_;
  SchemaRegistry* previous_;
};

/// Every resource type of every registered provider, sorted by type (a type
/// two providers declare appears once per provider).
std::vector<const ResourceType*> resource_types();
/// schema_registry().resource_type(type, provider).
const ResourceType* find_resource_type(const std::string& type, const std::string& provider = "");

}  // namespace plinth
