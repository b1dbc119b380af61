#pragma once
#include <optional>
#include <string>
#include <vector>

#include "engine/blueprint/blueprint.h"
#include "engine/catalog/catalog.h"
#include "engine/cli/command.h"
#include "engine/core/diagnostic.h"

namespace plinth::cli {

/// A blueprint that loaded and passed domain validation (warnings allowed),
/// with the catalog it was checked against.
struct Loaded {
  bp::Blueprint blueprint;
  catalog::Catalog catalog;
  Diagnostics diagnostics;  ///< warnings (and infos) that were printed
};

/// The catalog: PLINTH_CATALOG_DIR when set, else the one built in.
Result<catalog::Catalog> load_catalog();

/// Loads PATH... (files or directories), runs the domain rules, prints every
/// diagnostic to io.err, and returns nullopt when there was any error.
std::optional<Loaded> load_blueprint(const std::vector<std::string>& paths, Io& io);

/// Prints diagnostics (errors and warnings) to io.err with source excerpts.
void print_diagnostics(const Diagnostics& ds, Io& io);

/// Prints "plinth CMD: message" to io.err and returns kExitFailure.
int fail(Io& io, const std::string& command, const std::string& message);

}  // namespace plinth::cli
