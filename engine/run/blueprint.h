#pragma once
// The first step of every operation: blueprint files -> a validated
// Blueprint, with the catalog it was checked against.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/blueprint/blueprint.h"
#include "engine/catalog/catalog.h"
#include "engine/core/diagnostic.h"
#include "engine/run/events.h"
#include "engine/run/factory.h"

namespace plinth::run {

/// A blueprint that loaded and passed domain validation (warnings allowed),
/// with the catalog it was checked against.
struct Loaded {
  bp::Blueprint blueprint;
  catalog::Catalog catalog;
  Diagnostics diagnostics;  ///< warnings (and infos) that were reported
};

/// The catalog: PLINTH_CATALOG_DIR when set, else the one built in.
Result<catalog::Catalog> load_catalog();

/// What checking a blueprint found, reported nowhere yet.
struct Checked {
  std::optional<Loaded> loaded;       ///< set when it loaded and validated (warnings allowed)
  Diagnostics diagnostics;            ///< every loader and domain-rule diagnostic, sorted
  std::vector<bp::SourceFile> files;  ///< the blueprint files read, with sha256 (also when invalid)
  std::string fatal;                  ///< a problem that is no diagnostic (the catalog cannot be read)
  enum class Stage { Files, Load, Rules } failed_at = Stage::Rules;  ///< where an invalid blueprint stopped
};

/// Loads PATH... (files or directories) and runs the domain rules; the
/// providers it uses are resolved through `factory`.
Checked check_blueprint(const std::vector<std::string>& paths, ProviderFactory& factory);

/// check_blueprint, reporting every diagnostic and (as notes) the error
/// count; nullopt when there was any error. `on_invalid` is called with what
/// was found when the blueprint is invalid (plan --report, audit).
std::optional<Loaded> load_blueprint(const std::vector<std::string>& paths, ProviderFactory& factory,
                                     Events& events,
                                     const std::function<void(const Checked&)>& on_invalid = nullptr);

}  // namespace plinth::run
