#pragma once
// Where an operation gets its providers: the built-in ones and plugins
// (providers/registry/factory.h implements this for plinth; tests pass a
// fake). The operations never name a provider themselves.
#include <memory>
#include <string>
#include <vector>

#include "engine/blueprint/blueprint.h"
#include "engine/core/result.h"
#include "engine/provider/provider.h"

namespace plinth::run {

class ProviderFactory {
 public:
  virtual ~ProviderFactory() = default;
  /// Makes provider `name` known (a plugin is found, checked and started,
  /// its schema registered); `declared` is the blueprint's declaration of it,
  /// or null. The loader calls this for every provider a blueprint uses.
  virtual Status resolve(const std::string& name, const bp::ProviderDecl* declared) = 0;
  /// The schema of a known provider, or null.
  virtual const ProviderSchema* schema(const std::string& name) = 0;
  /// Every known provider's schema (for "did you mean" hints).
  virtual std::vector<const ProviderSchema*> schemas() = 0;
  /// A new, unconfigured provider `name` (resolved before).
  virtual Result<std::unique_ptr<Provider>> make(const std::string& name) = 0;
};

}  // namespace plinth::run
