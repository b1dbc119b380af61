#pragma once
#include <functional>
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

/// What checking a blueprint found, printed nowhere yet.
struct Checked {
  std::optional<Loaded> loaded;      ///< set when it loaded and validated (warnings allowed)
  Diagnostics diagnostics;           ///< every loader and domain-rule diagnostic, sorted
  std::vector<bp::SourceFile> files;  ///< the blueprint files read, with sha256 (also when invalid)
  std::string fatal;                 ///< a problem that is no diagnostic (the catalog cannot be read)
  enum class Stage { Files, Load, Rules } failed_at = Stage::Rules;  ///< where an invalid blueprint stopped
};

/// Loads PATH... (files or directories) and runs the domain rules.
Checked check_blueprint(const std::vector<std::string>& paths);

/// check_blueprint, printing every diagnostic (and the error count) to
/// io.err; nullopt when there was any error.
std::optional<Loaded> load_blueprint(const std::vector<std::string>& paths, Io& io);

/// load_blueprint for commands that write reports (audit, plan --report):
/// when the blueprint is invalid, `report` is called with what was found
/// (before returning nullopt), so CI still gets a report.
std::optional<Loaded> load_blueprint(const std::vector<std::string>& paths, Io& io,
                                     const std::function<void(const Checked&)>& report);

/// Prints diagnostics (errors and warnings) to io.err with source excerpts.
void print_diagnostics(const Diagnostics& ds, Io& io);

/// Prints "plinth CMD: message" to io.err and returns kExitFailure.
int fail(Io& io, const std::string& command, const std::string& message);

}  // namespace plinth::cli
