#include "providers/registry/registry.h"

#include <functional>
#include <map>

#include "engine/core/strings.h"
#include "engine/provider/registry.h"
#include "providers/aws/aws_provider.h"
#include "providers/aws/schema.h"
#include "providers/azure/azure_provider.h"
#include "providers/azure/schema.h"
#include "providers/baremetal/redfish_provider.h"
#include "providers/gcp/gcp_provider.h"
#include "providers/gcp/schema.h"
#include "providers/kubernetes/kubernetes_provider.h"
#include "providers/logical/logical_provider.h"

namespace plinth {
namespace {

struct Builtin {
  const ProviderSchema& (*schema)();
  /// nullptr: the schema is known (pools can be planned) but this build has
  /// no implementation yet.
  std::function<std::unique_ptr<Provider>()> make;
};

const std::map<std::string, Builtin>& builtins() {
  static const std::map<std::string, Builtin> table = {
      {"plinth", {&logical::schema, [] { return std::make_unique<logical::LogicalProvider>(); }}},
      {"baremetal", {&baremetal::schema, [] { return std::make_unique<baremetal::RedfishProvider>(); }}},
      {"aws", {&aws::schema, [] { return std::make_unique<aws::AwsProvider>(); }}},
      {"gcp", {&gcp::schema, [] { return std::make_unique<gcp::GcpProvider>(); }}},
      {"azure", {&azure::schema, [] { return std::make_unique<azure::AzureProvider>(); }}},
      {"kubernetes", {&kubernetes::schema, [] { return std::make_unique<kubernetes::KubernetesProvider>(); }}},
  };
  return table;
}

}  // namespace

void register_builtin_providers() {
  for (const auto& [name, b] : builtins()) {
    Status st = schema_registry().add(b.schema());
    if (!st) throw std::logic_error("built-in provider " + name + ": " + st.error().message);
  }
}

Result<std::unique_ptr<Provider>> make_builtin_provider(const std::string& name) {
  auto it = builtins().find(name);
  if (it == builtins().end()) {
    std::string msg = "unknown provider '" + name + "'";
    if (auto hint = did_you_mean(name, builtin_provider_names()); !hint.empty()) msg += "; " + hint;
    return Error::invalid(msg);
  }
  if (!it->second.make)
    return Error::invalid("the " + name + " provider can plan " + name +
                          " resources but this build cannot create or change them yet (" + it->second.schema().docs +
                          ")");
  return it->second.make();
}

std::vector<std::string> builtin_provider_names() {
  std::vector<std::string> names;
  for (const auto& [name, b] : builtins()) names.push_back(name);
  return names;
}

}  // namespace plinth
