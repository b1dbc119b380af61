#pragma once
// Providers for the commands that talk to them: each one created on first
// use (built in, or a plugin process), configured from its options, closed
// when the command ends.
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/apply/executor.h"
#include "engine/apply/refresh.h"
#include "engine/blueprint/blueprint.h"
#include "engine/cli/command.h"
#include "engine/provider/provider.h"

namespace plinth::cli {

/// The flag every command that talks to providers accepts:
/// --provider-option NAME.KEY=VALUE (repeatable).
FlagSpec provider_option_flag();

/// The options of provider `schema` for this command: defaults, the vendor
/// variables it reads, the blueprint's providers.NAME.options, then
/// PLINTH_<NAME>_<KEY> and --provider-option (parse_provider_config).
Result<ProviderConfig> provider_config(const ProviderSchema& schema, const Args& args,
                                       const std::vector<bp::ProviderDecl>& declarations);

class ProviderSet {
 public:
  explicit ProviderSet(const Args& args) : args_(args) {}
  /// Closes every provider it opened.
  ~ProviderSet();
  ProviderSet(const ProviderSet&) = delete;
  ProviderSet& operator=(const ProviderSet&) = delete;

  /// The blueprint's `providers:` declarations (options for them).
  void use_declarations(std::vector<bp::ProviderDecl> declarations) { declarations_ = std::move(declarations); }
  /// Creates and configures every provider in `names` not open yet; the
  /// first error (unknown provider, bad option, a plugin that fails) is
  /// returned and names the provider.
  Status open(const std::set<std::string>& names);
  /// Parses the options of every provider in `used` and of every provider a
  /// --provider-option names, without starting any: a typo, a wrong type or
  /// an unknown provider name is an error before anything runs.
  Status check_options(const std::set<std::string>& used) const;
  /// The state this command works for: given to every provider opened so
  /// far and to those opened later (Provider::bind).
  void bind(const StateBinding& binding);
  /// The provider `name` after open(), or nullptr.
  Provider* get(const std::string& name) const;
  apply::ProviderLookup lookup() const;
  /// Limits of every opened provider, for apply::Options::limits.
  const std::map<std::string, apply::ProviderLimits>& limits() const { return limits_; }
  apply::LimitsLookup limits_lookup() const;

 private:
  const Args& args_;
  std::vector<bp::ProviderDecl> declarations_;
  std::map<std::string, std::unique_ptr<Provider>> providers_;
  std::map<std::string, apply::ProviderLimits> limits_;
  std::optional<StateBinding> binding_;
};

}  // namespace plinth::cli
