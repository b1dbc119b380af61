#pragma once
// The providers of one operation: each created on first use through the
// ProviderFactory, configured from its options, bound to the state, closed
// when the operation ends.
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/apply/executor.h"
#include "engine/apply/refresh.h"
#include "engine/blueprint/blueprint.h"
#include "engine/provider/provider.h"
#include "engine/run/factory.h"
#include "engine/run/options.h"

namespace plinth::run {

/// The options of provider `schema` for this run: defaults, the vendor
/// variables it reads, the blueprint's providers.NAME.options (not the
/// operator-only ones under untrusted mode: an error naming file:line), the
/// trust file's options, then PLINTH_<NAME>_<KEY> and the overrides
/// (parse_provider_config).
Result<ProviderConfig> provider_config(const ProviderSchema& schema, const ProviderOptions& options,
                                       const std::vector<bp::ProviderDecl>& declarations);

class ProviderSet {
 public:
  ProviderSet(ProviderFactory& factory, ProviderOptions options)
      : factory_(factory), options_(std::move(options)) {}
  /// Closes every provider it opened.
  ~ProviderSet();
  ProviderSet(const ProviderSet&) = delete;
  ProviderSet& operator=(const ProviderSet&) = delete;

  ProviderFactory& factory() const { return factory_; }
  /// The blueprint's `providers:` declarations (options for them).
  void use_declarations(std::vector<bp::ProviderDecl> declarations) { declarations_ = std::move(declarations); }
  /// Creates and configures every provider in `names` not open yet; the
  /// first error (unknown provider, bad option, a plugin that fails) is
  /// returned and names the provider.
  Status open(const std::set<std::string>& names);
  /// Parses the options of every provider in `used` and of every provider an
  /// override names, without starting any: a typo, a wrong type or an
  /// unknown provider name is an error before anything runs.
  Status check_options(const std::set<std::string>& used) const;
  /// The state this run works for: given to every provider opened so far
  /// and to those opened later (Provider::bind).
  void bind(const StateBinding& binding);
  /// The provider `name` after open(), or nullptr.
  Provider* get(const std::string& name) const;
  apply::ProviderLookup lookup() const;
  /// Limits of every opened provider, for apply::Options::limits.
  const std::map<std::string, apply::ProviderLimits>& limits() const { return limits_; }
  apply::LimitsLookup limits_lookup() const;

 private:
  ProviderFactory& factory_;
  ProviderOptions options_;
  std::vector<bp::ProviderDecl> declarations_;
  std::map<std::string, std::unique_ptr<Provider>> providers_;
  std::map<std::string, apply::ProviderLimits> limits_;
  std::optional<StateBinding> binding_;
};

/// Providers named by the resources of `desired` and `state`.
std::set<std::string> providers_of(const std::vector<Resource>& desired, const std::vector<Resource>& state);

}  // namespace plinth::run
