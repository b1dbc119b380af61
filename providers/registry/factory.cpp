#include "providers/registry/factory.h"

#include "engine/provider/registry.h"
#include "providers/registry/plugins.h"
#include "providers/registry/registry.h"

namespace plinth {

Status RegistryFactory::resolve(const std::string& name, const bp::ProviderDecl* declared) {
  if (plugins().resolve(name, declared, untrusted_)) return {};
  return Error::invalid(plugins().why(name));
}

const ProviderSchema* RegistryFactory::schema(const std::string& name) { return schema_registry().provider(name); }

std::vector<const ProviderSchema*> RegistryFactory::schemas() { return schema_registry().providers(); }

Result<std::unique_ptr<Provider>> RegistryFactory::make(const std::string& name) {
  const ProviderSchema* s = schema(name);
  if (s && s->source == "built-in") return make_builtin_provider(name);
  return plugins().take(name);
}

}  // namespace plinth
