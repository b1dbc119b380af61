#pragma once
// Provider options, parsed once and generically from the provider's schema.
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/provider/schema.h"

namespace plinth {

/// A provider's options after parsing: every option of its schema (its own
/// and the common ones) that has a value, typed (string, bool, integer,
/// number, duration in milliseconds, list of strings, map), and where the
/// value came from.
struct ProviderConfig {
  std::string name;
  Json values = Json::object();
  /// option -> "default", "environment AWS_REGION", "blueprint (file:line:col)", "--provider-option"
  std::map<std::string, std::string> origins;

  bool has(const std::string& option) const { return values.contains(option); }
  /// Set by the user (anything but the schema's default).
  bool is_set(const std::string& option) const;
  // Typed reads; an option without a value gives the type's zero value.
  std::string str(const std::string& option) const;
  bool flag(const std::string& option) const;
  int64_t integer(const std::string& option) const;
  double number(const std::string& option) const;
  std::chrono::milliseconds duration(const std::string& option) const;
  std::vector<std::string> list(const std::string& option) const;
};

/// One option value before parsing, and where it was written.
struct OptionInput {
  std::string key;
  std::string value;
  std::string origin;  ///< e.g. "blueprint (bp.yaml:4:7)"
};

/// The variable prefix of provider `name`: "PLINTH_BAREMETAL_" ('-' becomes '_').
std::string option_env_prefix(const std::string& name);
/// The variable that sets option `option` of provider `name`: "PLINTH_BAREMETAL_CA_BUNDLE".
std::string option_var(const std::string& name, const std::string& option);

/// Parses the options of `schema` from, lowest precedence first: the
/// schema's defaults, the vendor variables each option lists (`env`, first
/// set wins), `blueprint` (providers.NAME.options), PLINTH_<NAME>_<KEY>
/// variables and --provider-option NAME.KEY=VALUE `flags` (flags for other
/// providers are skipped). `environment` holds "NAME=VALUE" entries.
/// Errors: a malformed flag (showing the expected form); an unknown option
/// (naming where it was written, with "did you mean"); a value of the wrong
/// type (naming the option, the value and the expected type); a value not in
/// the allowed list; a secret option written in the blueprint.
Result<ProviderConfig> parse_provider_config(const ProviderSchema& schema, const std::vector<std::string>& environment,
                                             const std::vector<OptionInput>& blueprint,
                                             const std::vector<std::string>& flags);

/// This process's environment as "NAME=VALUE" entries.
std::vector<std::string> process_environment();

/// `config`'s values as users may see them: secret options replaced by
/// "(secret)".
Json redacted_options(const ProviderSchema& schema, const ProviderConfig& config);

}  // namespace plinth
