#pragma once
#include <functional>
#include <string>
#include <vector>

#include "engine/blueprint/blueprint.h"
#include "engine/core/diagnostic.h"
#include "engine/core/result.h"

namespace plinth::bp {

/// What loading produced: the merged blueprint (as much as could be read) and
/// every problem found. The blueprint is usable only when
/// `!has_errors(diagnostics)`.
struct LoadResult {
  Blueprint blueprint;
  Diagnostics diagnostics;
  bool ok() const { return !has_errors(diagnostics); }
};

/// How loading learns about providers it does not know yet.
struct LoadOptions {
  /// Called once per provider name, after every file is read, for each
  /// provider the blueprint declares (`providers:`) and each name a pool uses
  /// that the schema registry does not hold: it makes the provider known
  /// (starts the plugin and registers its schema) or says why it cannot; the
  /// error is reported at the declaration (BP011). `declared` is the
  /// blueprint's declaration, or nullptr. Unset: unknown names are errors.
  std::function<Status(const std::string& name, const ProviderDecl* declared)> resolve_provider;
};

/// Expands the command line's PATH... into blueprint files: a file is taken as
/// is; a directory contributes its *.yaml / *.yml files (sorted, not
/// recursive, skipping waivers.yaml and plinth.*). Missing paths are
/// reported as diagnostics (code BP000).
std::vector<std::string> collect_blueprint_files(const std::vector<std::string>& paths, Diagnostics& diags);

/// Loads and strictly checks plinth/v1 blueprint files, merging several files
/// into one blueprint. Reports, all in one run and each with file:line:column:
/// YAML syntax errors, unknown keys (with "did you mean"), wrong types,
/// missing required fields, duplicate names (also across files), and dangling
/// references (pool -> stack / VLAN / tier / fabric, backup -> tier, ...).
/// Each pool's provider must be one the schema registry knows (after
/// `options.resolve_provider`) that serves the pool's section; keys the
/// section does not define are checked as that provider's settings (type,
/// allowed values, required) and land in the pool's `settings`. A node pool
/// without `provider` gets the section's default provider. Never throws.
LoadResult load_files(const std::vector<std::string>& files, const LoadOptions& options = {});

/// Why `url` cannot be a BMC endpoint, or "" when it can: it must be
/// https:// with a host and no user or password in it (BMC passwords never
/// cross the network in clear text, and never sit in a blueprint). The text
/// never repeats a password.
std::string bmc_endpoint_problem(const std::string& url);

/// Loads from text already in memory (tests, `plan --against`); `name` is used
/// as the file name in locations.
LoadResult load_string(const std::string& text, const std::string& name, const LoadOptions& options = {});

/// Loads several in-memory documents (name, text) as one blueprint.
LoadResult load_strings(const std::vector<std::pair<std::string, std::string>>& docs,
                        const LoadOptions& options = {});

}  // namespace plinth::bp
