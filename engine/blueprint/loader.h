#pragma once
#include <string>
#include <vector>

#include "engine/blueprint/blueprint.h"
#include "engine/core/diagnostic.h"

namespace plinth::bp {

/// What loading produced: the merged blueprint (as much as could be read) and
/// every problem found. The blueprint is usable only when
/// `!has_errors(diagnostics)`.
struct LoadResult {
  Blueprint blueprint;
  Diagnostics diagnostics;
  bool ok() const { return !has_errors(diagnostics); }
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
/// Never throws.
LoadResult load_files(const std::vector<std::string>& files);

/// Why `url` cannot be a BMC endpoint, or "" when it can: it must be
/// https:// with a host and no user or password in it (BMC passwords never
/// cross the network in clear text, and never sit in a blueprint). The text
/// never repeats a password.
std::string bmc_endpoint_problem(const std::string& url);

/// Loads from text already in memory (tests, `plan --against`); `name` is used
/// as the file name in locations.
LoadResult load_string(const std::string& text, const std::string& name);

/// Loads several in-memory documents (name, text) as one blueprint.
LoadResult load_strings(const std::vector<std::pair<std::string, std::string>>& docs);

}  // namespace plinth::bp
