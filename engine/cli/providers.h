#pragma once
// Providers for apply / refresh / destroy / plan: their configuration from
// the environment and flags, and the executor's per-provider limits.
#include <map>
#include <memory>
#include <set>
#include <string>

#include "engine/apply/executor.h"
#include "engine/cli/command.h"
#include "engine/provider/provider.h"

namespace plinth::cli {

/// The flag every command that talks to providers accepts:
/// --provider-option NAME.KEY=VALUE (repeatable).
FlagSpec provider_option_flag();

/// The configuration of provider `name`: every environment variable
/// PLINTH_<NAME>_<KEY>=VALUE becomes option <key> (lower case), e.g.
/// PLINTH_BAREMETAL_CA_BUNDLE -> ca_bundle, PLINTH_BAREMETAL_INSECURE=1 ->
/// insecure; then each --provider-option NAME.KEY=VALUE overrides it. A
/// malformed --provider-option is an error that shows the expected form.
Result<ProviderConfig> provider_config(const std::string& name, const Args& args);

/// The executor limits of one provider from its options `concurrency`,
/// `rate` (calls per second) and `burst`; a bad number names the option.
Result<apply::ProviderLimits> provider_limits(const ProviderConfig& config);

/// The providers one command uses, created on first use from
/// provider_config(). "plinth" (logical resources) is never created.
class ProviderSet {
 public:
  explicit ProviderSet(const Args& args) : args_(args) {}
  /// Creates every provider in `names` (except "plinth"); the first error
  /// (unknown provider, bad option) is returned and names the provider.
  Status open(const std::set<std::string>& names);
  /// The provider `name` after open(), or nullptr.
  Provider* get(const std::string& name) const;
  apply::ProviderLookup lookup() const;
  /// Limits of every opened provider, for apply::Options::limits.
  const std::map<std::string, apply::ProviderLimits>& limits() const { return limits_; }

 private:
  const Args& args_;
  std::map<std::string, std::unique_ptr<Provider>> providers_;
  std::map<std::string, apply::ProviderLimits> limits_;
};

}  // namespace plinth::cli
