#pragma once
// plinth's ProviderFactory: the built-in providers and plugins (started once
// per process, checked against their pins; providers/registry/plugins.h).
#include "engine/blueprint/trust.h"
#include "engine/run/factory.h"

namespace plinth {

class RegistryFactory : public run::ProviderFactory {
 public:
  /// `untrusted`: the operator's trust file in untrusted mode (a plugin
  /// runs only as it pins it), null otherwise.
  explicit RegistryFactory(const bp::TrustFile* untrusted = nullptr) : untrusted_(untrusted) {}
  Status resolve(const std::string& name, const bp::ProviderDecl* declared) override;
  const ProviderSchema* schema(const std::string& name) override;
  std::vector<const ProviderSchema*> schemas() override;
  Result<std::unique_ptr<Provider>> make(const std::string& name) override;

 private:
  const bp::TrustFile* untrusted_;
};

}  // namespace plinth
