#include "providers/registry/registry.h"

#include <functional>
#include <map>

#include "engine/core/strings.h"
#include "providers/baremetal/redfish_provider.h"

namespace plinth {
namespace {

using Factory = std::function<Result<std::unique_ptr<Provider>>(const ProviderConfig&)>;

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"baremetal",
       [](const ProviderConfig& c) -> Result<std::unique_ptr<Provider>> {
         auto o = baremetal::parse_options(c.options);
         if (!o) return o.error();
         return std::unique_ptr<Provider>(std::make_unique<baremetal::RedfishProvider>(std::move(*o)));
       }},
  };
  return table;
}

}  // namespace

Result<std::unique_ptr<Provider>> make_provider(const ProviderConfig& config) {
  auto it = factories().find(config.name);
  if (it == factories().end()) {
    std::string msg = "unknown provider '" + config.name + "'";
    if (auto hint = did_you_mean(config.name, provider_names()); !hint.empty()) msg += "; " + hint;
    return Error::invalid(msg);
  }
  return it->second(config);
}

std::vector<std::string> provider_names() {
  std::vector<std::string> names;
  for (const auto& [name, f] : factories()) names.push_back(name);
  return names;
}

}  // namespace plinth
